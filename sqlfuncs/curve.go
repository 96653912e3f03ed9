package sqlfuncs

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
// in errors. Every key must apply to the model; hold (default 0) and scale
// (default 1) may be left out, the model's other parameters may not.
func ParseCurve(fn, arg, text string) (*Curve, error) {
	v, err := readJSON(text)
	if err != nil {
		return nil, argErr(fn, arg, "%v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, argErr(fn, arg, `must be a JSON object such as {"model":"half_life","half_life":90} (got %s)`, describeJSON(v))
	}
	var c Curve
	m, ok := obj["model"]
	if !ok {
		return nil, argErr(fn, arg, "has no model (want one of %v)", Models)
	}
	if c.Model, ok = m.(string); !ok {
		return nil, argErr(fn, arg, "model must be text (got %s)", describeJSON(m))
	}
	keys, ok := policyKeys[c.Model]
	if !ok {
		return nil, argErr(fn, arg, "model %q is unknown (want one of %v)", c.Model, Models)
	}
	fields := map[string]*float64{"lambda": &c.Lambda, "half_life": &c.HalfLife, "rate": &c.Rate, "hold": &c.Hold,
		"alpha": &c.Alpha, "scale": &c.Scale}
	for _, k := range sortedKeys(obj) {
		if k == "model" {
			continue
		}
		if _, applies := keys[k]; !applies {
			return nil, argErr(fn, arg, "key %q does not apply to model %s (want %s)", k, c.Model, keyList(keys))
		}
		if k == "tiers" {
			if c.Tiers, err = tiersOf(fn, arg, arg+" tiers", obj[k]); err != nil {
				return nil, err
			}
			continue
		}
		if *fields[k], err = jsonFloat(fn, arg+" "+k, obj[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(keys) {
		if _, given := obj[k]; !given && !optionalParams[k] {
			return nil, argErr(fn, arg, "has no %s (model %s needs it)", k, c.Model)
		}
	}
	if _, given := obj["scale"]; !given && c.Model == ModelPowerLaw {
		c.Scale = 1
	}
	if err := c.validate(fn, arg); err != nil {
		return nil, err
	}
	return &c, nil
}

// optionalParams are the curve parameters with a default: hold 0, scale 1.
var optionalParams = map[string]bool{"hold": true, "scale": true}

// keyList lists a key set for messages: "hold, rate".
func keyList[V any](keys map[string]V) string {
	return strings.Join(sortedKeys(keys), ", ")
}

// ParseTiers reads the tiers of a multi-linear curve from a JSON array.
func ParseTiers(fn, arg, text string) ([]LinearTier, error) {
	v, err := readJSON(text)
	if err != nil {
		return nil, argErr(fn, arg, "%v", err)
	}
	tiers, err := tiersOf(fn, arg, arg, v)
	if err != nil {
		return nil, err
	}
	if err := validateTiers(fn, arg, tiers); err != nil {
		return nil, err
	}
	return tiers, nil
}

// tierKeys are the keys of one linear tier; only weight is required (hold
// and rate default to 0: a tier with no rate is a floor that never fades).
var tierKeys = map[string]bool{"weight": true, "hold": false, "rate": false}

// tiersOf reads a JSON array of tiers; what names the array in errors and
// arg + " tier N" each tier.
func tiersOf(fn, arg, what string, v any) ([]LinearTier, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, argErr(fn, what, `must be a JSON array of tiers such as [{"weight":1,"hold":5,"rate":0.1}] (got %s)`, describeJSON(v))
	}
	tiers := make([]LinearTier, len(list))
	for i, item := range list {
		name := fmt.Sprintf("%s tier %d", arg, i)
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, argErr(fn, name, "must be an object with weight, hold and rate (got %s)", describeJSON(item))
		}
		fields := map[string]*float64{"weight": &tiers[i].Weight, "hold": &tiers[i].Hold, "rate": &tiers[i].Rate}
		for _, k := range sortedKeys(obj) {
			if _, known := tierKeys[k]; !known {
				return nil, argErr(fn, name, "key %q is unknown (want weight, hold, rate)", k)
			}
			f, err := jsonFloat(fn, name+" "+k, obj[k])
			if err != nil {
				return nil, err
			}
			*fields[k] = f
		}
		if _, ok := obj["weight"]; !ok {
			return nil, argErr(fn, name, "has no weight")
		}
	}
	return tiers, nil
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
		if err = check("alpha", c.Alpha, nonNegative); err == nil {
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
		return weight * crExp(-c.Lambda*e), nil
	case ModelHalfLife:
		return weight * crExp2(-e/c.HalfLife), nil
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
	return finiteHorizon(halfLife * (crLog2(weight) - crLog2(threshold)))
}

func powerLawHorizon(weight, alpha, scale, threshold float64) Horizon {
	switch {
	case weight < threshold:
		return Horizon{}
	case alpha == 0 || threshold == 0:
		return never
	}
	// expm1 keeps precision when alpha is large and the exponent tiny.
	return finiteHorizon(scale * crExpm1((crLog(weight)-thresholdLog(threshold))/alpha))
}
