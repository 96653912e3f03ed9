package sqlfuncs

import (
	"strconv"
	"strings"
	"testing"
)

// jsonCall runs one JSON-taking function on a text and returns its error.
type jsonCall func(text string) error

var (
	tiersCall jsonCall = func(text string) error {
		_, err := ParseTiers("multi_linear_weight", "tiers_json", text)
		return err
	}
	curveCall jsonCall = func(text string) error {
		_, err := ParseCurve("curve_weight", "curve_json", text)
		return err
	}
	policyCall = func(model string) jsonCall {
		return func(text string) error {
			_, err := PolicyCurve(model, text, ClockWall)
			return err
		}
	}
	tagsCall jsonCall = func(text string) error {
		_, err := DecayTier(text, "")
		return err
	}
)

// TestJSONArgumentErrors: a JSON argument that cannot be read as written
// is an error naming the function, the argument and what is wrong, in the
// caller's terms; never a silent 0, and never a Go type name.
func TestJSONArgumentErrors(t *testing.T) {
	const ml, cw, pc = "memdecay: multi_linear_weight: tiers_json", "memdecay: curve_weight: curve_json", "memdecay: policy_curve: params"
	for _, tc := range []struct {
		name string
		call jsonCall
		text string
		want string
	}{
		// A tier with no weight, or no tier at all, used to count as 0.
		{"empty tier", tiersCall, `[{}]`, ml + " tier 0 has no weight"},
		{"null tier", tiersCall, `[null]`, ml + " tier 0 must be an object with weight, hold and rate (got null)"},
		{"tier without weight", tiersCall, `[{"weight":1},{"rate":1}]`, ml + " tier 1 has no weight"},
		{"null weight", tiersCall, `[{"weight":null,"rate":1}]`, ml + " tier 0 weight is null (want a number)"},
		{"null rate", tiersCall, `[{"weight":1,"rate":null}]`, ml + " tier 0 rate is null (want a number)"},
		{"number tier", tiersCall, `[1]`, ml + " tier 0 must be an object with weight, hold and rate (got 1)"},
		{"text weight", tiersCall, `[{"weight":"1"}]`, ml + ` tier 0 weight must be a number (got text "1")`},
		{"object, not array", tiersCall, `{"weight":1}`, ml + ` must be a JSON array of tiers such as [{"weight":1,"hold":5,"rate":0.1}] (got an object)`},
		{"null tiers", tiersCall, `null`, ml + ` must be a JSON array of tiers such as [{"weight":1,"hold":5,"rate":0.1}] (got null)`},
		{"unknown tier key", tiersCall, `[{"weight":1,"name":"short"}]`, ml + ` tier 0 key "name" is unknown (want weight, hold, rate)`},
		{"weight too large", tiersCall, `[{"weight":1e999}]`, ml + " tier 0 weight must be finite (got 1e999)"},
		{"duplicate tier key", tiersCall, `[{"weight":1,"rate":0.1,"rate":0.5}]`, ml + ` has the key "rate" twice (in [0])`},
		{"trailing data", tiersCall, `[{"weight":1}] [`, ml + " is not valid JSON: more follows the value"},
		{"truncated", tiersCall, `[{"weight":1}`, ml + " is not valid JSON: it ends before the value is complete"},
		{"empty text", tiersCall, ``, ml + " is empty (want JSON)"},
		{"bad syntax", tiersCall, `[{"weight" 1}]`, ml + " is not valid JSON: invalid character '1' after object key (at byte 11)"},

		// Power-law scale: 0 is refused as power_law_weight(…, 0) refuses it.
		{"scale 0", curveCall, `{"model":"power_law","alpha":1,"scale":0}`, cw + " scale must be greater than zero"},
		{"scale null", curveCall, `{"model":"power_law","alpha":1,"scale":null}`, cw + " scale is null (want a number)"},
		{"duplicate key", curveCall, `{"model":"half_life","half_life":90,"half_life":9}`, cw + ` has the key "half_life" twice`},
		{"duplicate model", curveCall, `{"model":"linear","rate":1,"model":"half_life"}`, cw + ` has the key "model" twice`},
		{"duplicate in a tier", curveCall, `{"model":"multi_linear","tiers":[{"weight":1},{"weight":1,"weight":2}]}`, cw + ` has the key "weight" twice (in tiers[1])`},
		{"text lambda", curveCall, `{"model":"exponential","lambda":"x"}`, cw + ` lambda must be a number (got text "x")`},
		{"array lambda", curveCall, `{"model":"exponential","lambda":[1]}`, cw + " lambda must be a number (got an array)"},
		{"an array", curveCall, `[1]`, cw + ` must be a JSON object such as {"model":"half_life","half_life":90} (got an array)`},
		{"unknown key", curveCall, `{"model":"exponential","lambdaa":1}`, cw + ` key "lambdaa" does not apply to model exponential (want lambda)`},
		{"key of another model", curveCall, `{"model":"linear","rate":1,"half_life":3}`, cw + ` key "half_life" does not apply to model linear (want hold, rate)`},
		{"no lambda", curveCall, `{"model":"exponential"}`, cw + " has no lambda (model exponential needs it)"},
		{"no rate", curveCall, `{"model":"linear","hold":2}`, cw + " has no rate (model linear needs it)"},
		{"no alpha", curveCall, `{"model":"power_law","scale":2}`, cw + " has no alpha (model power_law needs it)"},
		{"model not text", curveCall, `{"model":1}`, cw + " model must be text (got 1)"},
		{"no model", curveCall, `{"lambda":1}`, cw + " has no model (want one of [exponential half_life linear delayed_linear multi_linear power_law])"},
		{"tiers not an array", curveCall, `{"model":"multi_linear","tiers":{"weight":1}}`, cw + ` tiers must be a JSON array of tiers such as [{"weight":1,"hold":5,"rate":0.1}] (got an object)`},
		{"curve null tier", curveCall, `{"model":"multi_linear","tiers":[null]}`, cw + " tier 0 must be an object with weight, hold and rate (got null)"},

		{"policy scale 0", policyCall(ModelPowerLaw), `{"alpha":1,"scale":0}`, pc + " scale must be greater than zero"},
		{"policy scale 0d", policyCall(ModelPowerLaw), `{"alpha":1,"scale":"0d"}`, pc + " scale must be greater than zero"},
		{"policy duplicate", policyCall(ModelHalfLife), `{"half_life":"90d","half_life":"9d"}`, pc + ` has the key "half_life" twice`},
		{"policy duplicate in a tier", policyCall(ModelMultiLinear), `{"tiers":[{"weight":1,"hold":"1d","hold":"2d"}]}`, pc + ` has the key "hold" twice (in tiers[0])`},
		{"policy array", policyCall(ModelHalfLife), `[1]`, pc + ` must be a JSON object such as {"half_life":"90d"} (got an array)`},
		{"policy tier not an object", policyCall(ModelMultiLinear), `{"tiers":[1]}`, pc + " tier 0 must be an object with weight, hold and rate (got 1)"},
		{"policy tiers not an array", policyCall(ModelMultiLinear), `{"tiers":{}}`, pc + ` tiers must be a JSON array of tiers such as [{"weight":1,"hold":"4h","rate":0.1}] (got an object)`},
		{"policy empty tier", policyCall(ModelMultiLinear), `{"tiers":[{}]}`, pc + " tier 0 has no weight"},
		{"policy bool duration", policyCall(ModelHalfLife), `{"half_life":true}`, pc + ` half_life must be a number or a duration such as "90d" (got true)`},
		{"policy null duration", policyCall(ModelHalfLife), `{"half_life":null}`, pc + " half_life is null (want a number)"},
		{"policy text rate", policyCall(ModelLinear), `{"rate":"fast"}`, pc + ` rate must be a number (got text "fast")`},
		{"policy no rate", policyCall(ModelLinear), `{"hold":"24h"}`, pc + " has no rate (model linear needs it)"},
		{"policy huge hold", policyCall(ModelLinear), `{"rate":1,"hold":1e999}`, pc + " hold must be finite (got 1e999)"},

		{"tag not text", tagsCall, `[1]`, "memdecay: decay_tier: tags is not a JSON array of strings: item 0 is 1"},
		{"tags truncated", tagsCall, `[`, "memdecay: decay_tier: tags is not valid JSON: it ends before the value is complete (want a JSON array of strings)"},
	} {
		err := tc.call(tc.text)
		if err == nil {
			t.Errorf("%s: %s accepted", tc.name, tc.text)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%s: %s\n got %s\nwant %s", tc.name, tc.text, err, tc.want)
		}
		wantPlainMessage(t, err)
	}
}

