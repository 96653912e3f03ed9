package sqlfuncs

import (
	"math"
	"slices"
	"testing"
)

func parseCurve(t *testing.T, text string) *Curve {
	t.Helper()
	c, err := ParseCurve("curve_weight", "curve_json", text)
	if err != nil {
		t.Fatalf("ParseCurve(%s): %v", text, err)
	}
	return c
}

func TestParseCurve(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Curve
	}{
		{`{"model":"exponential","lambda":0.005}`, Curve{Model: ModelExponential, Lambda: 0.005}},
		{`{"model":"exponential","lambda":0}`, Curve{Model: ModelExponential}},
		{`{"model":"half_life","half_life":90}`, Curve{Model: ModelHalfLife, HalfLife: 90}},
		{`{"model":"linear","rate":0.25}`, Curve{Model: ModelLinear, Rate: 0.25}},
		{`{"model":"delayed_linear","rate":0.25,"hold":0.5}`, Curve{Model: ModelDelayedLinear, Rate: 0.25, Hold: 0.5}},
		{`{"model":"power_law","alpha":1}`, Curve{Model: ModelPowerLaw, Alpha: 1, Scale: 1}}, // scale defaults to 1
		{`{"model":"power_law","alpha":1,"scale":60}`, Curve{Model: ModelPowerLaw, Alpha: 1, Scale: 60}},
		{` {"model":"half_life","half_life":1} `, Curve{Model: ModelHalfLife, HalfLife: 1}},
	} {
		c := parseCurve(t, tc.text)
		if c.Model != tc.want.Model || c.Lambda != tc.want.Lambda || c.HalfLife != tc.want.HalfLife ||
			c.Rate != tc.want.Rate || c.Hold != tc.want.Hold || c.Alpha != tc.want.Alpha || c.Scale != tc.want.Scale {
			t.Errorf("ParseCurve(%s) = %+v, want %+v", tc.text, *c, tc.want)
		}
	}
	c := parseCurve(t, `{"model":"multi_linear","tiers":`+ref003TopologyJSON+`}`)
	if len(c.Tiers) != 2 || c.Tiers[0] != (LinearTier{Weight: 0.6, Hold: 0.5, Rate: 0.3}) {
		t.Errorf("multi_linear tiers = %+v", c.Tiers)
	}
	if !slices.Equal(Models, []string{"exponential", "half_life", "linear", "delayed_linear", "multi_linear", "power_law"}) {
		t.Errorf("Models = %v", Models)
	}
}

func TestParseCurveErrors(t *testing.T) {
	const p = "memdecay: curve_horizon: curve_json"
	for _, tc := range []struct {
		name, text, prefix string
	}{
		{"not JSON", `half_life 90`, p + " is not valid JSON"},
		{"empty", ``, p + " is empty"},
		{"an array", `[1]`, p + " must be a JSON object"},
		{"unknown field", `{"model":"half_life","halflife":90}`, p + ` key "halflife" does not apply to model half_life`},
		{"trailing data", `{"model":"linear","rate":1} {}`, p + " is not valid JSON: more follows the value"},
		{"wrong type", `{"model":"linear","rate":"fast"}`, p + " rate must be a number"},
		{"number out of range", `{"model":"exponential","lambda":1e999}`, p + " lambda must be finite"},
		{"no model", `{"lambda":1}`, p + " has no model"},
		{"null", `null`, p + " must be a JSON object"},
		{"unknown model", `{"model":"sigmoid"}`, p + " model"},
		{"negative lambda", `{"model":"exponential","lambda":-1}`, p + " lambda"},
		{"zero half-life", `{"model":"half_life","half_life":0}`, p + " half_life"},
		{"missing half-life", `{"model":"half_life"}`, p + " has no half_life"},
		{"negative half-life", `{"model":"half_life","half_life":-90}`, p + " half_life"},
		{"negative rate", `{"model":"linear","rate":-0.1}`, p + " rate"},
		{"negative hold", `{"model":"delayed_linear","rate":0.1,"hold":-1}`, p + " hold"},
		{"negative alpha", `{"model":"power_law","alpha":-1}`, p + " alpha"},
		{"negative scale", `{"model":"power_law","alpha":1,"scale":-1}`, p + " scale"},
		{"no tiers", `{"model":"multi_linear"}`, p + " has no tiers"},
		{"empty tiers", `{"model":"multi_linear","tiers":[]}`, p + " has no tiers"},
		{"negative tier weight", `{"model":"multi_linear","tiers":[{"weight":1},{"weight":-1}]}`, p + " tier 1 weight"},
		{"negative tier rate", `{"model":"multi_linear","tiers":[{"weight":1,"rate":-1}]}`, p + " tier 0 rate"},
		{"unknown tier field", `{"model":"multi_linear","tiers":[{"weight":1,"decay":1}]}`, p + ` tier 0 key "decay" is unknown`},
	} {
		_, err := ParseCurve("curve_horizon", "curve_json", tc.text)
		if err == nil {
			t.Errorf("%s: ParseCurve(%s) accepted", tc.name, tc.text)
			continue
		}
		wantArgErr(t, err, tc.prefix)
	}
}

