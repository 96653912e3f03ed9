package sqlfuncs

import (
	"math"
	"testing"
)

// TestEdgeDecayWorkedExamples is reference 000 §3.3: λ_edge from the block
// tiers, effective weight = weight × exp(−λ_edge × hours_since), and the
// PRUNED / survives verdict against EDGE_PRUNE_THRESHOLD 0.10.
func TestEdgeDecayWorkedExamples(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a, b      string
		count     float64
		lambda    float64 // λ_edge column
		hours     float64
		weight    float64
		effective float64 // to 3 decimals
		pruned    bool
		ref       string // what the reference prints, where that differs
	}{
		{"standard blocks, stale", TierStandard, TierStandard, 0, 0.005, 500, 0.50, 0.041, true, ""},
		// 0.5 × e^−0.25 = 0.38940.
		{"standard blocks, recent", TierStandard, TierStandard, 0, 0.005, 50, 0.50, 0.389, false, "reference prints 0.390"},
		{"established (count=12)", TierStandard, TierStandard, 12, 0.0025, 400, 0.50, 0.184, false, ""},
		{"non-established (count=5)", TierStandard, TierStandard, 5, 0.005, 400, 0.50, 0.068, true, ""},
		{"permanent+standard blocks", TierPermanent, TierStandard, 0, 0.000005, 500, 0.50, 0.499, false, ""},
		{"ephemeral blocks", TierEphemeral, TierEphemeral, 0, 0.025, 100, 0.50, 0.041, true, ""},
		// §7 test comments and §8 edge cases.
		{"§7 test 2: 10 hours since", TierStandard, TierStandard, 0, 0.005, 10, 0.50, 0.476, false, "≈ 0.475 (0.47561)"},
		{"§7 test 3: count=10 at 300 h", TierStandard, TierStandard, 10, 0.0025, 300, 0.50, 0.236, false, ""},
		{"§7 test 3: count=0 at 300 h", TierStandard, TierStandard, 0, 0.005, 300, 0.50, 0.112, false, "reference prints 0.111 (0.11157)"},
		{"§7 test 3: count=10 at 500 h", TierStandard, TierStandard, 10, 0.0025, 500, 0.50, 0.143, false, ""},
		{"§8 permanent pair at 200000 h", TierPermanent, TierPermanent, 0, 0.000005, 200000, 1, 0.368, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lambda := must(t)(LambdaEdge(tc.a, tc.b, tc.count, EstablishedEdgeThreshold))
			wantNear(t, "λ_edge", lambda, tc.lambda, 1e-15)
			got := must(t)(EffectiveWeight(tc.weight, lambda, tc.hours))
			want3(t, "effective weight", got, tc.effective)
			if pruned := got < pruneThreshold; pruned != tc.pruned {
				t.Errorf("effective weight %.4f: pruned = %v, want %v", got, pruned, tc.pruned)
			}
		})
	}
}

// TestCalibrationGrid is reference 000 §9, every cell of both tables: the
// effective weight to 3 decimals and whether it survives the 0.10 threshold.
// The expected values are the formula's; ref holds what the reference prints
// where that differs. The standard table is off by one in the last place in
// four cells; the established table does not follow exp(−0.0025 × h) at all
// (its 800 h and 1000 h rows match λ ≈ 0.0021–0.0022), and its 800 h / 0.60
// verdict flips.
func TestCalibrationGrid(t *testing.T) {
	type cell struct {
		hours, weight float64
		want          float64
		survives      bool
		ref           string
	}
	tables := []struct {
		name   string
		lambda float64
		cells  []cell
	}{
		{"standard edge λ=0.005", 0.005, []cell{
			{100, 0.40, 0.243, true, "0.242 ✅"},
			{100, 0.60, 0.364, true, ""},
			{100, 0.80, 0.485, true, ""},
			{200, 0.40, 0.147, true, ""},
			{200, 0.60, 0.221, true, "0.220 ✅"},
			{200, 0.80, 0.294, true, "0.293 ✅"},
			{300, 0.40, 0.089, false, ""},
			{300, 0.60, 0.134, true, ""},
			{300, 0.80, 0.179, true, "0.178 ✅ (0.17850)"},
			{400, 0.40, 0.054, false, ""},
			{400, 0.60, 0.081, false, ""},
			{400, 0.80, 0.108, true, ""},
			{500, 0.40, 0.033, false, ""},
			{500, 0.60, 0.049, false, ""},
			{500, 0.80, 0.066, false, ""},
		}},
		{"established edge λ=0.0025", 0.0025, []cell{
			{300, 0.40, 0.189, true, "0.187 ✅"},
			{300, 0.60, 0.283, true, "0.280 ✅"},
			{300, 0.80, 0.378, true, "0.374 ✅"},
			{500, 0.40, 0.115, true, "0.116 ✅"},
			{500, 0.60, 0.172, true, "0.174 ✅"},
			{500, 0.80, 0.229, true, "0.233 ✅"},
			{800, 0.40, 0.054, false, "0.067 ❌"},
			{800, 0.60, 0.081, false, "0.100 ✅"},
			{800, 0.80, 0.108, true, "0.134 ✅"},
			{1000, 0.40, 0.033, false, "0.049 ❌"},
			{1000, 0.60, 0.049, false, "0.074 ❌"},
			{1000, 0.80, 0.066, false, "0.098 ❌"},
		}},
	}
	for _, tb := range tables {
		t.Run(tb.name, func(t *testing.T) {
			for _, c := range tb.cells {
				got := must(t)(EffectiveWeight(c.weight, tb.lambda, c.hours))
				want3(t, "effective_weight", got, c.want)
				if survives := got >= pruneThreshold; survives != c.survives {
					t.Errorf("%v h, weight %v: %.4f survives = %v, want %v", c.hours, c.weight, got, survives, c.survives)
				}
			}
		})
	}
}

