package sqlfuncs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
)

// Curve models accepted by curve_weight, curve_horizon and relation policies.
const (
	ModelExponential   = "exponential"
	ModelHalfLife      = "half_life"
	ModelLinear        = "linear"
	ModelDelayedLinear = "delayed_linear"
	ModelMultiLinear   = "multi_linear"
	ModelPowerLaw      = "power_law"
)

// Models lists every curve model name.
var Models = []string{ModelExponential, ModelHalfLife, ModelLinear, ModelDelayedLinear, ModelMultiLinear, ModelPowerLaw}

// Curve is one decay curve, written as JSON such as
// {"model":"half_life","half_life":90} or
// {"model":"multi_linear","tiers":[{"weight":0.6,"hold":0.5,"rate":0.3}]}.
// Times and rates are in the unit of the elapsed time the curve is given.
type Curve struct {
	Model    string       `json:"model"`
	Lambda   float64      `json:"lambda,omitempty"`
	HalfLife float64      `json:"half_life,omitempty"`
	Rate     float64      `json:"rate,omitempty"`
	Hold     float64      `json:"hold,omitempty"`
	Alpha    float64      `json:"alpha,omitempty"`
	Scale    float64      `json:"scale,omitempty"`
	Tiers    []LinearTier `json:"tiers,omitempty"`
}

// ParseCurve reads and validates a curve's JSON; fn and arg name the caller
// in errors.
func ParseCurve(fn, arg, text string) (*Curve, error) {
	var c Curve
	if err := strictUnmarshal(text, &c); err != nil {
		return nil, argErr(fn, arg, "is not a curve: %v", err)
	}
	if err := c.validate(fn, arg); err != nil {
		return nil, err
	}
	if c.Model == ModelPowerLaw && c.Scale == 0 {
		c.Scale = 1
	}
	return &c, nil
}

// ParseTiers reads the tiers of a multi-linear curve from a JSON array.
func ParseTiers(fn, arg, text string) ([]LinearTier, error) {
	var tiers []LinearTier
	if err := strictUnmarshal(text, &tiers); err != nil {
		return nil, argErr(fn, arg, "is not a JSON array of tiers: %v", err)
	}
	if err := validateTiers(fn, arg, tiers); err != nil {
		return nil, err
	}
	return tiers, nil
}

