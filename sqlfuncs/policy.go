package sqlfuncs

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Clocks a relation policy can decay on.
const (
	ClockActiveHours = "active_hours" // unit: hours of activity
	ClockWall        = "wall"         // unit: days since last_observed_at
)

// policyKeys lists, per model, the params a policy may set and whether each
// is a duration (written 30m, 4h, 90d or as a number in the clock's unit).
var policyKeys = map[string]map[string]bool{
	ModelExponential:   {"lambda": false},
	ModelHalfLife:      {"half_life": true},
	ModelLinear:        {"rate": false, "hold": true},
	ModelDelayedLinear: {"rate": false, "hold": true},
	ModelMultiLinear:   {"tiers": false},
	ModelPowerLaw:      {"alpha": false, "scale": true},
}

// DiesAtZero reports whether a model has a deterministic death time, so a
// policy with no threshold removes its edges at weight ≤ 0.
func DiesAtZero(model string) bool {
	return model == ModelLinear || model == ModelDelayedLinear || model == ModelMultiLinear
}

// PolicyCurve turns a relation policy row (model, params JSON, clock) into
// the curve JSON that curve_weight and curve_horizon take, with every
// duration converted to the clock's unit: hours on the active-hours clock,
// days on the wall clock.
func PolicyCurve(model, params, clock string) (string, error) {
	const fn = "policy_curve"
	keys, ok := policyKeys[model]
	if !ok {
		return "", argErr(fn, "model", "%q is unknown (want one of %v)", model, Models)
	}
	if clock != ClockActiveHours && clock != ClockWall {
		return "", argErr(fn, "clock", "%q is unknown (want active_hours or wall)", clock)
	}
	raw := map[string]json.RawMessage{}
	if strings.TrimSpace(params) != "" {
		if err := strictUnmarshal(params, &raw); err != nil {
			return "", argErr(fn, "params", "is not a JSON object: %v", err)
		}
	}
	curve := map[string]any{"model": model}
	for _, k := range slices.Sorted(mapKeys(raw)) {
		isDuration, known := keys[k]
		if !known {
			return "", argErr(fn, "params", "key %q does not apply to model %s (want %v)", k, model, slices.Sorted(mapKeys(keys)))
		}
		if k == "tiers" {
			tiers, err := policyTiers(fn, raw[k], clock)
			if err != nil {
				return "", err
			}
			curve[k] = tiers
			continue
		}
		v, err := policyNumber(fn, "params "+k, raw[k], isDuration, clock)
		if err != nil {
			return "", err
		}
		curve[k] = v
	}
	text, err := json.Marshal(curve)
	if err != nil {
		return "", err
	}
	// The result must be a valid curve: this checks required and positive values.
	if _, err := ParseCurve(fn, "params", string(text)); err != nil {
		return "", err
	}
	return string(text), nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func policyTiers(fn string, raw json.RawMessage, clock string) ([]map[string]float64, error) {
	var tiers []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tiers); err != nil {
		return nil, argErr(fn, "params tiers", "is not an array of objects: %v", err)
	}
	out := make([]map[string]float64, len(tiers))
	for i, t := range tiers {
		out[i] = map[string]float64{}
		for _, k := range slices.Sorted(mapKeys(t)) {
			if k != "weight" && k != "hold" && k != "rate" {
				return nil, argErr(fn, fmt.Sprintf("params tiers %d", i), "key %q is unknown (want weight, hold, rate)", k)
			}
			v, err := policyNumber(fn, fmt.Sprintf("params tiers %d %s", i, k), t[k], k == "hold", clock)
			if err != nil {
				return nil, err
			}
			out[i][k] = v
		}
	}
	return out, nil
}

// policyNumber reads a non-negative number, or for a duration also a text
// with a unit suffix (m, h, d), converted to the clock's unit.
func policyNumber(fn, arg string, raw json.RawMessage, isDuration bool, clock string) (float64, error) {
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		var s string
		if !isDuration || json.Unmarshal(raw, &s) != nil {
			return 0, argErr(fn, arg, "is not a number: %s", raw)
		}
		if v, err = ParseDuration(s, clock); err != nil {
			return 0, argErr(fn, arg, "%v", err)
		}
	}
	if err := nonNegative(fn, arg, v); err != nil {
		return 0, err
	}
	return v, nil
}

// ParseDuration reads "30m", "4h", "90d" (or a bare number, already in the
// clock's unit) as hours on the active-hours clock or days on the wall clock.
func ParseDuration(s, clock string) (float64, error) {
	s = strings.TrimSpace(s)
	unitHours := map[byte]float64{'m': 1.0 / 60, 'h': 1, 'd': 24}
	hours, hasUnit := 0.0, false
	if n := len(s); n > 0 {
		if per, ok := unitHours[s[n-1]]; ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(s[:n-1]), 64)
			if err != nil {
				return 0, fmt.Errorf("%q is not a duration (want a number with m, h or d)", s)
			}
			hours, hasUnit = v*per, true
		}
	}
	if !hasUnit {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (want a number with m, h or d)", s)
		}
		return v, nil
	}
	if math.IsNaN(hours) || math.IsInf(hours, 0) || hours < 0 {
		return 0, fmt.Errorf("%q is not a non-negative finite duration", s)
	}
	if clock == ClockWall {
		return hours / 24, nil
	}
	return hours, nil
}