// wantPlainMessage fails on a message that speaks Go rather than the
// caller's terms.
func wantPlainMessage(t *testing.T, err error) {
	t.Helper()
	for _, leak := range []string{"Go value", "Go struct", "json:", "sqlfuncs.", "RawMessage", "float64", "map[string]"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("message %q says %q", err, leak)
		}
	}
}

// TestJSONArgumentsAccepted: what the strict reading still takes.
func TestJSONArgumentsAccepted(t *testing.T) {
	for _, tc := range []struct {
		call jsonCall
		text string
	}{
		{tiersCall, `[{"weight":1}]`},                           // hold and rate default to 0: a floor
		{tiersCall, ` [ {"rate":0.1, "weight":1, "hold":5} ] `}, // any key order, any spacing
		{tiersCall, `[{"weight":1},{"weight":1}]`},              // the same key in two tiers is no duplicate
		{curveCall, `{"model":"power_law","alpha":1}`},          // scale defaults to 1
		{curveCall, `{"model":"linear","rate":0.25}`},           // hold defaults to 0
		{curveCall, `{"model":"exponential","lambda":0}`},       // an explicit 0 is a choice
		{policyCall(ModelPowerLaw), `{"alpha":1}`},
		{policyCall(ModelHalfLife), `{"half_life":90}`},
		{tagsCall, `["self/goal", null]`},
	} {
		if err := tc.call(tc.text); err != nil {
			t.Errorf("%s: %v", tc.text, err)
		}
	}
	c := parseCurve(t, `{"model":"power_law","alpha":1}`)
	if c.Scale != 1 {
		t.Errorf("default scale %v, want 1", c.Scale)
	}
}