func strictUnmarshal(text string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

func validateTiers(fn, arg string, tiers []LinearTier) error {
	if len(tiers) == 0 {
		return argErr(fn, arg, "has no tiers")
	}
	for i, t := range tiers {
		for _, f := range []struct {
			name string
			v    float64
		}{{"weight", t.Weight}, {"hold", t.Hold}, {"rate", t.Rate}} {
			if err := nonNegative(fn, fmt.Sprintf("%s tier %d %s", arg, i, f.name), f.v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Curve) validate(fn, arg string) error {
	check := func(name string, v float64, ok func(string, string, float64) error) error {
		return ok(fn, arg+" "+name, v)
	}
	var err error
	switch c.Model {
	case ModelExponential:
		err = check("lambda", c.Lambda, nonNegative)
	case ModelHalfLife:
		err = check("half_life", c.HalfLife, positive)
	case ModelLinear, ModelDelayedLinear:
		if err = check("rate", c.Rate, nonNegative); err == nil {
			err = check("hold", c.Hold, nonNegative)
		}
	case ModelMultiLinear:
		err = validateTiers(fn, arg, c.Tiers)
	case ModelPowerLaw:
		if err = check("alpha", c.Alpha, nonNegative); err == nil && c.Scale != 0 {
			err = check("scale", c.Scale, positive)
		}
	default:
		return argErr(fn, arg, "model %q is unknown (want one of %v)", c.Model, Models)
	}
	return err
}

// Weight is the curve's value for a row of the given weight after elapsed
// time. A multi-linear curve's tiers are scaled by weight (1.0 = as written).
func (c *Curve) Weight(weight, elapsed float64) (float64, error) {
	const fn = "curve_weight"
	if err := nonNegative(fn, "weight", weight); err != nil {
		return 0, err
	}
	e, err := elapsedOf(fn, elapsed)
	if err != nil {
		return 0, err
	}
	switch c.Model {
	case ModelExponential:
		return weight * math.Exp(-c.Lambda*e), nil
	case ModelHalfLife:
		return weight * math.Exp2(-e/c.HalfLife), nil
	case ModelLinear, ModelDelayedLinear:
		return linearAt(weight, c.Rate, c.Hold, e), nil
	case ModelMultiLinear:
		return notOverflowing(fn, "curve_json", weight*multiLinearAt(c.Tiers, e))
	default: // power law
		return powerLawAt(weight, c.Alpha, c.Scale, e), nil
	}
}

// Horizon is when the curve's weight first falls below threshold. With a
// threshold of 0 it is the death time of linear curves (weight reaches 0);
// asymptotic curves then never die.
func (c *Curve) Horizon(weight, threshold float64) (Horizon, error) {
	const fn = "curve_horizon"
	if err := nonNegative(fn, "weight", weight); err != nil {
		return never, err
	}
	if err := nonNegative(fn, "threshold", threshold); err != nil {
		return never, err
	}
	switch c.Model {
	case ModelExponential:
		return exponentialHorizon(weight, c.Lambda, threshold), nil
	case ModelHalfLife:
		return halfLifeHorizon(weight, c.HalfLife, threshold), nil
	case ModelLinear, ModelDelayedLinear:
		return linearHorizon(weight, c.Rate, c.Hold, threshold), nil
	case ModelMultiLinear:
		// weight × Σ tiers < threshold ⇔ Σ tiers < threshold / weight: no
		// scaled copy of the tiers, which could overflow.
		if weight == 0 {
			return Horizon{}, nil
		}
		return multiLinearHorizon(c.Tiers, threshold/weight), nil
	default:
		return powerLawHorizon(weight, c.Alpha, c.Scale, threshold), nil
	}
}

func linearHorizon(weight, rate, hold, threshold float64) Horizon {
	switch {
	case weight < threshold, weight == 0:
		return Horizon{}
	case rate == 0:
		return never
	}
	return finiteHorizon(hold + (weight-threshold)/rate)
}

// multiLinearHorizon walks the breakpoints of the piecewise-linear sum
// (each tier's hold and death time) and solves the crossing on the first
// segment that ends below the threshold.
func multiLinearHorizon(tiers []LinearTier, threshold float64) Horizon {
	if threshold == 0 {
		death := 0.0
		for _, t := range tiers {
			if t.Weight == 0 {
				continue
			}
			if t.Rate == 0 {
				return never
			}
			death = math.Max(death, t.Hold+t.Weight/t.Rate)
		}
		return finiteHorizon(death)
	}
	points := []float64{0}
	for _, t := range tiers {
		points = append(points, t.Hold)
		if t.Rate > 0 {
			points = append(points, t.Hold+t.Weight/t.Rate)
		}
	}
	slices.Sort(points)
	points = slices.Compact(points)
	if multiLinearAt(tiers, 0) < threshold {
		return Horizon{}
	}
	for i := 0; i+1 < len(points); i++ {
		a, b := points[i], points[i+1]
		fa, fb := multiLinearAt(tiers, a), multiLinearAt(tiers, b)
		if fb < threshold {
			return finiteHorizon(a + (fa-threshold)*(b-a)/(fa-fb))
		}
	}
	// At huge times a tier's death can round onto its hold, making the drop
	// a step just after a breakpoint rather than a segment.
	for _, p := range points {
		if next := math.Nextafter(p, math.Inf(1)); multiLinearAt(tiers, next) < threshold {
			return finiteHorizon(next)
		}
	}
	return never
}

func halfLifeHorizon(weight, halfLife, threshold float64) Horizon {
	switch {
	case weight < threshold:
		return Horizon{}
	case threshold == 0:
		return never
	}
	return finiteHorizon(halfLife * (math.Log2(weight) - math.Log2(threshold)))
}

func powerLawHorizon(weight, alpha, scale, threshold float64) Horizon {
	switch {
	case weight < threshold:
		return Horizon{}
	case alpha == 0 || threshold == 0:
		return never
	}
	// expm1 keeps precision when alpha is large and the exponent tiny.
	return finiteHorizon(scale * math.Expm1((math.Log(weight)-math.Log(threshold))/alpha))
}
