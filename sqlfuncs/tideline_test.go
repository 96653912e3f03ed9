package sqlfuncs

import (
	"math"
	"slices"
	"testing"
)

// TestSegmentDefaults is reference 001's segment table.
func TestSegmentDefaults(t *testing.T) {
	for _, tc := range []struct {
		segment string
		want    Segment
	}{
		{"identity", Segment{FactPermanent, 0.85, 0.01}},
		{"correction", Segment{FactLong, 0.80, 0.015}},
		{"relationship", Segment{FactLong, 0.75, 0.02}},
		{"preference", Segment{FactLong, 0.70, 0.02}},
		{"project", Segment{FactLong, 0.65, 0.025}},
		{"knowledge", Segment{FactLong, 0.60, 0.03}},
		{"context", Segment{FactShort, 0.40, 0.08}},
	} {
		got, err := SegmentDefaults("segment_tier", tc.segment)
		if err != nil {
			t.Fatalf("%s: %v", tc.segment, err)
		}
		if got != tc.want {
			t.Errorf("segment %s = %+v, want %+v", tc.segment, got, tc.want)
		}
	}
	want := []string{"context", "correction", "identity", "knowledge", "preference", "project", "relationship"}
	if got := SegmentNames(); !slices.Equal(got, want) {
		t.Errorf("SegmentNames() = %v, want %v", got, want)
	}
}

func TestSegmentDefaultsUnknown(t *testing.T) {
	for _, fn := range []string{"segment_tier", "segment_importance", "segment_decay_rate"} {
		for _, seg := range []string{"", "Identity", "episode"} {
			_, err := SegmentDefaults(fn, seg)
			wantArgErr(t, err, "memdecay: "+fn+": segment ")
		}
	}
}

// TestTidelineScore is reference 001's effective score:
// half_life = 11.25 × (1 + importance) days, λ = ln2/half_life × 0.8 ×
// (1 + decay_rate), score = clamp(importance × e^(−λ·days) ×
// (1 + ln(1 + access_count) × 0.1), 0, 1).
func TestTidelineScore(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		importance, decayRate, days, access float64
		tier                                string
		want                                float64
	}{
		// knowledge fact, 10 days, 3 accesses: half-life 11.25 × 1.6 = 18 d;
		// λ = 0.693147/18 × 0.8 × 1.03 = 0.0317307; decayed = 0.6 ×
		// e^−0.317307 = 0.436864; reinforcement = 1 + ln 4 × 0.1 = 1.138629;
		// score = 0.497426.
		{"knowledge 10 days 3 accesses", 0.6, 0.03, 10, 3, FactLong, 0.4974263817798639},
		{"knowledge just accessed", 0.6, 0.03, 0, 0, FactLong, 0.6},
		// context: half-life 15.75 d; λ = ln2/15.75 × 0.8 × 1.08 = 0.0380241;
		// 0.4 × e^−0.266168 = 0.306524.
		{"context 7 days", 0.4, 0.08, 7, 0, FactShort, 0.3065239920415566},
		// 0.4 × e^−1.140722 = 0.127835: a short fact to archive.
		{"context 30 days", 0.4, 0.08, 30, 0, FactShort, 0.12783525056886752},
		// half-life 20.8125 d; λ = 0.0269099; 0.85 × e^−0.807298 × (1 + ln 6 × 0.1).
		{"identity scored as long, 30 days 5 accesses", 0.85, 0.01, 30, 5, "", 0.4470874837296467},
		// half-life 20.25 d; λ = 0.0277943; 0.8 × e^−1.667661 = 0.150950, just keep.
		{"correction 60 days", 0.8, 0.015, 60, 0, FactLong, 0.1509503470832735},
		// 0.6 × e^−3.173074 = 0.025125: a long fact to archive.
		{"knowledge 100 days", 0.6, 0.03, 100, 0, FactLong, 0.02512481229032543},
		{"negative days count as 0", 0.6, 0.03, -5, 3, FactLong, 0.6 * (1 + math.Log(4)*0.1)},
		{"clamped to 1", 1, 0, 0, 1e6, FactLong, 1},
		{"importance 0 scores 0", 0, 0.5, 3, 10, FactShort, 0},
		{"permanent scores 1", 0.1, 0.5, 1000, 0, FactPermanent, 1},
		{"permanent with importance 0", 0, 0, 0, 0, FactPermanent, 1},
	} {
		got := must(t)(TidelineScore(tc.importance, tc.decayRate, tc.days, tc.access, tc.tier))
		wantNear(t, tc.name, got, tc.want, 1e-12)
	}
}