// TestEstablishedThresholdBoundary is reference 002 scenario 12: weight 0.50,
// 500 active hours, count 9 (λ 0.005) is pruned at 0.041, count 10 (λ
// 0.0025) survives at 0.143.
func TestEstablishedThresholdBoundary(t *testing.T) {
	for _, tc := range []struct {
		count    float64
		want     float64
		survives bool
	}{
		{9, 0.041, false},
		{10, 0.143, true},
	} {
		lambda := must(t)(LambdaEdge(TierStandard, TierStandard, tc.count, EstablishedEdgeThreshold))
		got := must(t)(EffectiveWeight(0.50, lambda, 500))
		want3(t, "effective weight", got, tc.want)
		if survives := got >= pruneThreshold; survives != tc.survives {
			t.Errorf("count %v: survives = %v, want %v", tc.count, survives, tc.survives)
		}
	}
}

func TestEffectiveWeight(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		weight, lambda, elapsed float64
		want                    float64
	}{
		{"no time passed", 0.7, 0.01, 0, 0.7},
		{"lambda 0 never decays", 0.7, 0, 1e6, 0.7},
		{"weight 0 stays 0", 0, 0.01, 10, 0},
		{"one time constant", 1, 0.01, 100, math.Exp(-1)},
		{"negative elapsed counts as 0", 0.5, 0.005, -100, 0.5},
		{"003 exponential 1h half-life, 1.8 at 1 h", 1.8, math.Ln2, 1, 0.9},
		{"003 exponential 1h half-life, 1.8 at 24 h (~0)", 1.8, math.Ln2, 24, 1.8 / (1 << 24)},
	} {
		got := must(t)(EffectiveWeight(tc.weight, tc.lambda, tc.elapsed))
		wantNear(t, tc.name, got, tc.want, 1e-12)
	}
}

// TestHalfLifeWeight is reference 004: 0.5^(days/halfLifeDays) with a
// 90-day half-life.
func TestHalfLifeWeight(t *testing.T) {
	for _, tc := range []struct {
		name         string
		days, want2d float64
		exact        float64
	}{
		{"after 0 days", 0, 1.00, 1},
		{"after 45 days", 45, 0.71, math.Sqrt2 / 2},
		{"after 90 days", 90, 0.50, 0.5},
		{"after 180 days", 180, 0.25, 0.25},
		{"negative days count as 0", -30, 1.00, 1},
	} {
		got := must(t)(HalfLifeWeight(1.0, 90, tc.days))
		wantNear(t, tc.name, got, tc.exact, 1e-12)
		if math.Round(got*100)/100 != tc.want2d {
			t.Errorf("%s: %.4f does not round to %.2f", tc.name, got, tc.want2d)
		}
	}
	// A half-life curve is the exponential with λ = ln2 / half-life.
	for _, days := range []float64{1, 30, 299, 1000} {
		hl := must(t)(HalfLifeWeight(0.8, 90, days))
		ex := must(t)(EffectiveWeight(0.8, math.Ln2/90, days))
		wantNear(t, "half-life vs exponential", hl, ex, 1e-12)
	}
}

