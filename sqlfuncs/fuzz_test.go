package sqlfuncs

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets, one per SQL function, seeded from the table tests. Each
// asserts: no panic; an argument error exactly when an argument is invalid,
// as an *ArgError named after the SQL function; otherwise a finite result
// that never exceeds the start weight and never rises with elapsed time.

// checkErr asserts that a call errs exactly when its arguments are invalid,
// and reports whether the result can be checked further.
func checkErr(t *testing.T, fn string, valid bool, err error) bool {
	t.Helper()
	if valid {
		if err != nil {
			t.Fatalf("%s rejected valid arguments: %v", fn, err)
		}
		return true
	}
	wantArgErr(t, err, "memdecay: "+fn+": ")
	return false
}

func FuzzEffectiveWeight(f *testing.F) {
	for _, s := range [][4]float64{
		{0.5, 0.005, 500, 50}, {0.5, 0.0025, 400, 0}, {0.5, 0.000005, 500, 200000}, {0.5, 0.025, 100, 1},
		{0.4, 0.005, 100, 300}, {0.8, 0.0025, 800, 1000}, {1.8, math.Ln2, 1, 24}, {0.7, 0, 1e6, 0},
		{0.5, 0.005, -100, 10}, {-0.5, 0.01, 1, 2}, {0, 0.01, 10, 20}, {math.MaxFloat64, 1e-300, 1e300, 1},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, w, lambda, e1, e2 float64) {
		lo, hi := ordered(e1, e2)
		a, errA := EffectiveWeight(w, lambda, lo)
		b, errB := EffectiveWeight(w, lambda, hi)
		okA := checkErr(t, "effective_weight", usable(w, lambda) && isFinite(lo), errA)
		okB := checkErr(t, "effective_weight", usable(w, lambda) && isFinite(hi), errB)
		if !okA || !okB {
			return
		}
		checkDecay(t, w, a, b)
		if lo <= 0 && a != w {
			t.Fatalf("effective_weight(%v, %v, %v) = %v, want the weight", w, lambda, lo, a)
		}
	})
}

func FuzzHalfLifeWeight(f *testing.F) {
	for _, s := range [][4]float64{
		{1, 90, 0, 45}, {1, 90, 90, 180}, {0.8, 90, 299, 1000}, {1, 90, -30, 1},
		{1, 0, 1, 2}, {1, -90, 1, 2}, {-1, 90, 1, 2}, {1, 5e-324, 1, 2}, {1, 1e308, 1e308, 1},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, w, halfLife, e1, e2 float64) {
		lo, hi := ordered(e1, e2)
		a, errA := HalfLifeWeight(w, halfLife, lo)
		b, errB := HalfLifeWeight(w, halfLife, hi)
		args := usable(w, halfLife) && halfLife > 0
		okA := checkErr(t, "half_life_weight", args && isFinite(lo), errA)
		okB := checkErr(t, "half_life_weight", args && isFinite(hi), errB)
		if !okA || !okB {
			return
		}
		checkDecay(t, w, a, b)
	})
}

func FuzzLinearWeight(f *testing.F) {
	for _, s := range [][5]float64{
		{1, 0.25, 0, 0, 1}, {1, 0.25, 0, 3, 4}, {1, 0.25, 0.5, 0.25, 2.5}, {1, 0.25, 0.5, 4.5, 10},
		{0.6, 0, 0, 0, 1e9}, {1, 0.25, 0.5, -1, 0}, {-1, 0.25, 0, 1, 2}, {1, 0.25, -1, 1, 2},
		{1e308, 1e308, 1e308, 1e308, -1e308},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, w, rate, hold, e1, e2 float64) {
		lo, hi := ordered(e1, e2)
		a, errA := LinearWeight(w, rate, lo, hold)
		b, errB := LinearWeight(w, rate, hi, hold)
		args := usable(w, rate, hold)
		okA := checkErr(t, "linear_weight", args && isFinite(lo), errA)
		okB := checkErr(t, "linear_weight", args && isFinite(hi), errB)
		if !okA || !okB {
			return
		}
		checkDecay(t, w, a, b)
		if lo < hold && a != w {
			t.Fatalf("linear_weight inside the hold = %v, want %v", a, w)
		}
	})
}

