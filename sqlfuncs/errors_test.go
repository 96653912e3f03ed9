package sqlfuncs

import (
	"errors"
	"math"
	"testing"
)

// TestArgErrors checks the SQL functions' convention: a negative weight, rate or
// half-life, a zero half-life or scale, an infinite value or NaN is an error
// "memdecay: <function>: <argument> <what is wrong>", never a silent 0.
func TestArgErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	curve := func(text string) *Curve { return parseCurve(t, text) }
	exp := curve(`{"model":"exponential","lambda":0.01}`)
	ml := curve(`{"model":"multi_linear","tiers":` + ref003TopologyJSON + `}`)
	first := func(_ float64, err error) error { return err }
	horizon := func(_ Horizon, err error) error { return err }
	for _, tc := range []struct {
		err    error
		prefix string
	}{
		{first(EffectiveWeight(-0.5, 0.01, 1)), "memdecay: effective_weight: weight must not be negative (got -0.5)"},
		{first(EffectiveWeight(nan, 0.01, 1)), "memdecay: effective_weight: weight is not a number"},
		{first(EffectiveWeight(inf, 0.01, 1)), "memdecay: effective_weight: weight must be finite (got +Inf)"},
		{first(EffectiveWeight(0.5, -0.01, 1)), "memdecay: effective_weight: lambda must not be negative"},
		{first(EffectiveWeight(0.5, -inf, 1)), "memdecay: effective_weight: lambda must be finite (got -Inf)"},
		{first(EffectiveWeight(0.5, 0.01, nan)), "memdecay: effective_weight: elapsed is not a number"},
		{first(EffectiveWeight(0.5, 0.01, inf)), "memdecay: effective_weight: elapsed must be finite"},
		{first(EffectiveWeight(0.5, 0.01, -inf)), "memdecay: effective_weight: elapsed must be finite"},

		{first(HalfLifeWeight(-1, 90, 1)), "memdecay: half_life_weight: weight must not be negative"},
		{first(HalfLifeWeight(1, -90, 1)), "memdecay: half_life_weight: half_life must not be negative"},
		{first(HalfLifeWeight(1, 0, 1)), "memdecay: half_life_weight: half_life must be greater than zero"},
		{first(HalfLifeWeight(1, math.Copysign(0, -1), 1)), "memdecay: half_life_weight: half_life must be greater than zero"},
		{first(HalfLifeWeight(1, inf, 1)), "memdecay: half_life_weight: half_life must be finite"},
		{first(HalfLifeWeight(1, nan, 1)), "memdecay: half_life_weight: half_life is not a number"},
		{first(HalfLifeWeight(1, 90, -inf)), "memdecay: half_life_weight: elapsed must be finite"},

		{first(LinearWeight(-1, 0.25, 1, 0)), "memdecay: linear_weight: weight must not be negative"},
		{first(LinearWeight(1, -0.25, 1, 0)), "memdecay: linear_weight: rate must not be negative"},
		{first(LinearWeight(1, nan, 1, 0)), "memdecay: linear_weight: rate is not a number"},
		{first(LinearWeight(1, 0.25, 1, -1)), "memdecay: linear_weight: hold must not be negative"},
		{first(LinearWeight(1, 0.25, 1, inf)), "memdecay: linear_weight: hold must be finite"},
		{first(LinearWeight(1, 0.25, nan, 0)), "memdecay: linear_weight: elapsed is not a number"},

		{first(MultiLinearWeight(ref003DefaultTiers, nan)), "memdecay: multi_linear_weight: elapsed is not a number"},
		{first(MultiLinearWeight(ref003DefaultTiers, inf)), "memdecay: multi_linear_weight: elapsed must be finite"},

		{first(PowerLawWeight(-1, 1, 1, 1)), "memdecay: power_law_weight: weight must not be negative"},
		{first(PowerLawWeight(1, -1, 1, 1)), "memdecay: power_law_weight: alpha must not be negative"},
		{first(PowerLawWeight(1, inf, 1, 1)), "memdecay: power_law_weight: alpha must be finite"},
		{first(PowerLawWeight(1, 1, 1, 0)), "memdecay: power_law_weight: scale must be greater than zero"},
		{first(PowerLawWeight(1, 1, 1, -1)), "memdecay: power_law_weight: scale must not be negative"},
		{first(PowerLawWeight(1, 1, nan, 1)), "memdecay: power_law_weight: elapsed is not a number"},

		{horizon(DecayHorizon(-1, 0.01, 0.1)), "memdecay: decay_horizon: weight must not be negative"},
		{horizon(DecayHorizon(1, -0.01, 0.1)), "memdecay: decay_horizon: lambda must not be negative"},
		{horizon(DecayHorizon(1, 0.01, -0.1)), "memdecay: decay_horizon: threshold must not be negative"},
		{horizon(DecayHorizon(1, 0.01, inf)), "memdecay: decay_horizon: threshold must be finite"},
		{horizon(DecayHorizon(nan, 0.01, 0.1)), "memdecay: decay_horizon: weight is not a number"},

		{first(exp.Weight(-1, 1)), "memdecay: curve_weight: weight must not be negative"},
		{first(exp.Weight(inf, 1)), "memdecay: curve_weight: weight must be finite"},
		{first(ml.Weight(1, nan)), "memdecay: curve_weight: elapsed is not a number"},
		{horizon(exp.Horizon(-1, 0.1)), "memdecay: curve_horizon: weight must not be negative"},
		{horizon(ml.Horizon(1, -0.1)), "memdecay: curve_horizon: threshold must not be negative"},
		{horizon(ml.Horizon(1, nan)), "memdecay: curve_horizon: threshold is not a number"},
	} {
		wantArgErr(t, tc.err, tc.prefix)
	}
}