// TestLinearWeight is reference 003's linear and delayed linear decay:
// w(t) = w₀ while t < hold, then max(0, w₀ − k(t − hold)).
func TestLinearWeight(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		weight, rate, elapsed, hold float64
		want                        float64
	}{
		// docs/policies.md: a rate of 0.25 per day loses 0.25 per day; death at w₀/k = 4 days.
		{"linear at 0", 1, 0.25, 0, 0, 1},
		{"linear at 1 day", 1, 0.25, 1, 0, 0.75},
		{"linear at 3 days", 1, 0.25, 3, 0, 0.25},
		{"linear death at w0/k", 1, 0.25, 4, 0, 0},
		{"linear floors at 0", 1, 0.25, 9, 0, 0},
		{"rate 0 holds forever", 0.6, 0, 1e9, 0, 0.6},
		{"negative elapsed counts as 0", 1, 0.25, -5, 0, 1},
		// Reference 003 recommended delayed linear, in hours: full weight for
		// 30 min, then decay over 4 h (rate 0.25/h); death at 4.5 h.
		{"delayed linear inside hold", 1, 0.25, 0.25, 0.5, 1},
		{"delayed linear at hold", 1, 0.25, 0.5, 0.5, 1},
		{"delayed linear 1 h after hold", 1, 0.25, 1.5, 0.5, 0.75},
		{"delayed linear halfway", 1, 0.25, 2.5, 0.5, 0.5},
		{"delayed linear death at hold + w0/k", 1, 0.25, 4.5, 0.5, 0},
		{"delayed linear after death", 1, 0.25, 10, 0.5, 0},
		{"delayed linear negative elapsed", 1, 0.25, -1, 0.5, 1},
	} {
		got := must(t)(LinearWeight(tc.weight, tc.rate, tc.elapsed, tc.hold))
		wantNear(t, tc.name, got, tc.want, 1e-12)
	}
}

// ref003DefaultTiers is reference 003's default tier table, in milliseconds:
// short 1.0 / 5 min / 0.001 per ms, medium 0.5 / 1 h / 0.0001 per ms, long
// 0.3 / 24 h / 0.00001 per ms. With these rates the tiers die 1 s, 5 s and
// 30 s after their holds (the reference's "death time" column, ~22 min,
// ~2.4 h, ~32 h, does not follow from its own rates).
var ref003DefaultTiers = []LinearTier{
	{Weight: 1.0, Hold: 300_000, Rate: 0.001},
	{Weight: 0.5, Hold: 3_600_000, Rate: 0.0001},
	{Weight: 0.3, Hold: 86_400_000, Rate: 0.00001},
}

const ref003DefaultJSON = `[{"weight":1.0,"hold":300000,"rate":0.001},
 {"weight":0.5,"hold":3600000,"rate":0.0001},
 {"weight":0.3,"hold":86400000,"rate":0.00001}]`

// ref003TopologyJSON is reference 003's TOPOLOGY_CONFIG in hours: session
// 0.6, hold 30 min, dies over 2 h (0.3/h); project 0.4, hold 4 h, dies over
// 24 h (0.4/24 per hour).
const ref003TopologyJSON = `[{"weight":0.6,"hold":0.5,"rate":0.3},{"weight":0.4,"hold":4,"rate":0.016666666666666666}]`

// TestMultiLinearWeight is reference 003's multi-linear decay,
// w(t) = Σ max(0, wᵢ − kᵢ(t − holdᵢ)), values computed by hand.
func TestMultiLinearWeight(t *testing.T) {
	const minute, hour, day = 60_000.0, 3_600_000.0, 86_400_000.0
	parsed, err := ParseTiers("multi_linear_weight", "tiers_json", ref003DefaultJSON)
	if err != nil {
		t.Fatal(err)
	}
	topology, err := ParseTiers("multi_linear_weight", "tiers_json", ref003TopologyJSON)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ref003DefaultTiers {
		if parsed[i] != ref003DefaultTiers[i] {
			t.Fatalf("ParseTiers tier %d = %+v, want %+v", i, parsed[i], ref003DefaultTiers[i])
		}
	}
	for _, tc := range []struct {
		name    string
		tiers   []LinearTier
		elapsed float64
		want    float64
	}{
		{"default: peak at creation 1.8", parsed, 0, 1.8},
		{"default: still 1.8 at 5 min", parsed, 5 * minute, 1.8},
		{"default: short tier half gone 500 ms later", parsed, 5*minute + 500, 1.3},
		{"default: short tier dead 1 s after its hold", parsed, 5*minute + 1000, 0.8},
		{"default: @1h 0.8", parsed, hour, 0.8},
		{"default: medium half gone", parsed, hour + 2500, 0.55},
		{"default: medium dead", parsed, hour + 5000, 0.3},
		{"default: @24h 0.3", parsed, day, 0.3},
		{"default: long half gone", parsed, day + 15_000, 0.15},
		{"default: death at 24 h + 30 s", parsed, day + 30_000, 0},
		{"default: @7d 0", parsed, 7 * day, 0},
		{"default: negative elapsed counts as 0", parsed, -hour, 1.8},
		{"topology: peak 1.0", topology, 0, 1.0},
		{"topology: 1.5 h", topology, 1.5, 0.3 + 0.4},
		{"topology: session dead at 2.5 h", topology, 2.5, 0.4},
		{"topology: project still held at 4 h", topology, 4, 0.4},
		{"topology: 16 h", topology, 16, 0.2},
		{"topology: death at 28 h", topology, 28, 0},
		{"no tiers sum to 0", nil, 5, 0},
	} {
		got := must(t)(MultiLinearWeight(tc.tiers, tc.elapsed))
		wantNear(t, tc.name, got, tc.want, 1e-9)
	}
}