func TestParseTiersErrors(t *testing.T) {
	const p = "memdecay: multi_linear_weight: tiers_json"
	for _, tc := range []struct {
		text, prefix string
	}{
		{`[]`, p + " has no tiers"},
		{`null`, p + " must be a JSON array of tiers"},
		{`{"weight":1}`, p + " must be a JSON array of tiers"},
		{`[{"weight":1,"hold":1,"rate":1,"name":"short"}]`, p + ` tier 0 key "name" is unknown`},
		{`[{"weight":1}] [`, p + " is not valid JSON"},
		{`[{"weight":-0.5}]`, p + " tier 0 weight must not be negative"},
		{`[{"weight":1},{"weight":1,"hold":-5}]`, p + " tier 1 hold must not be negative"},
		{`[{"weight":1,"rate":-0.001}]`, p + " tier 0 rate must not be negative"},
	} {
		_, err := ParseTiers("multi_linear_weight", "tiers_json", tc.text)
		wantArgErr(t, err, tc.prefix)
	}
}

// TestCurveWeight checks that each model gives the same value as its own
// SQL function, and reference 004's 90-day half-life examples.
func TestCurveWeight(t *testing.T) {
	hl := parseCurve(t, `{"model":"half_life","half_life":90}`)
	for _, tc := range []struct{ days, want float64 }{{0, 1.00}, {45, 0.71}, {90, 0.50}, {180, 0.25}} {
		got := must(t)(hl.Weight(1, tc.days))
		if math.Round(got*100)/100 != tc.want {
			t.Errorf("004 half-life 90 after %v days = %.4f, want %.2f", tc.days, got, tc.want)
		}
	}

	exp := parseCurve(t, `{"model":"exponential","lambda":0.005}`)
	lin := parseCurve(t, `{"model":"linear","rate":0.25}`)
	dl := parseCurve(t, `{"model":"delayed_linear","rate":0.25,"hold":0.5}`)
	pl := parseCurve(t, `{"model":"power_law","alpha":1}`)
	pl60 := parseCurve(t, `{"model":"power_law","alpha":0.5,"scale":60}`)
	ml := parseCurve(t, `{"model":"multi_linear","tiers":`+ref003DefaultJSON+`}`)
	topo := parseCurve(t, `{"model":"multi_linear","tiers":`+ref003TopologyJSON+`}`)
	for _, e := range []float64{-1, 0, 0.25, 0.5, 1, 2.5, 4.5, 24, 168, 500, 3_600_000, 86_415_000} {
		for _, w := range []float64{0, 0.5, 1, 1.8} {
			same := func(name string, c *Curve, want float64) {
				t.Helper()
				got := must(t)(c.Weight(w, e))
				wantNear(t, name, got, want, 1e-12)
			}
			same("exponential", exp, must(t)(EffectiveWeight(w, 0.005, e)))
			same("half_life", hl, must(t)(HalfLifeWeight(w, 90, e)))
			same("linear", lin, must(t)(LinearWeight(w, 0.25, e, 0)))
			same("delayed_linear", dl, must(t)(LinearWeight(w, 0.25, e, 0.5)))
			same("power_law scale 1", pl, must(t)(PowerLawWeight(w, 1, e, 1)))
			same("power_law scale 60", pl60, must(t)(PowerLawWeight(w, 0.5, e, 60)))
			// A multi-linear curve's tiers are scaled by the row's weight.
			same("multi_linear default", ml, w*must(t)(MultiLinearWeight(ref003DefaultTiers, e)))
			same("multi_linear topology", topo, w*must(t)(MultiLinearWeight(topo.Tiers, e)))
		}
	}
}

