package sqlfuncs

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestTierLambda(t *testing.T) {
	for _, tc := range []struct {
		tier string
		want float64
	}{
		{TierPermanent, 0.00001},
		{TierDurable, 0.001},
		{TierStandard, 0.010},
		{TierEphemeral, 0.050},
	} {
		got := must(t)(TierLambda(tc.tier))
		wantNear(t, "tier_lambda("+tc.tier+")", got, tc.want, 1e-15)
	}
}

func TestTierLambdaUnknown(t *testing.T) {
	for _, tier := range []string{"", "Standard", "mind", "permanent "} {
		_, err := TierLambda(tier)
		wantArgErr(t, err, "memdecay: tier_lambda: tier ")
		for _, name := range []string{"permanent", "durable", "standard", "ephemeral"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("tier_lambda(%q) error %q does not name tier %s", tier, err, name)
			}
		}
	}
}

// TestLambdaEdge covers λ_edge = min(λa, λb) × 0.5, halved again once the
// edge is established (reference 000 §3.1).
func TestLambdaEdge(t *testing.T) {
	for _, tc := range []struct {
		name         string
		a, b         string
		count, estab float64
		want         float64
	}{
		{"000 §3.3 standard/standard", TierStandard, TierStandard, 0, 10, 0.005},
		{"000 §3.3 established count=12", TierStandard, TierStandard, 12, 10, 0.0025},
		{"000 §3.3 non-established count=5", TierStandard, TierStandard, 5, 10, 0.005},
		{"000 §3.3 permanent+standard", TierPermanent, TierStandard, 0, 10, 0.000005},
		{"000 §3.3 permanent+standard reversed", TierStandard, TierPermanent, 0, 10, 0.000005},
		{"000 §3.3 ephemeral/ephemeral", TierEphemeral, TierEphemeral, 0, 10, 0.025},
		{"000 §8 permanent/permanent", TierPermanent, TierPermanent, 0, 10, 0.000005},
		{"durable/ephemeral takes the durable end", TierDurable, TierEphemeral, 0, 10, 0.0005},
		{"002 scenario 12 count=9", TierStandard, TierStandard, 9, 10, 0.005},
		{"002 scenario 12 count=10", TierStandard, TierStandard, 10, 10, 0.0025},
		{"000 §12 count=10 is half of count=0", TierStandard, TierStandard, 10, EstablishedEdgeThreshold, 0.0025},
		{"custom threshold 3 reached", TierDurable, TierDurable, 3, 3, 0.00025},
		{"custom threshold 3 not reached", TierDurable, TierDurable, 2.9, 3, 0.0005},
		{"threshold 0 establishes every edge", TierEphemeral, TierStandard, 0, 0, 0.0025},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := must(t)(LambdaEdge(tc.a, tc.b, tc.count, tc.estab))
			wantNear(t, "lambda_edge", got, tc.want, 1e-15)
		})
	}
}

func TestLambdaEdgeErrors(t *testing.T) {
	for _, tc := range []struct {
		a, b         string
		count, estab float64
		prefix       string
	}{
		{"rock", TierStandard, 0, 10, "memdecay: lambda_edge: tier_a "},
		{TierStandard, "", 0, 10, "memdecay: lambda_edge: tier_b "},
		{TierStandard, TierStandard, -1, 10, "memdecay: lambda_edge: reinforcement_count "},
		{TierStandard, TierStandard, math.NaN(), 10, "memdecay: lambda_edge: reinforcement_count "},
		{TierStandard, TierStandard, math.Inf(1), 10, "memdecay: lambda_edge: reinforcement_count "},
		{TierStandard, TierStandard, 0, -10, "memdecay: lambda_edge: established_threshold "},
		{TierStandard, TierStandard, 0, math.Inf(-1), "memdecay: lambda_edge: established_threshold "},
	} {
		_, err := LambdaEdge(tc.a, tc.b, tc.count, tc.estab)
		wantArgErr(t, err, tc.prefix)
	}
}

