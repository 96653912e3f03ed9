package sqlfuncs

import "testing"

func TestScratch(t *testing.T) {
	c, err := ParseCurve("curve_weight", "curve_json", `{"model":"exponential","lambda":1}}`)
	t.Log("trailing }:", c, err)
	c, err = ParseCurve("curve_weight", "curve_json", `{"model":"exponential","lambda":1}]`)
	t.Log("trailing ]:", c, err)
	c, err = ParseCurve("curve_weight", "curve_json", `{"model":"exponential","lambda":1} x`)
	t.Log("trailing x:", c, err)
	tiers, err := ParseTiers("multi_linear_weight", "tiers_json", `[{"weight":1}]]`)
	t.Log("tiers trailing ]:", tiers, err)
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		_, err := ParseTiers("multi_linear_weight", "tiers_json", `[{"weight":-1,"hold":-1,"rate":-1}]`)
		seen[err.Error()] = true
	}
	t.Log("distinct msgs:", len(seen), seen)
	tiers, _ = ParseTiers("multi_linear_weight", "tiers_json", `[{"weight":1e308},{"weight":1e308}]`)
	w, err := MultiLinearWeight(tiers, 0)
	t.Log("overflow:", w, err)
	c, _ = ParseCurve("f", "a", `{"model":"multi_linear","tiers":[{"weight":2}]}`)
	w, err = c.Weight(1e308, 0)
	t.Log("curve overflow:", w, err)
	h, err := DecayHorizon(1e300, 1, 1e-300)
	t.Log("horizon ratio overflow:", h, err)
	c, _ = ParseCurve("f", "a", `{"model":"power_law","alpha":1}`)
	h, err = c.Horizon(1e300, 1e-300)
	t.Log("pl horizon ratio overflow:", h, err)
	c, _ = ParseCurve("f", "a", `null`)
	t.Log(c)
	_, err = ParseCurve("f", "a", `null`)
	t.Log(err)
}