// TestCurveHorizon checks curve_horizon for every model: the value, and that
// the curve at the horizon equals the threshold.
func TestCurveHorizon(t *testing.T) {
	const hour, day = 3_600_000.0, 86_400_000.0
	for _, tc := range []struct {
		name              string
		curve             string
		weight, threshold float64
		want              float64
	}{
		{"exponential 000 §3.3 weight 0.5", `{"model":"exponential","lambda":0.005}`, 0.5, 0.1, math.Log(5) / 0.005},
		{"004 half-life 90 to 0.5", `{"model":"half_life","half_life":90}`, 1, 0.5, 90},
		{"004 half-life 90 to 0.25", `{"model":"half_life","half_life":90}`, 1, 0.25, 180},
		{"004 half-life 90 to minimumWeight 0.10", `{"model":"half_life","half_life":90}`, 1, 0.1, 90 * math.Log2(10)},
		{"linear death at w0/k", `{"model":"linear","rate":0.25}`, 1, 0, 4},
		{"linear to 0.1", `{"model":"linear","rate":0.25}`, 1, 0.1, 3.6},
		{"003 delayed linear death at 4.5 h", `{"model":"delayed_linear","rate":0.25,"hold":0.5}`, 1, 0, 4.5},
		{"003 delayed linear to 0.1", `{"model":"delayed_linear","rate":0.25,"hold":0.5}`, 1, 0.1, 4.1},
		{"delayed linear at threshold dies after hold", `{"model":"delayed_linear","rate":0.25,"hold":0.5}`, 0.1, 0.1, 0.5},
		{"003 power law α=1 1.8 to 0.1", `{"model":"power_law","alpha":1}`, 1.8, 0.1, 17},
		{"power law α=2 scale 10 to 0.25", `{"model":"power_law","alpha":2,"scale":10}`, 1, 0.25, 10},
		{"003 default multi-linear death", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 1, 0, day + 30_000},
		{"003 default multi-linear to 1.8 (ends at the short hold)", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 1, 1.8, 300_000},
		{"003 default multi-linear to 1.0", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 1, 1.0, 300_800},
		{"003 default multi-linear to 0.5", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 1, 0.5, hour + 3000},
		{"003 default multi-linear to 0.1", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 1, 0.1, day + 20_000},
		{"003 default multi-linear at half weight to 0.25", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 0.5, 0.25, hour + 3000},
		{"003 topology death at 28 h", `{"model":"multi_linear","tiers":` + ref003TopologyJSON + `}`, 1, 0, 28},
		{"003 topology to 0.5", `{"model":"multi_linear","tiers":` + ref003TopologyJSON + `}`, 1, 0.5, 0.5 + 0.5/0.3},
		{"003 topology to 0.2", `{"model":"multi_linear","tiers":` + ref003TopologyJSON + `}`, 1, 0.2, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parseCurve(t, tc.curve)
			h, err := c.Horizon(tc.weight, tc.threshold)
			if err != nil {
				t.Fatal(err)
			}
			if h.Never {
				t.Fatalf("horizon is never, want %v", tc.want)
			}
			wantNear(t, "horizon", h.At, tc.want, 1e-9)
			at := must(t)(c.Weight(tc.weight, h.At))
			wantNear(t, "weight at horizon", at, tc.threshold, 1e-9)
		})
	}
}