// TestPowerLawWeight is reference 003's power law, w₀ × (1 + t/scale)^−α.
// The reference's simulation (α = 1, peak 1.8, scale 1 h) gives 0.9 at 1 h,
// 0.07 at 24 h and 0.01 at 7 d.
func TestPowerLawWeight(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		weight, alpha, elapsed, scale float64
		want                          float64
	}{
		{"003 sim @0", 1.8, 1, 0, 1, 1.8},
		{"003 sim @1h", 1.8, 1, 1, 1, 0.9},
		{"003 sim @24h", 1.8, 1, 24, 1, 1.8 / 25},
		{"003 sim @7d", 1.8, 1, 168, 1, 1.8 / 169},
		{"alpha 0.5: 4^-0.5", 1, 0.5, 3, 1, 0.5},
		{"scale 10: (1 + 10/10)^-2", 1, 2, 10, 10, 0.25},
		{"alpha 0 never decays", 0.4, 0, 1e9, 1, 0.4},
		{"negative elapsed counts as 0", 0.4, 1, -3, 1, 0.4},
	} {
		got := must(t)(PowerLawWeight(tc.weight, tc.alpha, tc.elapsed, tc.scale))
		wantNear(t, tc.name, got, tc.want, 1e-12)
	}
	want3(t, "003 sim @24h", must(t)(PowerLawWeight(1.8, 1, 24, 1)), 0.072)
	want3(t, "003 sim @7d", must(t)(PowerLawWeight(1.8, 1, 168, 1)), 0.011)
}

// TestDecayHorizon checks when effective_weight first falls below the
// threshold: ln(weight/threshold)/λ, and that the weight there is the
// threshold.
func TestDecayHorizon(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		weight, lambda, threshold float64
		want                      float64
	}{
		// Between the §9 rows: 0.40 dies between 200 and 300 h, 0.60 between
		// 300 and 400 h, 0.80 between 400 and 500 h.
		{"000 §9 standard 0.40", 0.40, 0.005, 0.10, math.Log(4) / 0.005},
		{"000 §9 standard 0.60", 0.60, 0.005, 0.10, math.Log(6) / 0.005},
		{"000 §9 standard 0.80", 0.80, 0.005, 0.10, math.Log(8) / 0.005},
		{"000 §3.3 weight 0.5 standard", 0.50, 0.005, 0.10, 321.8875824868201},
		{"000 §3.3 weight 0.5 established", 0.50, 0.0025, 0.10, 643.7751649736402},
		{"004 90-day half-life to 0.5", 1, math.Ln2 / 90, 0.5, 90},
		{"004 90-day half-life to 0.25", 1, math.Ln2 / 90, 0.25, 180},
		{"weight at threshold", 0.10, 0.005, 0.10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := DecayHorizon(tc.weight, tc.lambda, tc.threshold)
			if err != nil {
				t.Fatal(err)
			}
			if h.Never {
				t.Fatalf("horizon is never, want %v", tc.want)
			}
			wantNear(t, "horizon", h.At, tc.want, 1e-9)
			at := must(t)(EffectiveWeight(tc.weight, tc.lambda, h.At))
			wantNear(t, "weight at horizon", at, tc.threshold, 1e-9)
		})
	}
	for _, tc := range []struct {
		name                      string
		weight, lambda, threshold float64
		want                      Horizon
	}{
		{"already below", 0.05, 0.005, 0.10, Horizon{}},
		{"weight 0", 0, 0.005, 0.10, Horizon{}},
		{"lambda 0 never decays", 0.5, 0, 0.10, Horizon{Never: true}},
		{"threshold 0 is never reached", 0.5, 0.005, 0, Horizon{Never: true}},
		{"below even with lambda 0", 0.05, 0, 0.10, Horizon{}},
	} {
		h, err := DecayHorizon(tc.weight, tc.lambda, tc.threshold)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if h != tc.want {
			t.Errorf("%s: decay_horizon = %+v, want %+v", tc.name, h, tc.want)
		}
	}
}

// TestThresholdLogIsTheLog: the remembered logarithm is crLog's, whichever
// threshold came before (zero's sign, NaN, infinities included).
func TestThresholdLogIsTheLog(t *testing.T) {
	for _, x := range []float64{0.1, 0.1, 0.05, math.Copysign(0, -1), 0, math.NaN(), math.NaN(), math.Inf(1), 1, 1e-300, 0.1} {
		got, want := thresholdLog(x), crLog(x)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("thresholdLog(%v) = %v, crLog %v", x, got, want)
		}
	}
}