// TestDecayTier checks the precedence of docs/tiers-and-edges.md: self/constitutional, then
// the durable self tags, then category mind, then observation, else standard.
func TestDecayTier(t *testing.T) {
	for _, tc := range []struct {
		name, tags, category, want string
	}{
		{"constitutional beats self/value", `["self/value","self/constitutional"]`, "", TierPermanent},
		{"constitutional beats observation", `["self/constitutional"]`, "observation", TierPermanent},
		{"constitutional beats mind", `self/constitutional`, "mind", TierPermanent},
		{"self/value beats observation", `["self/value"]`, "observation", TierDurable},
		{"self/constraint beats observation", `["self/constraint"]`, "observation", TierDurable},
		{"self/goal beats observation", `["draft","self/goal"]`, "observation", TierDurable},
		{"self/value alone", `["self/value"]`, "knowledge", TierDurable},
		{"category mind", ``, "mind", TierDurable},
		{"category mind, unrelated tags", `["draft"]`, "mind", TierDurable},
		{"category observation", ``, "observation", TierEphemeral},
		{"observation with an empty array", `[]`, "observation", TierEphemeral},
		{"other category", ``, "knowledge", TierStandard},
		{"no tags, no category", ``, "", TierStandard},
		{"unrelated tags", `["self","self/values","constitutional"]`, "knowledge", TierStandard},
		{"comma-separated list", `draft, self/constitutional`, "observation", TierPermanent},
		{"comma-separated durable, spaces trimmed", ` self/goal ,draft`, "observation", TierDurable},
		{"comma-separated unrelated", `a,b,c`, "observation", TierEphemeral},
		{"single tag without brackets", `self/value`, "", TierDurable},
		{"whitespace-only tags", "  \t ", "mind", TierDurable},
		{"JSON array padded with spaces", `  ["self/constraint"]  `, "", TierDurable},
		{"json_group_array over a NULL tag", `[null]`, "mind", TierDurable},
		{"null elements are skipped", `[null,"self/constitutional",null]`, "", TierPermanent},
		{"only nulls", `[null,null]`, "observation", TierEphemeral},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecayTier(tc.tags, tc.category)
			if err != nil {
				t.Fatalf("decay_tier(%q, %q): %v", tc.tags, tc.category, err)
			}
			if got != tc.want {
				t.Errorf("decay_tier(%q, %q) = %q, want %q", tc.tags, tc.category, got, tc.want)
			}
		})
	}
}

func TestDecayTierBadJSON(t *testing.T) {
	for _, tags := range []string{
		`["self/value"`,
		`[self/value]`,
		`[1, 2]`,
		`[{"tag":"self/value"}]`,
		`[["self/value"]]`,
		`["a"] x`,
	} {
		_, err := DecayTier(tags, "mind")
		wantArgErr(t, err, "memdecay: decay_tier: tags ")
	}
}

// TestHalfLives: a declared half-life h gives the rate ln 2 / h, so a
// block's recency is exactly one half after h hours of its clock; the
// tiers not named keep the reference rates.
func TestHalfLives(t *testing.T) {
	rates := mustOK[TierRates](t)(ParseHalfLives("tier_lambda", "half_lives", `{"durable":"90d","standard":"30d","ephemeral":"5d"}`))
	for _, tc := range []struct {
		tier  string
		hours float64
	}{
		{TierDurable, 90 * 24},
		{TierStandard, 30 * 24},
		{TierEphemeral, 5 * 24},
	} {
		l := must(t)(TierLambdaMapped(tc.tier, rates))
		if l != math.Ln2/tc.hours {
			t.Errorf("%s: rate %v, want ln 2 / %v", tc.tier, l, tc.hours)
		}
		wantNear(t, tc.tier+" recency after one half-life", math.Exp(-l*tc.hours), 0.5, 1e-15)
	}
	if l := must(t)(TierLambdaMapped(TierPermanent, rates)); l != 0.00001 {
		t.Errorf("permanent: %v, want the reference 0.00001", l)
	}
	for text, hours := range map[string]float64{`{"standard":36}`: 36, `{"standard":"36h"}`: 36, `{"standard":"2w"}`: 336, `{"standard":"90m"}`: 1.5} {
		r := mustOK[TierRates](t)(ParseHalfLives("tier_lambda", "half_lives", text))
		if r[TierStandard] != math.Ln2/hours {
			t.Errorf("%s: rate %v, want ln 2 / %v", text, r[TierStandard], hours)
		}
	}
	partial := mustOK[TierRates](t)(ParseHalfLives("tier_lambda", "half_lives", `{"ephemeral":"12h"}`))
	if l := must(t)(TierLambdaMapped(TierStandard, partial)); l != 0.010 {
		t.Errorf("standard not declared: %v, want the reference 0.010", l)
	}
	// lambda_edge takes the declared rates of its ends.
	l := must(t)(LambdaEdgeMapped(TierStandard, TierEphemeral, 0, 10, rates))
	if want := math.Ln2 / (30 * 24) * 0.5; l != want {
		t.Errorf("lambda_edge with half-lives: %v, want %v", l, want)
	}
}