// TestArgErrorFields checks the parts of an ArgError a caller can branch on.
func TestArgErrorFields(t *testing.T) {
	_, err := HalfLifeWeight(1, 0, 1)
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("%v is not an *ArgError", err)
	}
	if ae.Func != "half_life_weight" || ae.Arg != "half_life" || ae.Problem != "must be greater than zero" {
		t.Errorf("ArgError = %+v", *ae)
	}
	if got, want := ae.Error(), "memdecay: half_life_weight: half_life must be greater than zero"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestNegativeElapsedIsZero: a clock behind the anchor never amplifies a
// weight; every curve gives the start weight at a negative elapsed time.
func TestNegativeElapsedIsZero(t *testing.T) {
	curves := []struct {
		name string
		f    func(elapsed float64) (float64, error)
	}{
		{"effective_weight", func(e float64) (float64, error) { return EffectiveWeight(0.5, 0.005, e) }},
		{"half_life_weight", func(e float64) (float64, error) { return HalfLifeWeight(0.5, 90, e) }},
		{"linear_weight", func(e float64) (float64, error) { return LinearWeight(0.5, 0.25, e, 0) }},
		{"delayed linear_weight", func(e float64) (float64, error) { return LinearWeight(0.5, 0.25, e, 3) }},
		{"power_law_weight", func(e float64) (float64, error) { return PowerLawWeight(0.5, 1, e, 1) }},
	}
	for _, e := range []float64{-1e-9, -1, -500, -math.MaxFloat64} {
		for _, c := range curves {
			if got, err := c.f(e); err != nil || got != 0.5 {
				t.Errorf("%s at elapsed %v = %v, %v; want 0.5", c.name, e, got, err)
			}
		}
		if got := must(t)(MultiLinearWeight(ref003DefaultTiers, e)); !near(got, 1.8, 1e-15) {
			t.Errorf("multi_linear_weight at elapsed %v = %v, want 1.8", e, got)
		}
		for _, m := range []string{
			`{"model":"exponential","lambda":0.01}`,
			`{"model":"half_life","half_life":90}`,
			`{"model":"linear","rate":0.25}`,
			`{"model":"delayed_linear","rate":0.25,"hold":2}`,
			`{"model":"power_law","alpha":1}`,
		} {
			if got := must(t)(parseCurve(t, m).Weight(0.5, e)); got != 0.5 {
				t.Errorf("curve_weight(%s, 0.5, %v) = %v, want 0.5", m, e, got)
			}
		}
		ml := parseCurve(t, `{"model":"multi_linear","tiers":`+ref003TopologyJSON+`}`)
		if got := must(t)(ml.Weight(0.5, e)); !near(got, 0.5, 1e-15) {
			t.Errorf("multi-linear curve_weight at elapsed %v = %v, want 0.5", e, got)
		}
	}
}
