package sqlfuncs

import (
	"errors"
	"math"
	"slices"
)

// Fact tiers: permanent facts never decay, long facts are only ever
// archived, short facts can be pruned.
const (
	FactPermanent = "permanent"
	FactLong      = "long"
	FactShort     = "short"
)

// Fact lifecycle actions and their score thresholds.
const (
	ActionKeep    = "keep"
	ActionArchive = "archive"
	ActionPrune   = "prune"

	PruneScore   = 0.05
	ArchiveScore = 0.15
)

// Segment is the default tier, importance and decay rate of a fact segment.
type Segment struct {
	Tier       string
	Importance float64
	DecayRate  float64
}

var segments = map[string]Segment{
	"identity":     {FactPermanent, 0.85, 0.01},
	"correction":   {FactLong, 0.80, 0.015},
	"relationship": {FactLong, 0.75, 0.02},
	"preference":   {FactLong, 0.70, 0.02},
	"project":      {FactLong, 0.65, 0.025},
	"knowledge":    {FactLong, 0.60, 0.03},
	"context":      {FactShort, 0.40, 0.08},
}

// SegmentNames lists the known segments in a stable order.
func SegmentNames() []string {
	names := make([]string, 0, len(segments))
	for n := range segments {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// SegmentDefaults looks up a segment; fn names the SQL function in errors.
func SegmentDefaults(fn, segment string) (Segment, error) {
	s, ok := segments[segment]
	if !ok {
		return Segment{}, argErr(fn, "segment", "%q is not a segment (want one of %v)", segment, SegmentNames())
	}
	return s, nil
}

// TidelineScore is a fact's effective score in [0, 1]: importance decaying
// with an importance-scaled half-life, nudged up by how often it was
// recalled. Permanent facts score 1.
func TidelineScore(importance, decayRate, daysSinceAccess, accessCount float64, tier string) (float64, error) {
	const fn = "tideline_score"
	if err := checkTier(fn, tier); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "importance", importance); err != nil {
		return 0, err
	}
	if importance > 1 {
		return 0, argErr(fn, "importance", "must be between 0 and 1 (got %g)", importance)
	}
	if err := nonNegative(fn, "decay_rate", decayRate); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "access_count", accessCount); err != nil {
		return 0, err
	}
	if err := finite(fn, "days_since_access", daysSinceAccess); err != nil {
		return 0, err
	}
	if tier == FactPermanent {
		return 1, nil
	}
	lambda, reinforcement := tidelineTerms(importance, decayRate, accessCount)
	decayed := importance * crExp(-lambda*math.Max(0, daysSinceAccess))
	return min(1, max(0, decayed*reinforcement)), nil
}

// tidelineTerms are the importance-scaled decay rate (half-life 11.25 ×
// (1 + importance) days) and the recall bonus 1 + ln(1 + access_count) × 0.1.
func tidelineTerms(importance, decayRate, accessCount float64) (lambda, reinforcement float64) {
	halfLife := 11.25 * (1 + importance)
	return math.Ln2 / halfLife * 0.8 * (1 + decayRate), 1 + float64(crLog1p(accessCount)*0.1)
}

// checkTier accepts the three fact tiers and "" (not given).
func checkTier(fn, tier string) error {
	switch tier {
	case "", FactPermanent, FactLong, FactShort:
		return nil
	}
	return argErr(fn, "tier", "%q is not a fact tier (want permanent, long or short)", tier)
}

// LifecycleAction is what a sweep does with a fact: permanent and confirmed
// facts are kept; a long fact is archived below 0.05 and never pruned; a
// short fact is pruned below 0.05 and archived below 0.15.
func LifecycleAction(score float64, tier string, confirmed bool) (string, error) {
	const fn = "lifecycle_action"
	if err := finite(fn, "score", score); err != nil {
		return "", err
	}
	if score < 0 || score > 1 { // a tideline score is a share: anything else is a mistake, not "below every threshold"
		return "", argErr(fn, "score", "must be between 0 and 1 (got %g)", score)
	}
	if tier == "" {
		return "", argErr(fn, "tier", "is required (want permanent, long or short)")
	}
	if err := checkTier(fn, tier); err != nil {
		return "", err
	}
	switch {
	case tier == FactPermanent || confirmed:
		return ActionKeep, nil
	case tier == FactLong && score < PruneScore:
		return ActionArchive, nil
	case tier == FactShort && score < PruneScore:
		return ActionPrune, nil
	case tier == FactShort && score < ArchiveScore:
		return ActionArchive, nil
	}
	return ActionKeep, nil
}

// TidelineHorizon is the number of days since the last access at which a
// fact's score first falls below threshold: 0 if it already is, never for a
// permanent fact or a threshold of 0. Sweeps use it to revisit a fact only
// when its lifecycle action can change.
func TidelineHorizon(importance, decayRate, accessCount, threshold float64, tier string) (Horizon, error) {
	const fn = "tideline_horizon"
	now, err := TidelineScore(importance, decayRate, 0, accessCount, tier)
	if err != nil {
		var a *ArgError
		if errors.As(err, &a) {
			return never, &ArgError{Func: fn, Arg: a.Arg, Problem: a.Problem}
		}
		return never, err
	}
	if err := nonNegative(fn, "threshold", threshold); err != nil {
		return never, err
	}
	switch {
	case tier == FactPermanent || threshold == 0:
		return never, nil
	case now < threshold:
		return Horizon{}, nil
	}
	// score(d) = min(1, importance × r × exp(−λd)) < threshold ≤ 1
	//   ⇔ d > (ln(importance × r) − ln(threshold)) / λ
	lambda, reinforcement := tidelineTerms(importance, decayRate, accessCount)
	return finiteHorizon((crLog(importance*reinforcement) - crLog(threshold)) / lambda), nil
}

// Feedback nudges from reference 001: asymmetric on purpose, so a few bad
// recalls outweigh many lukewarm ones.
const (
	FeedbackUp   = 0.05 // importance + 0.05 (max 1); the access clock resets
	FeedbackDown = 0.10 // importance − 0.10 (min 0); the clock is left alone
)

// FeedbackImportance is a fact's importance after explicit feedback, and
// whether the nudge was clamped at 1 or 0.
func FeedbackImportance(importance float64, up bool) (after float64, clamped bool) {
	if up {
		return math.Min(1, importance+FeedbackUp), importance+FeedbackUp > 1
	}
	return math.Max(0, importance-FeedbackDown), importance-FeedbackDown < 0
}
