package sqlfuncs

// Curate scoring from reference 000: how strongly an edge ties its blocks
// together, and the composite a sweep ranks blocks by for reinforcement.

// EdgeStrength is an edge's contribution to each end's weighted degree:
// weight + ln(1 + reinforcement_count) × 0.10.
func EdgeStrength(weight, reinforcementCount float64) (float64, error) {
	const fn = "edge_strength"
	if err := nonNegative(fn, "weight", weight); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "reinforcement_count", reinforcementCount); err != nil {
		return 0, err
	}
	return weight + float64(crLog1p(reinforcementCount)*0.10), nil
}

// LogNormalise maps a count onto [0, 1] against the largest count:
// ln(1 + count) / ln(1 + max_count), 0 when max_count is 0.
func LogNormalise(count, maxCount float64) (float64, error) {
	const fn = "log_normalise"
	if err := nonNegative(fn, "count", count); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "max_count", maxCount); err != nil {
		return 0, err
	}
	if count > maxCount {
		return 0, argErr(fn, "count", "must not exceed max_count (%g > %g)", count, maxCount)
	}
	if maxCount == 0 {
		return 0, nil
	}
	return crLog1p(count) / crLog1p(maxCount), nil
}

// CompositeScore ranks blocks for top-N reinforcement:
// (0.30·confidence + 0.05·recency + 0.25·centrality + 0.30·reinforcement) / 0.90.
// Each term is a share in [0, 1] (docs/sweep.md, phase 6), so the score is too;
// a term outside it is an error, not a score that outranks every block.
func CompositeScore(confidence, recency, centrality, reinforcement float64) (float64, error) {
	const fn = "composite_score"
	for _, a := range []struct {
		name string
		v    float64
	}{{"confidence", confidence}, {"recency", recency}, {"centrality", centrality}, {"reinforcement", reinforcement}} {
		if err := finite(fn, a.name, a.v); err != nil {
			return 0, err
		}
		if a.v < 0 || a.v > 1 {
			return 0, argErr(fn, a.name, "must be between 0 and 1 (got %g)", a.v)
		}
	}
	return (float64(0.30*confidence) + float64(0.05*recency) + float64(0.25*centrality) + float64(0.30*reinforcement)) / 0.90, nil
}