// TestPowerLawScaleAgrees: a scale the function refuses, the curve refuses
// too, with the same words.
func TestPowerLawScaleAgrees(t *testing.T) {
	for _, scale := range []string{"0", "-1", "0.0"} {
		_, fnErr := PowerLawWeight(1, 1, 1, must(t)(strconv.ParseFloat(scale, 64)))
		_, curveErr := ParseCurve("power_law_weight", "scale", `{"model":"power_law","alpha":1,"scale":`+scale+`}`)
		if fnErr == nil || curveErr == nil {
			t.Fatalf("scale %s: power_law_weight error %v, curve error %v; want both", scale, fnErr, curveErr)
		}
		_, fnProblem, _ := strings.Cut(fnErr.Error(), "scale ")
		_, curveProblem, _ := strings.Cut(curveErr.Error(), "scale scale ")
		if fnProblem != curveProblem {
			t.Errorf("scale %s: power_law_weight says %q, the curve %q", scale, fnErr, curveErr)
		}
	}
}

// Nesting past maxJSONDepth is refused at once, whatever the depth: 50,000
// levels once cost gigabytes in paths.
func TestJSONDepthBounded(t *testing.T) {
	for _, depth := range []int{maxJSONDepth + 1, 50000} {
		_, err := readJSON(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if err == nil || !strings.Contains(err.Error(), "nested more than 32 deep") {
			t.Errorf("depth %d: %v", depth, err)
		}
	}
	if _, err := readJSON(strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)); err != nil {
		t.Errorf("depth %d: %v", maxJSONDepth, err)
	}
}
