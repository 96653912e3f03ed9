package sqlfuncs

import (
	"math"
	"testing"
)

// TestEdgeStrength is docs/sweep.md's weighted-degree term:
// weight + ln(1 + reinforcement_count) × 0.10.
func TestEdgeStrength(t *testing.T) {
	for _, tc := range []struct {
		name          string
		weight, count float64
		want          float64
	}{
		{"never reinforced", 0.5, 0, 0.5},
		{"count 9: 0.5 + ln 10 × 0.1 = 0.730259", 0.5, 9, 0.7302585092994046},
		{"weight 0, count 1: ln 2 × 0.1", 0, 1, 0.06931471805599453},
		{"established count 10", 0.6, 10, 0.6 + math.Log(11)*0.1},
	} {
		got := must(t)(EdgeStrength(tc.weight, tc.count))
		wantNear(t, tc.name, got, tc.want, 1e-12)
	}
	for _, tc := range []struct {
		weight, count float64
		prefix        string
	}{
		{-0.1, 0, "memdecay: edge_strength: weight must not be negative"},
		{math.NaN(), 0, "memdecay: edge_strength: weight is not a number"},
		{0.5, -1, "memdecay: edge_strength: reinforcement_count must not be negative"},
		{0.5, math.Inf(1), "memdecay: edge_strength: reinforcement_count must be finite"},
	} {
		_, err := EdgeStrength(tc.weight, tc.count)
		wantArgErr(t, err, tc.prefix)
	}
}

// TestLogNormalise is the composite's reinforcement term:
// ln(1 + count) / ln(1 + max_count), 0 when max_count is 0.
func TestLogNormalise(t *testing.T) {
	for _, tc := range []struct {
		name            string
		count, maxCount float64
		want            float64
	}{
		{"max 0 gives 0", 0, 0, 0},
		{"the most reinforced block", 12, 12, 1},
		{"count 0", 0, 10, 0},
		{"ln 2 / ln 4", 1, 3, 0.5},
		{"ln 10 / ln 100", 9, 99, 0.5},
		{"ln 6 / ln 13", 5, 12, math.Log(6) / math.Log(13)},
	} {
		got := must(t)(LogNormalise(tc.count, tc.maxCount))
		wantNear(t, tc.name, got, tc.want, 1e-12)
	}
	for _, tc := range []struct {
		count, maxCount float64
		prefix          string
	}{
		{-1, 10, "memdecay: log_normalise: count must not be negative"},
		{1, -10, "memdecay: log_normalise: max_count must not be negative"},
		{math.NaN(), 10, "memdecay: log_normalise: count is not a number"},
		{1, math.Inf(1), "memdecay: log_normalise: max_count must be finite"},
		// A count above the largest count is a caller's mistake, max 0 included.
		{3, 0, "memdecay: log_normalise: count must not exceed max_count (3 > 0)"},
		{3, 2, "memdecay: log_normalise: count must not exceed max_count (3 > 2)"},
	} {
		_, err := LogNormalise(tc.count, tc.maxCount)
		wantArgErr(t, err, tc.prefix)
	}
}

// TestCompositeScore is docs/sweep.md, phase 6:
// (0.30·confidence + 0.05·recency + 0.25·centrality + 0.30·reinforcement) / 0.90.
func TestCompositeScore(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		conf, recency, central, reinf float64
		want                          float64
	}{
		{"all 1 scores 1", 1, 1, 1, 1, 1},
		{"all 0 scores 0", 0, 0, 0, 0, 0},
		{"default confidence only: 0.15 / 0.9", 0.5, 0, 0, 0, 1.0 / 6},
		{"recency only: 0.05 / 0.9", 0, 1, 0, 0, 0.05 / 0.9},
		{"centrality only: 0.25 / 0.9", 0, 0, 1, 0, 0.25 / 0.9},
		{"reinforcement only: 0.30 / 0.9", 0, 0, 0, 1, 1.0 / 3},
		// (0.15 + 0.04 + 0.0625 + 0.15) / 0.9 = 0.4025 / 0.9 = 0.447222.
		{"mixed", 0.5, 0.8, 0.25, 0.5, 0.4472222222222222},
	} {
		got := must(t)(CompositeScore(tc.conf, tc.recency, tc.central, tc.reinf))
		wantNear(t, tc.name, got, tc.want, 1e-12)
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		args   [4]float64
		prefix string
	}{
		{[4]float64{nan, 0, 0, 0}, "memdecay: composite_score: confidence is not a number"},
		{[4]float64{0, -inf, 0, 0}, "memdecay: composite_score: recency must be finite"},
		{[4]float64{0, 0, inf, 0}, "memdecay: composite_score: centrality must be finite"},
		{[4]float64{0, 0, 0, nan}, "memdecay: composite_score: reinforcement is not a number"},
		// Each term is a share in [0, 1].
		{[4]float64{2, 0, 0, 0}, "memdecay: composite_score: confidence must be between 0 and 1 (got 2)"},
		{[4]float64{0, -0.5, 0, 0}, "memdecay: composite_score: recency must be between 0 and 1 (got -0.5)"},
		{[4]float64{0, 0, 1.5, 0}, "memdecay: composite_score: centrality must be between 0 and 1 (got 1.5)"},
		{[4]float64{0, 0, 0, 7}, "memdecay: composite_score: reinforcement must be between 0 and 1 (got 7)"},
	} {
		_, err := CompositeScore(tc.args[0], tc.args[1], tc.args[2], tc.args[3])
		wantArgErr(t, err, tc.prefix)
	}
}