// checkMultiLinear checks multi_linear_weight for validated tiers.
func checkMultiLinear(t *testing.T, tiers []LinearTier, e1, e2 float64) {
	t.Helper()
	sum := 0.0
	for _, tr := range tiers {
		if !usable(tr.Weight, tr.Hold, tr.Rate) {
			t.Fatalf("ParseTiers accepted an invalid tier %+v", tr)
		}
		sum += tr.Weight
	}
	if math.IsInf(sum, 0) {
		// At elapsed 0 every tier counts in full: the sum overflows.
		if _, err := MultiLinearWeight(tiers, 0); err == nil {
			t.Fatalf("multi_linear_weight accepted tiers %+v whose sum overflows", tiers)
		}
		return
	}
	lo, hi := ordered(e1, e2)
	a, errA := MultiLinearWeight(tiers, lo)
	b, errB := MultiLinearWeight(tiers, hi)
	okA := checkErr(t, "multi_linear_weight", isFinite(lo), errA)
	okB := checkErr(t, "multi_linear_weight", isFinite(hi), errB)
	if !okA || !okB {
		return
	}
	checkDecay(t, sum, a, b)
}

func FuzzMultiLinearWeight(f *testing.F) {
	for _, s := range []struct {
		text   string
		e1, e2 float64
	}{
		{ref003DefaultJSON, 0, 300_500},
		{ref003DefaultJSON, 3_600_000, 86_430_000},
		{ref003TopologyJSON, 1.5, 16},
		{ref003TopologyJSON, -1, 28},
		{`[{"weight":1.0,"hold":300,"rate":0.001}]`, 300, 1300},
		{`[{"weight":1}]`, 0, 1e300},
		{`[]`, 0, 1},
		{`[{"weight":-1}]`, 0, 1},
		{`[{"weight":1}]]`, 0, 1},
		{`[{"weight":1e308},{"weight":1e308}]`, 0, 1},
		{`not json`, 0, 1},
		{`[{}]`, 0, 7},
		{`[null]`, 0, 7},
		{`[{"weight":null,"rate":1}]`, 0, 7},
		{`[{"weight":1,"weight":0}]`, 0, 7},
	} {
		f.Add(s.text, s.e1, s.e2)
	}
	f.Fuzz(func(t *testing.T, text string, e1, e2 float64) {
		tiers, err := ParseTiers("multi_linear_weight", "tiers_json", text)
		if err != nil {
			wantArgErr(t, err, "memdecay: multi_linear_weight: tiers_json ")
			wantPlainMessage(t, err)
			return
		}
		if len(tiers) == 0 {
			t.Fatalf("ParseTiers(%q) accepted no tiers", text)
		}
		// Every tier accepted was an object that gave its weight.
		var objects []map[string]any
		if err := json.Unmarshal([]byte(text), &objects); err != nil || len(objects) != len(tiers) {
			t.Fatalf("ParseTiers(%q) accepted what is not an array of %d objects: %v", text, len(tiers), err)
		}
		for i, o := range objects {
			if o["weight"] == nil {
				t.Fatalf("ParseTiers(%q) accepted tier %d without a weight", text, i)
			}
		}
		checkMultiLinear(t, tiers, e1, e2)
	})
}

// FuzzMultiLinearTiers fuzzes the numeric tier parameters, written as the
// JSON a SQL caller would pass.
func FuzzMultiLinearTiers(f *testing.F) {
	for _, s := range [][8]float64{
		{1.0, 300_000, 0.001, 0.5, 3_600_000, 0.0001, 0, 86_430_000},
		{0.6, 0.5, 0.3, 0.4, 4, 1.0 / 60, 1.5, 16},
		{1, 0, 1, 0.2, 3, 0, 0, 10},
		{-1, 0, 1, 1, 0, 1, 0, 1},
		{1, -1, 1, 1, 0, 1, 0, 1},
		{1, 0, -1, 1, 0, 1, 0, 1},
		{1e308, 0, 1e308, 1e-308, 1e308, 5e-324, 1e308, 1e-300},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
	}
	f.Fuzz(func(t *testing.T, w1, h1, r1, w2, h2, r2, e1, e2 float64) {
		want := []LinearTier{{w1, h1, r1}, {w2, h2, r2}}
		text, err := json.Marshal(want)
		if err != nil {
			return // NaN and ±Inf have no JSON form
		}
		tiers, err := ParseTiers("multi_linear_weight", "tiers_json", string(text))
		if !checkErr(t, "multi_linear_weight", usable(w1, h1, r1, w2, h2, r2), err) {
			return
		}
		if !slices.Equal(tiers, want) {
			t.Fatalf("ParseTiers(%s) = %+v, want %+v", text, tiers, want)
		}
		checkMultiLinear(t, tiers, e1, e2)
	})
}