func TestHalfLivesRefused(t *testing.T) {
	for text, want := range map[string]string{
		`{"permanent":"90d"}`:         "permanent never fades",
		`{"lasting":"90d"}`:           `"lasting" is not a tier`,
		`{"standard":"0d"}`:           "above 0",
		`{"standard":0}`:              "above 0",
		`{"standard":-5}`:             "must not be negative",
		`{"standard":"30y"}`:          "is not a duration",
		`{"standard":true}`:           "must be a number or a duration",
		`{"standard":"1e-320h"}`:      "finite half-life",
		`["standard"]`:                "must be a JSON object",
		`{"standard":1,"standard":2}`: "twice",
		`{`:                           "half_lives",
	} {
		_, err := ParseHalfLives("tier_lambda", "half_lives", text)
		wantArgErr(t, err, "memdecay: tier_lambda: half_lives")
		if err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %q", text, err, want)
		}
	}
}

// TestCategoryTiers: after the tags, a category the app maps takes its
// tier; one it does not map falls to the reference rules.
func TestCategoryTiers(t *testing.T) {
	cats := mustOK[CategoryTiers](t)(ParseCategoryTiers("decay_tier", "category_tiers", `{"goal":"durable","note":"standard","chat":"ephemeral","charter":"permanent"}`))
	for _, tc := range []struct{ tags, category, want string }{
		{"", "goal", TierDurable},
		{"", "chat", TierEphemeral},
		{"", "charter", TierPermanent},
		{"", "note", TierStandard},
		{"", "mind", TierDurable},          // not mapped: the reference rule
		{"", "observation", TierEphemeral}, // not mapped: the reference rule
		{"", "other", TierStandard},        // not mapped: standard
		{`["self/constitutional"]`, "chat", TierPermanent},
		{`["self/goal"]`, "chat", TierDurable}, // the tags come first
	} {
		got := mustOK[string](t)(DecayTierMapped(tc.tags, tc.category, cats))
		if got != tc.want {
			t.Errorf("decay_tier(%q, %q, mapped) = %s, want %s", tc.tags, tc.category, got, tc.want)
		}
	}
	for text, want := range map[string]string{
		`{"goal":"lasting"}`: `category "goal": text "lasting" is not a tier`,
		`{"goal":1}`:         `category "goal": 1 is not a tier`,
		`"goal"`:             "must be a JSON object",
	} {
		_, err := ParseCategoryTiers("decay_tier", "category_tiers", text)
		wantArgErr(t, err, "memdecay: decay_tier: category_tiers")
		if err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %q", text, err, want)
		}
	}
}

// mustOK is must for results that are not numbers.
func mustOK[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

// TestPlainTagArray: json_group_array's output for plain tags takes the
// shortcut; escapes, spaces and other values go to the JSON decoder.
func TestPlainTagArray(t *testing.T) {
	for s, want := range map[string][]string{
		`[]`: {}, `["self/value"]`: {"self/value"}, `["misc","self/goal"]`: {"misc", "self/goal"},
		`[null,"a",null]`: {"a"}, `[""]`: {""},
	} {
		if got, ok := plainTagArray(s); !ok || !slices.Equal(got, want) {
			t.Errorf("plainTagArray(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
	for _, s := range []string{`["a\/b"]`, `[ "a"]`, `["a", "b"]`, `["é"]`, `[1]`, `["a",]`, `["a"`, `[true]`} {
		if got, ok := plainTagArray(s); ok {
			t.Errorf("plainTagArray(%q) = %q; want it left to the decoder", s, got)
		}
	}
}
