package sqlfuncs

import (
	"math"
	"sync/atomic"
)

// EffectiveWeight is exponential decay: weight × exp(−lambda × elapsed).
func EffectiveWeight(weight, lambda, elapsed float64) (float64, error) {
	return effectiveWeight("effective_weight", weight, lambda, elapsed)
}

func effectiveWeight(fn string, weight, lambda, elapsed float64) (float64, error) {
	if err := nonNegative(fn, "weight", weight); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "lambda", lambda); err != nil {
		return 0, err
	}
	e, err := elapsedOf(fn, elapsed)
	if err != nil {
		return 0, err
	}
	return weight * crExp(-lambda*e), nil
}

// HalfLifeWeight halves the weight every halfLife: weight × 0.5^(elapsed/halfLife).
func HalfLifeWeight(weight, halfLife, elapsed float64) (float64, error) {
	return halfLifeWeight("half_life_weight", weight, halfLife, elapsed)
}

func halfLifeWeight(fn string, weight, halfLife, elapsed float64) (float64, error) {
	if err := nonNegative(fn, "weight", weight); err != nil {
		return 0, err
	}
	if err := positive(fn, "half_life", halfLife); err != nil {
		return 0, err
	}
	e, err := elapsedOf(fn, elapsed)
	if err != nil {
		return 0, err
	}
	return weight * crExp2(-e/halfLife), nil
}

// LinearWeight holds the weight for hold, then loses rate per unit of time
// down to zero: a deterministic death time at hold + weight/rate.
func LinearWeight(weight, rate, elapsed, hold float64) (float64, error) {
	return linearWeight("linear_weight", weight, rate, elapsed, hold)
}

func linearWeight(fn string, weight, rate, elapsed, hold float64) (float64, error) {
	if err := nonNegative(fn, "weight", weight); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "rate", rate); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "hold", hold); err != nil {
		return 0, err
	}
	e, err := elapsedOf(fn, elapsed)
	if err != nil {
		return 0, err
	}
	return linearAt(weight, rate, hold, e), nil
}

func linearAt(weight, rate, hold, elapsed float64) float64 {
	if elapsed < hold {
		return weight
	}
	return math.Max(0, weight-float64(rate*(elapsed-hold)))
}

// LinearTier is one parallel component of a multi-linear curve.
type LinearTier struct {
	Weight float64 `json:"weight"`
	Hold   float64 `json:"hold"`
	Rate   float64 `json:"rate"`
}

// MultiLinearWeight sums parallel linear tiers, each with its own weight,
// hold and rate: several timescales with a deterministic death time.
func MultiLinearWeight(tiers []LinearTier, elapsed float64) (float64, error) {
	const fn = "multi_linear_weight"
	e, err := elapsedOf(fn, elapsed)
	if err != nil {
		return 0, err
	}
	return notOverflowing(fn, "tiers_json", multiLinearAt(tiers, e))
}

// notOverflowing rejects a sum too large to represent.
func notOverflowing(fn, arg string, v float64) (float64, error) {
	if math.IsInf(v, 0) {
		return 0, argErr(fn, arg, "sums to more than a float can hold")
	}
	return v, nil
}

func multiLinearAt(tiers []LinearTier, elapsed float64) float64 {
	sum := 0.0
	for _, t := range tiers {
		sum += linearAt(t.Weight, t.Rate, t.Hold, elapsed)
	}
	return sum
}

// PowerLawWeight is the ACT-R style long tail: weight × (1 + elapsed/scale)^(−alpha).
func PowerLawWeight(weight, alpha, elapsed, scale float64) (float64, error) {
	return powerLawWeight("power_law_weight", weight, alpha, elapsed, scale)
}

func powerLawWeight(fn string, weight, alpha, elapsed, scale float64) (float64, error) {
	if err := nonNegative(fn, "weight", weight); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "alpha", alpha); err != nil {
		return 0, err
	}
	if err := positive(fn, "scale", scale); err != nil {
		return 0, err
	}
	e, err := elapsedOf(fn, elapsed)
	if err != nil {
		return 0, err
	}
	return powerLawAt(weight, alpha, scale, e), nil
}

// powerLawAt is weight × (1 + elapsed/scale)^(−alpha), the power taken of
// 1 + elapsed/scale exactly, so a tiny elapsed/scale is not lost.
func powerLawAt(weight, alpha, scale, elapsed float64) float64 {
	return weight * crPow1p(elapsed/scale, -alpha)
}

// Horizon is the elapsed time at which a weight first falls below a
// threshold. Never is true when that never happens.
type Horizon struct {
	At    float64
	Never bool
}

var never = Horizon{Never: true}

// DecayHorizon is when effective_weight(weight, lambda, t) first falls below
// threshold: 0 if it already is, never when lambda or threshold is 0.
func DecayHorizon(weight, lambda, threshold float64) (Horizon, error) {
	const fn = "decay_horizon"
	if err := nonNegative(fn, "weight", weight); err != nil {
		return never, err
	}
	if err := nonNegative(fn, "lambda", lambda); err != nil {
		return never, err
	}
	if err := nonNegative(fn, "threshold", threshold); err != nil {
		return never, err
	}
	return exponentialHorizon(weight, lambda, threshold), nil
}

// exponentialHorizon solves weight × exp(−rate × t) = threshold for t.
func exponentialHorizon(weight, rate, threshold float64) Horizon {
	switch {
	case weight < threshold:
		return Horizon{}
	case rate == 0 || threshold == 0:
		return never
	}
	// Two logs, not log(weight/threshold): the ratio can overflow.
	return finiteHorizon((crLog(weight) - thresholdLog(threshold)) / rate)
}

// lastThresholdLog is the last threshold thresholdLog was asked about and
// its logarithm.
var lastThresholdLog atomic.Pointer[[2]float64]

// thresholdLog is crLog(threshold), remembered: a statement asks for the
// horizons of a million edges against one threshold, and the logarithm is
// half of each one's cost.
func thresholdLog(threshold float64) float64 {
	if last := lastThresholdLog.Load(); last != nil && last[0] == threshold {
		return last[1]
	}
	l := crLog(threshold)
	lastThresholdLog.Store(&[2]float64{threshold, l})
	return l
}

// finiteHorizon treats a time too large to represent as never.
func finiteHorizon(t float64) Horizon {
	if math.IsInf(t, 0) || math.IsNaN(t) {
		return never
	}
	return Horizon{At: t}
}