func FuzzPowerLawWeight(f *testing.F) {
	for _, s := range [][5]float64{
		{1.8, 1, 1, 0, 24}, {1.8, 1, 1, 24, 168}, {1, 0.5, 1, 3, 4}, {1, 2, 10, 10, 20},
		{0.4, 0, 1, 1e9, 0}, {0.4, 1, 1, -3, 1}, {1, 1, 0, 1, 2}, {1, -1, 1, 1, 2},
		{1, 1e300, 5e-324, 1e308, 1e-308},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, w, alpha, scale, e1, e2 float64) {
		lo, hi := ordered(e1, e2)
		a, errA := PowerLawWeight(w, alpha, lo, scale)
		b, errB := PowerLawWeight(w, alpha, hi, scale)
		args := usable(w, alpha, scale) && scale > 0
		okA := checkErr(t, "power_law_weight", args && isFinite(lo), errA)
		okB := checkErr(t, "power_law_weight", args && isFinite(hi), errB)
		if !okA || !okB {
			return
		}
		checkDecay(t, w, a, b)
	})
}

// checkHorizon asserts a horizon is 0 when the weight starts below the
// threshold, otherwise never or a finite time ≥ 0 at which the curve is at
// most the threshold.
func checkHorizon(t *testing.T, h Horizon, w, threshold float64, curve func(elapsed float64) (float64, error)) {
	t.Helper()
	if w < threshold && h != (Horizon{}) {
		t.Fatalf("weight %v starts below threshold %v, horizon %+v, want 0", w, threshold, h)
	}
	if h.Never {
		return
	}
	if !isFinite(h.At) || h.At < 0 {
		t.Fatalf("horizon %+v is not a finite time ≥ 0", h)
	}
	at, err := curve(h.At)
	if err != nil {
		t.Fatalf("curve at its horizon %v: %v", h.At, err)
	}
	if at > threshold+1e-9*max(threshold, w) {
		t.Fatalf("curve at its horizon %v is %v, above threshold %v (weight %v)", h.At, at, threshold, w)
	}
}

func FuzzDecayHorizon(f *testing.F) {
	for _, s := range [][3]float64{
		{0.4, 0.005, 0.1}, {0.5, 0.0025, 0.1}, {1, math.Ln2 / 90, 0.25}, {0.1, 0.005, 0.1},
		{0.05, 0.005, 0.1}, {0.5, 0, 0.1}, {0.5, 0.005, 0}, {-1, 0.005, 0.1}, {1, 1e308, 1e-308},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, w, lambda, threshold float64) {
		h, err := DecayHorizon(w, lambda, threshold)
		if !checkErr(t, "decay_horizon", usable(w, lambda, threshold), err) {
			return
		}
		if h.Never && w >= threshold && lambda != 0 && threshold != 0 && isFinite(math.Log(w/threshold)/lambda) {
			t.Fatalf("decay_horizon(%v, %v, %v) is never, but the weight falls below the threshold", w, lambda, threshold)
		}
		checkHorizon(t, h, w, threshold, func(e float64) (float64, error) { return EffectiveWeight(w, lambda, e) })
	})
}