func TestCurveHorizonZeroAndNever(t *testing.T) {
	for _, tc := range []struct {
		name              string
		curve             string
		weight, threshold float64
		want              Horizon
	}{
		{"exponential already below", `{"model":"exponential","lambda":0.005}`, 0.05, 0.1, Horizon{}},
		{"exponential lambda 0", `{"model":"exponential","lambda":0}`, 0.5, 0.1, Horizon{Never: true}},
		{"exponential threshold 0", `{"model":"exponential","lambda":0.005}`, 0.5, 0, Horizon{Never: true}},
		{"half-life already below", `{"model":"half_life","half_life":90}`, 0.05, 0.1, Horizon{}},
		{"half-life threshold 0", `{"model":"half_life","half_life":90}`, 1, 0, Horizon{Never: true}},
		{"linear already below", `{"model":"linear","rate":0.25}`, 0.05, 0.1, Horizon{}},
		{"linear weight 0 is dead", `{"model":"linear","rate":0.25}`, 0, 0, Horizon{}},
		{"linear rate 0", `{"model":"linear","rate":0}`, 1, 0.1, Horizon{Never: true}},
		{"delayed linear rate 0", `{"model":"delayed_linear","rate":0,"hold":5}`, 1, 0, Horizon{Never: true}},
		{"power law already below", `{"model":"power_law","alpha":1}`, 0.05, 0.1, Horizon{}},
		{"power law alpha 0", `{"model":"power_law","alpha":0}`, 1, 0.1, Horizon{Never: true}},
		{"power law threshold 0", `{"model":"power_law","alpha":1}`, 1, 0, Horizon{Never: true}},
		{"multi-linear already below", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 1, 2, Horizon{}},
		{"multi-linear weight 0", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 0, 0.1, Horizon{}},
		{"multi-linear weight 0 dies at once", `{"model":"multi_linear","tiers":` + ref003DefaultJSON + `}`, 0, 0, Horizon{}},
		{"multi-linear undying tier", `{"model":"multi_linear","tiers":[{"weight":1,"rate":1},{"weight":0.2,"hold":3}]}`, 1, 0, Horizon{Never: true}},
		{"multi-linear floor above threshold", `{"model":"multi_linear","tiers":[{"weight":1,"rate":1},{"weight":0.2,"hold":3}]}`, 1, 0.1, Horizon{Never: true}},
	} {
		c := parseCurve(t, tc.curve)
		h, err := c.Horizon(tc.weight, tc.threshold)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if h != tc.want {
			t.Errorf("%s: curve_horizon = %+v, want %+v", tc.name, h, tc.want)
		}
	}
}

// TestCurveHorizonMatchesDecayHorizon: an exponential curve's horizon is
// decay_horizon's, and a half-life curve's is decay_horizon with ln2/half-life.
func TestCurveHorizonMatchesDecayHorizon(t *testing.T) {
	exp := parseCurve(t, `{"model":"exponential","lambda":0.0025}`)
	hl := parseCurve(t, `{"model":"half_life","half_life":90}`)
	for _, w := range []float64{0, 0.05, 0.1, 0.4, 0.6, 0.8, 1} {
		for _, thr := range []float64{0, 0.05, 0.1, 0.5} {
			a, err1 := exp.Horizon(w, thr)
			b, err2 := DecayHorizon(w, 0.0025, thr)
			if err1 != nil || err2 != nil || a != b {
				t.Errorf("exponential w=%v thr=%v: curve %+v %v, decay_horizon %+v %v", w, thr, a, err1, b, err2)
			}
			c, err1 := hl.Horizon(w, thr)
			d, err2 := DecayHorizon(w, math.Ln2/90, thr)
			if err1 != nil || err2 != nil || c.Never != d.Never || !near(c.At, d.At, 1e-12) {
				t.Errorf("half-life w=%v thr=%v: curve %+v %v, decay_horizon %+v %v", w, thr, c, err1, d, err2)
			}
		}
	}
}