func TestTidelineScoreErrors(t *testing.T) {
	const p = "memdecay: tideline_score: "
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		imp, rate, days, access float64
		tier, prefix            string
	}{
		{1.5, 0.03, 1, 0, FactLong, p + "importance must be between 0 and 1"},
		{-0.1, 0.03, 1, 0, FactLong, p + "importance must not be negative"},
		{nan, 0.03, 1, 0, FactLong, p + "importance is not a number"},
		{inf, 0.03, 1, 0, FactLong, p + "importance must be finite"},
		{0.5, -0.03, 1, 0, FactLong, p + "decay_rate"},
		{0.5, inf, 1, 0, FactLong, p + "decay_rate"},
		{0.5, 0.03, nan, 0, FactLong, p + "days_since_access"},
		{0.5, 0.03, math.Inf(-1), 0, FactLong, p + "days_since_access"},
		{0.5, 0.03, 1, -1, FactLong, p + "access_count"},
		{0.5, 0.03, 1, nan, FactLong, p + "access_count"},
		{0.5, 0.03, 1, 0, "forever", p + "tier"},
		{0.5, 0.03, 1, 0, "Long", p + "tier"},
	} {
		_, err := TidelineScore(tc.imp, tc.rate, tc.days, tc.access, tc.tier)
		wantArgErr(t, err, tc.prefix)
	}
}

// TestLifecycleAction is the fact sweep of docs/facts.md, with scores either side
// of 0.05 and 0.15. Where reference 001 archives a long fact at 0.05–0.15,
// docs/facts.md wins: a long fact is archived only below 0.05.
func TestLifecycleAction(t *testing.T) {
	below05, below15 := math.Nextafter(0.05, 0), math.Nextafter(0.15, 0)
	for _, tc := range []struct {
		score     float64
		tier      string
		confirmed bool
		want      string
	}{
		{0, FactLong, false, ActionArchive},
		{0.04, FactLong, false, ActionArchive},
		{below05, FactLong, false, ActionArchive},
		{0.05, FactLong, false, ActionKeep},
		{0.10, FactLong, false, ActionKeep},
		{below15, FactLong, false, ActionKeep},
		{0.15, FactLong, false, ActionKeep},
		{0.9, FactLong, false, ActionKeep},

		{0, FactShort, false, ActionPrune},
		{0.04, FactShort, false, ActionPrune},
		{below05, FactShort, false, ActionPrune},
		{0.05, FactShort, false, ActionArchive},
		{0.10, FactShort, false, ActionArchive},
		{below15, FactShort, false, ActionArchive},
		{0.15, FactShort, false, ActionKeep},
		{0.16, FactShort, false, ActionKeep},

		{0, FactPermanent, false, ActionKeep},
		{0.10, FactPermanent, false, ActionKeep},
		{0, FactShort, true, ActionKeep},
		{0.10, FactShort, true, ActionKeep},
		{0.01, FactLong, true, ActionKeep},
		{0, FactPermanent, true, ActionKeep},
	} {
		got, err := LifecycleAction(tc.score, tc.tier, tc.confirmed)
		if err != nil {
			t.Fatalf("lifecycle_action(%v, %q, %v): %v", tc.score, tc.tier, tc.confirmed, err)
		}
		if got != tc.want {
			t.Errorf("lifecycle_action(%v, %q, %v) = %q, want %q", tc.score, tc.tier, tc.confirmed, got, tc.want)
		}
	}
}

func TestLifecycleActionErrors(t *testing.T) {
	const p = "memdecay: lifecycle_action: "
	for _, tc := range []struct {
		score  float64
		tier   string
		prefix string
	}{
		{0.1, "", p + "tier is required"},
		{0.1, "medium", p + "tier "},
		{math.NaN(), FactLong, p + "score is not a number"},
		{math.Inf(-1), FactShort, p + "score must be finite"},
		{math.Inf(1), FactPermanent, p + "score must be finite"},
		{-1, FactShort, p + "score must be between 0 and 1 (got -1)"},
		{1.5, FactLong, p + "score must be between 0 and 1 (got 1.5)"},
		{-0.0001, FactPermanent, p + "score must be between 0 and 1"},
	} {
		_, err := LifecycleAction(tc.score, tc.tier, false)
		wantArgErr(t, err, tc.prefix)
	}
}

// TestFactSweepScenarios runs the segment defaults through the score and the
// sweep, as a mem_facts_scored view does.
func TestFactSweepScenarios(t *testing.T) {
	for _, tc := range []struct {
		name, segment  string
		days, accesses float64
		want           string
	}{
		{"identity never fades", "identity", 10_000, 0, ActionKeep},
		{"knowledge after 10 days, 3 recalls", "knowledge", 10, 3, ActionKeep},
		{"correction at 60 days is still kept (0.151)", "correction", 60, 0, ActionKeep},
		{"knowledge at 100 days is archived (0.025)", "knowledge", 100, 0, ActionArchive},
		{"knowledge at 1000 days is archived, never pruned", "knowledge", 1000, 0, ActionArchive},
		{"context at 7 days is kept (0.307)", "context", 7, 0, ActionKeep},
		{"context at 30 days is archived (0.128)", "context", 30, 0, ActionArchive},
		{"context at 60 days is pruned", "context", 60, 0, ActionPrune},
	} {
		s, err := SegmentDefaults("segment_tier", tc.segment)
		if err != nil {
			t.Fatal(err)
		}
		score := must(t)(TidelineScore(s.Importance, s.DecayRate, tc.days, tc.accesses, s.Tier))
		got, err := LifecycleAction(score, s.Tier, false)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: score %.4f → %q, want %q", tc.name, score, got, tc.want)
		}
	}
}