func FuzzCurve(f *testing.F) {
	for _, s := range []struct {
		text              string
		w, e1, e2, thresh float64
	}{
		{`{"model":"exponential","lambda":0.005}`, 0.5, 50, 500, 0.1},
		{`{"model":"half_life","half_life":90}`, 1, 45, 180, 0.25},
		{`{"model":"linear","rate":0.25}`, 1, 1, 3, 0},
		{`{"model":"delayed_linear","rate":0.25,"hold":0.5}`, 1, 0.25, 2.5, 0.1},
		{`{"model":"power_law","alpha":1}`, 1.8, 1, 24, 0.1},
		{`{"model":"power_law","alpha":2,"scale":10}`, 1, 10, 20, 0.25},
		{`{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 1, 3_600_000, 86_415_000, 0.5},
		{`{"model":"multi_linear","tiers":` + ref003TopologyJSON + `}`, 1, 1.5, 16, 0.2},
		{`{"model":"multi_linear","tiers":[{"weight":1,"rate":1},{"weight":0.2,"hold":3}]}`, 1, 0, 5, 0},
		{`{"model":"power_law","alpha":1,"scale":0}`, 1, 0, 1, 0.1},
		{`{"model":"half_life","half_life":90,"half_life":9}`, 1, 0, 90, 0.5},
		{`{"model":"multi_linear","tiers":[{}]}`, 1, 0, 7, 0},
		{`{"model":"exponential"}`, 1, 0, 1, 0.1},
		{`{"model":"half_life","half_life":0}`, 1, 0, 1, 0.1},
		{`{"model":"sigmoid"}`, 1, 0, 1, 0.1},
		{`{"model":"exponential","lambda":1}}`, 1, 0, 1, 0.1},
		{`null`, 1, 0, 1, 0.1},
		{`{"model":"power_law","alpha":1e300}`, 1, 0, 1, 0.5},
		{`{"model":"half_life","half_life":5e-324}`, 1, 0, 1, 0.5},
		{`{"model":"multi_linear","tiers":[{"weight":1,"hold":1e20,"rate":1}]}`, 1, 1e20, 2e20, 0.5},
	} {
		f.Add(s.text, s.w, s.e1, s.e2, s.thresh)
	}
	f.Fuzz(func(t *testing.T, text string, w, e1, e2, threshold float64) {
		c, err := ParseCurve("curve_weight", "curve_json", text)
		if err != nil {
			wantArgErr(t, err, "memdecay: curve_weight: curve_json ")
			wantPlainMessage(t, err)
			return
		}
		if !slices.Contains(Models, c.Model) {
			t.Fatalf("ParseCurve(%q) accepted model %q", text, c.Model)
		}
		if c.Model == ModelPowerLaw && !(c.Scale > 0) {
			t.Fatalf("ParseCurve(%q) gave power law scale %v", text, c.Scale)
		}
		start := w
		if c.Model == ModelMultiLinear {
			sum := 0.0
			for _, tr := range c.Tiers {
				sum += tr.Weight
			}
			start = w * sum
		}
		if math.IsInf(start, 0) {
			if _, err := c.Weight(w, 0); err == nil {
				t.Fatalf("curve_weight(%q, %v, 0) accepted a sum that overflows", text, w)
			}
			return
		}
		lo, hi := ordered(e1, e2)
		a, errA := c.Weight(w, lo)
		b, errB := c.Weight(w, hi)
		okA := checkErr(t, "curve_weight", usable(w) && isFinite(lo), errA)
		okB := checkErr(t, "curve_weight", usable(w) && isFinite(hi), errB)
		if okA && okB {
			checkDecay(t, start, a, b)
		}

		h, err := c.Horizon(w, threshold)
		if !checkErr(t, "curve_horizon", usable(w, threshold), err) {
			return
		}
		if c.Model == ModelMultiLinear {
			start = 0 // the horizon sums the tiers scaled one by one
			for _, tr := range c.Tiers {
				start += w * tr.Weight
			}
		}
		checkHorizon(t, h, start, threshold, func(e float64) (float64, error) { return c.Weight(w, e) })
	})
}

// FuzzPolicyCurve: a policy row either gives a curve that curve_weight
// takes, of the policy's model, or an error in the caller's terms.
func FuzzPolicyCurve(f *testing.F) {
	for _, s := range []struct{ model, params, clock string }{
		{ModelHalfLife, `{"half_life":"90d"}`, ClockWall},
		{ModelLinear, `{"rate":0.01,"hold":"24h"}`, ClockActiveHours},
		{ModelMultiLinear, `{"tiers":[{"weight":1,"hold":"30m","rate":2}]}`, ClockActiveHours},
		{ModelPowerLaw, `{"alpha":1,"scale":"4h"}`, ClockWall},
		{ModelPowerLaw, `{"alpha":1,"scale":0}`, ClockWall},
		{ModelHalfLife, `{"half_life":1,"half_life":2}`, ClockWall},
		{ModelMultiLinear, `{"tiers":[{}]}`, ClockWall},
		{ModelExponential, `[1]`, ClockWall},
		{"sigmoid", `{}`, "moon"},
	} {
		f.Add(s.model, s.params, s.clock)
	}
	f.Fuzz(func(t *testing.T, model, params, clock string) {
		text, err := PolicyCurve(model, params, clock)
		if err != nil {
			wantArgErr(t, err, "memdecay: policy_curve: ")
			wantPlainMessage(t, err)
			return
		}
		c, err := ParseCurve("curve_weight", "curve_json", text)
		if err != nil {
			t.Fatalf("policy_curve(%q, %q, %q) = %s, which curve_weight refuses: %v", model, params, clock, text, err)
		}
		if c.Model != model {
			t.Fatalf("policy_curve(%q, …) gave model %q", model, c.Model)
		}
	})
}

var blockTiers = []string{TierPermanent, TierDurable, TierStandard, TierEphemeral}

func FuzzDecayTier(f *testing.F) {
	for _, s := range [][2]string{
		{`["self/value","self/constitutional"]`, ""},
		{`["self/goal"]`, "observation"},
		{``, "mind"},
		{``, "observation"},
		{`draft, self/constitutional`, "knowledge"},
		{`[null,"self/constraint"]`, ""},
		{`["self/value"`, "mind"},
		{`[1,2]`, ""},
		{`["self\/constitutional"]`, "observation"},
		{" \t", "mind"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tags, category string) {
		got, err := DecayTier(tags, category)
		isJSON := strings.HasPrefix(strings.TrimSpace(tags), "[")
		if err != nil {
			if !isJSON {
				t.Fatalf("decay_tier(%q, %q) rejected a comma-separated list: %v", tags, category, err)
			}
			wantArgErr(t, err, "memdecay: decay_tier: tags ")
			return
		}
		if !slices.Contains(blockTiers, got) {
			t.Fatalf("decay_tier(%q, %q) = %q, not a tier", tags, category, got)
		}
		switch category {
		case "mind":
			if got != TierPermanent && got != TierDurable {
				t.Fatalf("decay_tier(%q, mind) = %q", tags, got)
			}
		case "observation":
			if got == TierStandard {
				t.Fatalf("decay_tier(%q, observation) = %q", tags, got)
			}
		}
		if again, _ := DecayTier(tags, category); again != got {
			t.Fatalf("decay_tier(%q, %q) is not deterministic: %q then %q", tags, category, got, again)
		}
		if !isJSON {
			// The constitutional tag wins over everything else in the list.
			for _, extra := range []string{tags + ",self/constitutional", "self/constitutional," + tags} {
				if p, err := DecayTier(extra, category); err != nil || p != TierPermanent {
					t.Fatalf("decay_tier(%q, %q) = %q, %v; want permanent", extra, category, p, err)
				}
			}
		}
	})
}

func FuzzLambdaEdge(f *testing.F) {
	for _, s := range []struct {
		a, b         string
		count, estab float64
	}{
		{TierStandard, TierStandard, 0, 10},
		{TierStandard, TierStandard, 12, 10},
		{TierPermanent, TierStandard, 0, 10},
		{TierEphemeral, TierEphemeral, 9, 10},
		{TierDurable, TierEphemeral, 3, 3},
		{"rock", TierStandard, 0, 10},
		{TierStandard, TierStandard, -1, 10},
	} {
		f.Add(s.a, s.b, s.count, s.estab)
	}
	f.Fuzz(func(t *testing.T, a, b string, count, estab float64) {
		la, errA := TierLambda(a)
		lb, errB := TierLambda(b)
		known := func(tier string) bool { return slices.Contains(blockTiers, tier) }
		if checkErr(t, "tier_lambda", known(a), errA) && !(la > 0 && la <= 0.05) {
			t.Fatalf("tier_lambda(%q) = %v", a, la)
		}
		checkErr(t, "tier_lambda", known(b), errB)
		got, err := LambdaEdge(a, b, count, estab)
		if !checkErr(t, "lambda_edge", known(a) && known(b) && usable(count, estab), err) {
			return
		}
		want := min(la, lb) / 2
		if count >= estab {
			want /= 2
		}
		if got != want {
			t.Fatalf("lambda_edge(%q, %q, %v, %v) = %v, want %v", a, b, count, estab, got, want)
		}
	})
}

func FuzzTidelineScore(f *testing.F) {
	for _, s := range []struct {
		imp, rate, d1, d2, access float64
		tier                      string
	}{
		{0.6, 0.03, 10, 100, 3, FactLong},
		{0.4, 0.08, 7, 30, 0, FactShort},
		{0.85, 0.01, 30, 10000, 5, FactPermanent},
		{1, 0, 0, 1, 1e6, ""},
		{0.6, 0.03, -5, 0, 3, FactLong},
		{1.5, 0.03, 1, 2, 0, FactLong},
		{0.5, 1e308, 0, 1e308, 1e308, FactShort},
		{0.5, 0.03, 1, 2, 0, "forever"},
	} {
		f.Add(s.imp, s.rate, s.d1, s.d2, s.access, s.tier)
	}
	f.Fuzz(func(t *testing.T, imp, rate, d1, d2, access float64, tier string) {
		lo, hi := ordered(d1, d2)
		a, errA := TidelineScore(imp, rate, lo, access, tier)
		b, errB := TidelineScore(imp, rate, hi, access, tier)
		args := usable(imp, rate, access) && imp <= 1 && slices.Contains([]string{"", FactPermanent, FactLong, FactShort}, tier)
		okA := checkErr(t, "tideline_score", args && isFinite(lo), errA)
		okB := checkErr(t, "tideline_score", args && isFinite(hi), errB)
		if !okA || !okB {
			return
		}
		for _, s := range []float64{a, b} {
			if !(s >= 0 && s <= 1) {
				t.Fatalf("tideline_score = %v, outside [0, 1]", s)
			}
			if tier == FactPermanent && s != 1 {
				t.Fatalf("permanent tideline_score = %v, want 1", s)
			}
		}
		if b > a+slack {
			t.Fatalf("tideline_score rose with days: %v at %v, %v at %v", a, lo, b, hi)
		}
		if bound := imp * (1 + math.Log1p(access)*0.1); tier != FactPermanent && a > bound*(1+slack) {
			t.Fatalf("tideline_score %v above importance × reinforcement %v", a, bound)
		}
	})
}

func FuzzSegmentDefaults(f *testing.F) {
	for _, s := range append(SegmentNames(), "", "Identity", "episode", "identity ") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, segment string) {
		s, err := SegmentDefaults("segment_importance", segment)
		if !checkErr(t, "segment_importance", slices.Contains(SegmentNames(), segment), err) {
			return
		}
		if !slices.Contains([]string{FactPermanent, FactLong, FactShort}, s.Tier) ||
			!(s.Importance > 0 && s.Importance <= 1) || !(s.DecayRate >= 0 && s.DecayRate < 1) {
			t.Fatalf("segment %q = %+v", segment, s)
		}
		if _, err := TidelineScore(s.Importance, s.DecayRate, 1, 0, s.Tier); err != nil {
			t.Fatalf("segment %q defaults are not a valid score input: %v", segment, err)
		}
	})
}

// severity orders the actions: keep < archive < prune.
var severity = map[string]int{ActionKeep: 0, ActionArchive: 1, ActionPrune: 2}

func FuzzLifecycleAction(f *testing.F) {
	for _, s := range []struct {
		s1, s2    float64
		tier      string
		confirmed bool
	}{
		{0.04, 0.05, FactLong, false},
		{0.149, 0.15, FactShort, false},
		{0.049, 0.05, FactShort, false},
		{0, 1, FactPermanent, false},
		{0, 0.1, FactShort, true},
		{0.1, 0.2, "", false},
		{math.NaN(), 0, FactLong, false},
	} {
		f.Add(s.s1, s.s2, s.tier, s.confirmed)
	}
	f.Fuzz(func(t *testing.T, s1, s2 float64, tier string, confirmed bool) {
		lo, hi := ordered(s1, s2)
		a, errA := LifecycleAction(lo, tier, confirmed)
		b, errB := LifecycleAction(hi, tier, confirmed)
		valid := slices.Contains([]string{FactPermanent, FactLong, FactShort}, tier)
		share := func(x float64) bool { return x >= 0 && x <= 1 }
		okA := checkErr(t, "lifecycle_action", valid && share(lo), errA)
		okB := checkErr(t, "lifecycle_action", valid && share(hi), errB)
		if !okA || !okB {
			return
		}
		for _, x := range []string{a, b} {
			if _, ok := severity[x]; !ok {
				t.Fatalf("lifecycle_action = %q", x)
			}
			if (tier == FactPermanent || confirmed) && x != ActionKeep {
				t.Fatalf("%s fact (confirmed %v) gets %q, want keep", tier, confirmed, x)
			}
			if tier == FactLong && x == ActionPrune {
				t.Fatal("a long fact was pruned")
			}
		}
		if severity[a] < severity[b] {
			t.Fatalf("score %v → %q but higher score %v → %q", lo, a, hi, b)
		}
		if hi >= ArchiveScore && b != ActionKeep {
			t.Fatalf("score %v ≥ 0.15 → %q, want keep", hi, b)
		}
	})
}

func FuzzEdgeStrength(f *testing.F) {
	for _, s := range [][3]float64{{0.5, 0, 9}, {0, 1, 10}, {0.6, 10, 0}, {-0.1, 0, 1}, {math.MaxFloat64, math.MaxFloat64, 0}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, w, c1, c2 float64) {
		lo, hi := ordered(c1, c2)
		a, errA := EdgeStrength(w, lo)
		b, errB := EdgeStrength(w, hi)
		okA := checkErr(t, "edge_strength", usable(w, lo), errA)
		okB := checkErr(t, "edge_strength", usable(w, hi), errB)
		if !okA || !okB {
			return
		}
		if !isFinite(a) || !isFinite(b) || a < w || b < a {
			t.Fatalf("edge_strength(%v, %v..%v) = %v..%v: want finite, ≥ weight, non-decreasing in count", w, lo, hi, a, b)
		}
	})
}

func FuzzLogNormalise(f *testing.F) {
	for _, s := range [][2]float64{{0, 0}, {12, 12}, {1, 3}, {9, 99}, {-1, 10}, {5e-324, 5e-324}, {0, math.MaxFloat64}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, x, y float64) {
		if _, err := LogNormalise(x, y); usable(x, y) && x > y && err == nil {
			t.Fatalf("log_normalise(%v, %v) accepted a count above max_count", x, y)
		}
		count, maxCount := ordered(x, y)
		got, err := LogNormalise(count, maxCount)
		if !checkErr(t, "log_normalise", usable(count, maxCount), err) {
			return
		}
		if !(got >= 0 && got <= 1+slack) {
			t.Fatalf("log_normalise(%v, %v) = %v, outside [0, 1]", count, maxCount, got)
		}
		if half, _ := LogNormalise(count/2, maxCount); half > got*(1+slack) {
			t.Fatalf("log_normalise is not monotone: %v at %v, %v at %v", got, count, half, count/2)
		}
	})
}

func FuzzCompositeScore(f *testing.F) {
	for _, s := range [][4]float64{{1, 1, 1, 1}, {0.5, 0, 0, 0}, {0.5, 0.8, 0.25, 0.5}, {math.NaN(), 0, 0, 0}, {-1, 2, -3, 4},
		{1.0000000000000002, 1, 1, 1}, {0, 0, 0, -5e-324}} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, conf, recency, central, reinf float64) {
		// Every term is a share in [0, 1]; anything else is refused.
		unit := func(v float64) bool { return v >= 0 && v <= 1 }
		got, err := CompositeScore(conf, recency, central, reinf)
		if !checkErr(t, "composite_score", unit(conf) && unit(recency) && unit(central) && unit(reinf), err) {
			return
		}
		if !(got >= 0 && got <= 1+slack) {
			t.Fatalf("composite_score(%v, %v, %v, %v) = %v, outside [0, 1]", conf, recency, central, reinf, got)
		}
	})
}

// FuzzHalfLives: a declared half-life is read or refused with an
// ArgError, never a panic; one read gives a finite rate above 0 whose
// recency halves over it, and the tier it names alone changes rate.
func FuzzHalfLives(f *testing.F) {
	for _, s := range []struct{ tier, value string }{
		{TierStandard, `"30d"`}, {TierDurable, `"2w"`}, {TierEphemeral, `36`}, {TierEphemeral, `"90m"`},
		{TierPermanent, `"9d"`}, {TierStandard, `"0h"`}, {TierStandard, `-3`}, {TierStandard, `1e-320`}, {"lasting", `"1d"`},
		{TierStandard, `"1e309h"`}, {TierStandard, `null`}, {TierStandard, `"d"`},
	} {
		f.Add(s.tier, s.value)
	}
	f.Fuzz(func(t *testing.T, tier, value string) {
		text := `{` + strconv.Quote(tier) + `:` + value + `}`
		rates, err := ParseHalfLives("tier_lambda", "half_lives", text)
		if err != nil {
			wantArgErr(t, err, "memdecay: tier_lambda: half_lives")
			return
		}
		r, ok := rates[tier]
		if !ok || len(rates) != 1 || !(r > 0) || math.IsInf(r, 0) || tier == TierPermanent {
			t.Fatalf("%s: rates %v", text, rates)
		}
		for _, other := range blockTiers {
			got, err := TierLambdaMapped(other, rates)
			ref, _ := TierLambda(other)
			if err != nil || (other == tier && got != r) || (other != tier && got != ref) {
				t.Fatalf("%s: tier_lambda(%s) = %v, %v", text, other, got, err)
			}
		}
		if h := math.Ln2 / r; !math.IsInf(h, 0) && h > 1e-300 {
			if rec := math.Exp(-r * h); math.Abs(rec-0.5) > 1e-9 {
				t.Fatalf("%s: recency after one half-life %v", text, rec)
			}
		}
	})
}

// FuzzCategoryTiers: an app's category map is read or refused with an
// ArgError; read, a category it names takes its tier unless a tag says
// otherwise, and any other takes the reference rules' tier.
func FuzzCategoryTiers(f *testing.F) {
	for _, s := range []struct{ category, tier, tags, asked string }{
		{"goal", "durable", "", "goal"}, {"chat", "ephemeral", "self/goal", "chat"}, {"x", "permanent", "", "mind"},
		{"x", "lasting", "", "x"}, {"", "standard", `["self/constitutional"]`, ""}, {"a\"b", "durable", "[1]", "a\"b"},
	} {
		f.Add(s.category, s.tier, s.tags, s.asked)
	}
	f.Fuzz(func(t *testing.T, category, tier, tags, asked string) {
		if !utf8.ValidString(category) || !utf8.ValidString(tier) {
			return // JSON text holds UTF-8
		}
		quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		text := `{` + quote(category) + `:` + quote(tier) + `}`
		cats, err := ParseCategoryTiers("decay_tier", "category_tiers", text)
		if !checkErr(t, "decay_tier", slices.Contains(blockTiers, tier), err) {
			return
		}
		got, err := DecayTierMapped(tags, asked, cats)
		ref, refErr := DecayTier(tags, asked)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("decay_tier(%q, %q, %s): %v; without the map: %v", tags, asked, text, err, refErr)
		}
		if err != nil {
			return
		}
		fromTags, _ := DecayTier(tags, "")
		switch {
		case fromTags != TierStandard && got != fromTags:
			t.Fatalf("decay_tier(%q, %q, %s) = %s, want the tags' %s", tags, asked, text, got, fromTags)
		case fromTags == TierStandard && asked == category && got != tier:
			t.Fatalf("decay_tier(%q, %q, %s) = %s, want the map's %s", tags, asked, text, got, tier)
		case asked != category && got != ref:
			t.Fatalf("decay_tier(%q, %q, %s) = %s, want the reference's %s", tags, asked, text, got, ref)
		}
	})
}

// FuzzPlainTagArray: where the shortcut for json_group_array's plain
// output reads a list, the JSON decoder reads the same one.
func FuzzPlainTagArray(f *testing.F) {
	for _, s := range []string{`[]`, `["a"]`, `["self/value","misc"]`, `[null,"self/goal",null]`, `["a",]`,
		`[,"a"]`, `["a""b"]`, `[nullx]`, `["a\"b"]`, `[ "a" ]`, `["é"]`, "[\"a\tb\"]", `["a"`, `[null`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := plainTagArray(s)
		if !ok {
			return
		}
		v, err := readJSON(s)
		if err != nil {
			t.Fatalf("plainTagArray(%q) = %q, but the decoder refuses it: %v", s, fast, err)
		}
		raw, isArray := v.([]any)
		if !isArray {
			t.Fatalf("plainTagArray(%q) = %q, but the decoder reads %T", s, fast, v)
		}
		var slow []string
		for _, item := range raw {
			if item != nil {
				slow = append(slow, item.(string))
			}
		}
		if !slices.Equal(fast, slow) {
			t.Fatalf("plainTagArray(%q) = %q, the decoder %q", s, fast, slow)
		}
	})
}
