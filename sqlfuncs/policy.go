package sqlfuncs

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
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
func PolicyCurve(model, text, clock string) (string, error) {
	const fn = "policy_curve"
	keys, ok := policyKeys[model]
	if !ok {
		return "", argErr(fn, "model", "%q is unknown (want one of %v)", model, Models)
	}
	if clock != ClockActiveHours && clock != ClockWall {
		return "", argErr(fn, "clock", "%q is unknown (want active_hours or wall)", clock)
	}
	params := map[string]any{}
	if strings.TrimSpace(text) != "" {
		v, err := readJSON(text)
		if err != nil {
			return "", argErr(fn, "params", "%v", err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return "", argErr(fn, "params", "must be a JSON object such as {\"half_life\":\"90d\"} (got %s)", describeJSON(v))
		}
		params = obj
	}
	curve := map[string]any{"model": model}
	for _, k := range sortedKeys(params) {
		isDuration, known := keys[k]
		if !known {
			return "", argErr(fn, "params", "key %q does not apply to model %s (want %s)", k, model, keyList(keys))
		}
		if k == "tiers" {
			tiers, err := policyTiers(fn, params[k], clock)
			if err != nil {
				return "", err
			}
			curve[k] = tiers
			continue
		}
		v, err := policyNumber(fn, "params "+k, params[k], isDuration, clock)
		if err != nil {
			return "", err
		}
		curve[k] = v
	}
	out, err := json.Marshal(curve)
	if err != nil {
		return "", err
	}
	// The result must be a valid curve: this checks required and positive values.
	if _, err := ParseCurve(fn, "params", string(out)); err != nil {
		return "", err
	}
	return string(out), nil
}

// sortedKeys lists a JSON object's keys in order, so messages and curves
// read the same every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// policyTiers reads a multi-linear policy's tiers, each hold a duration.
func policyTiers(fn string, v any, clock string) ([]map[string]float64, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, argErr(fn, "params tiers", `must be a JSON array of tiers such as [{"weight":1,"hold":"4h","rate":0.1}] (got %s)`, describeJSON(v))
	}
	out := make([]map[string]float64, len(list))
	for i, item := range list {
		name := fmt.Sprintf("params tier %d", i)
		t, ok := item.(map[string]any)
		if !ok {
			return nil, argErr(fn, name, "must be an object with weight, hold and rate (got %s)", describeJSON(item))
		}
		out[i] = map[string]float64{}
		for _, k := range sortedKeys(t) {
			if _, known := tierKeys[k]; !known {
				return nil, argErr(fn, name, "key %q is unknown (want weight, hold, rate)", k)
			}
			v, err := policyNumber(fn, name+" "+k, t[k], k == "hold", clock)
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
func policyNumber(fn, arg string, raw any, isDuration bool, clock string) (float64, error) {
	s, isText := raw.(string)
	if !isDuration || !isText {
		v, err := jsonFloat(fn, arg, raw)
		if err != nil {
			if _, isNumber := raw.(json.Number); isDuration && raw != nil && !isNumber {
				return 0, argErr(fn, arg, "must be a number or a duration such as \"90d\" (got %s)", describeJSON(raw))
			}
			return 0, err
		}
		return v, nonNegative(fn, arg, v)
	}
	v, err := ParseDuration(s, clock)
	if err != nil {
		return 0, argErr(fn, arg, "%v", err)
	}
	return v, nonNegative(fn, arg, v)
}

// ParseDuration reads "30m", "4h", "90d", "2w" (or a bare number, already
// in the clock's unit) as hours on the active-hours clock or days on the
// wall clock.
func ParseDuration(s, clock string) (float64, error) {
	s = strings.TrimSpace(s)
	unitHours := map[byte]float64{'m': 1.0 / 60, 'h': 1, 'd': 24, 'w': 168}
	hours, hasUnit := 0.0, false
	if n := len(s); n > 0 {
		if per, ok := unitHours[s[n-1]]; ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(s[:n-1]), 64)
			if err != nil {
				return 0, fmt.Errorf("%q is not a duration (want a number with m, h, d or w)", s)
			}
			hours, hasUnit = v*per, true
		}
	}
	if !hasUnit {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (want a number with m, h, d or w)", s)
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
