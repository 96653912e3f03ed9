package sqlfuncs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Block decay tiers, from most to least durable.
const (
	TierPermanent = "permanent"
	TierDurable   = "durable"
	TierStandard  = "standard"
	TierEphemeral = "ephemeral"
)

// EstablishedEdgeThreshold is the reinforcement count from which an edge
// counts as established and decays at half its base rate.
const EstablishedEdgeThreshold = 10

// tierLambdas is the decay rate per active hour of each block tier.
var tierLambdas = map[string]float64{
	TierPermanent: 0.00001,
	TierDurable:   0.001,
	TierStandard:  0.010,
	TierEphemeral: 0.050,
}

// DecayTier classifies a block from its tags and category. tags is a JSON
// array of strings (as json_group_array builds it), a comma-separated list,
// or empty. The first matching rule wins: the constitutional tag, then the
// durable self tags, then the category.
func DecayTier(tags, category string) (string, error) {
	return DecayTierMapped(tags, category, nil)
}

// CategoryTiers maps an app's category values to tiers (a mapping's
// nodes.category_tiers); a value it does not name falls to the reference
// rules (mind durable, observation ephemeral, else standard).
type CategoryTiers map[string]string

// ParseCategoryTiers reads a JSON object of category → tier name, as
// decay_tier's category_tiers argument is written.
func ParseCategoryTiers(fn, arg, text string) (CategoryTiers, error) {
	v, err := readJSON(text)
	if err != nil {
		return nil, argErr(fn, arg, "%v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, argErr(fn, arg, `must be a JSON object of category → tier such as {"goal":"durable"} (got %s)`, describeJSON(v))
	}
	out := CategoryTiers{}
	for _, category := range sortedKeys(obj) { // the first problem, the same every time
		raw := obj[category]
		tier, ok := raw.(string)
		if _, known := tierLambdas[tier]; !ok || !known {
			return nil, argErr(fn, arg, "category %q: %s is not a tier (want permanent, durable, standard or ephemeral)", category, describeJSON(raw))
		}
		out[category] = tier
	}
	return out, nil
}

// DecayTierMapped is DecayTier where an app's categories name their tiers:
// after the tags, a category that categories names takes its tier.
func DecayTierMapped(tags, category string, categories CategoryTiers) (string, error) {
	list, err := parseTags(tags)
	if err != nil {
		return "", err
	}
	durable := false
	for _, t := range list {
		switch t {
		case "self/constitutional":
			return TierPermanent, nil
		case "self/value", "self/constraint", "self/goal":
			durable = true
		}
	}
	if durable {
		return TierDurable, nil
	}
	if tier, ok := categories[category]; ok {
		return tier, nil
	}
	switch {
	case category == "mind":
		return TierDurable, nil
	case category == "observation":
		return TierEphemeral, nil
	}
	return TierStandard, nil
}

func parseTags(tags string) ([]string, error) {
	s := strings.TrimSpace(tags)
	if s == "" {
		return nil, nil
	}
	if s[0] != '[' {
		parts := strings.Split(s, ",")
		for i, p := range parts {
			parts[i] = strings.TrimSpace(p)
		}
		return parts, nil
	}
	if list, ok := plainTagArray(s); ok {
		return list, nil
	}
	v, err := readJSON(s)
	if err != nil {
		return nil, argErr("decay_tier", "tags", "%v (want a JSON array of strings)", err)
	}
	raw, ok := v.([]any)
	if !ok {
		return nil, argErr("decay_tier", "tags", "is not a JSON array of strings (got %s)", describeJSON(v))
	}
	list := make([]string, 0, len(raw))
	for i, t := range raw {
		switch t := t.(type) {
		case string:
			list = append(list, t)
		case nil: // json_group_array over a NULL tag gives null
		default:
			return nil, argErr("decay_tier", "tags", "is not a JSON array of strings: item %d is %s", i, describeJSON(t))
		}
	}
	return list, nil
}

// TierLambda is the decay rate per active hour of a block tier.
func TierLambda(tier string) (float64, error) {
	return tierLambda("tier_lambda", "tier", tier, nil)
}

// TierLambdaMapped is TierLambda where declared half-lives set the rates
// of the tiers they name.
func TierLambdaMapped(tier string, rates TierRates) (float64, error) {
	return tierLambda("tier_lambda", "tier", tier, rates)
}

func tierLambda(fn, arg, tier string, rates TierRates) (float64, error) {
	l, ok := tierLambdas[tier]
	if !ok {
		return 0, argErr(fn, arg, "%q is not a tier (want permanent, durable, standard or ephemeral)", tier)
	}
	if r, ok := rates[tier]; ok {
		return r, nil
	}
	return l, nil
}

// TierRates are the decay rates per hour that declared half-lives give the
// tiers they name (a mapping's [tiers]); the others keep the reference's.
type TierRates map[string]float64

// ParseHalfLives reads a JSON object of tier → half-life, as tier_lambda's
// and lambda_edge's half_lives argument is written: a number of hours, or
// a duration ("36h", "30d", "2w"; "90d" is 2160 hours of the clock). A
// half-life h gives the rate ln 2 / h: a block's recency halves every h.
// Permanent is not among them: it never fades.
func ParseHalfLives(fn, arg, text string) (TierRates, error) {
	v, err := readJSON(text)
	if err != nil {
		return nil, argErr(fn, arg, "%v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, argErr(fn, arg, `must be a JSON object of tier → half-life such as {"standard":"30d"} (got %s)`, describeJSON(v))
	}
	rates := TierRates{}
	for _, tier := range sortedKeys(obj) { // the first problem, the same every time
		raw := obj[tier]
		switch _, known := tierLambdas[tier]; {
		case tier == TierPermanent:
			return nil, argErr(fn, arg, "permanent never fades: give half-lives of durable, standard or ephemeral")
		case !known:
			return nil, argErr(fn, arg, "%q is not a tier (want durable, standard or ephemeral)", tier)
		}
		hours, err := policyNumber(fn, arg+" "+tier, raw, true, ClockActiveHours)
		if err != nil {
			return nil, err
		}
		rate := math.Ln2 / hours
		if !(hours > 0) || math.IsInf(rate, 0) || math.IsInf(hours, 0) {
			return nil, argErr(fn, arg+" "+tier, "must be a finite half-life above 0 (got %s)", describeJSON(raw))
		}
		rates[tier] = rate
	}
	return rates, nil
}

// LambdaEdge is an edge's decay rate: half the rate of its more durable end,
// halved again once the edge is established (reinforcementCount ≥
// establishedThreshold), so proven relationships outlast their blocks.
func LambdaEdge(tierA, tierB string, reinforcementCount, establishedThreshold float64) (float64, error) {
	return LambdaEdgeMapped(tierA, tierB, reinforcementCount, establishedThreshold, nil)
}

// LambdaEdgeMapped is LambdaEdge with the tiers' rates set by declared
// half-lives (TierLambdaMapped).
func LambdaEdgeMapped(tierA, tierB string, reinforcementCount, establishedThreshold float64, rates TierRates) (float64, error) {
	const fn = "lambda_edge"
	la, err := tierLambda(fn, "tier_a", tierA, rates)
	if err != nil {
		return 0, err
	}
	lb, err := tierLambda(fn, "tier_b", tierB, rates)
	if err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "reinforcement_count", reinforcementCount); err != nil {
		return 0, err
	}
	if err := nonNegative(fn, "established_threshold", establishedThreshold); err != nil {
		return 0, err
	}
	l := min(la, lb) * edgeShare
	if reinforcementCount >= establishedThreshold {
		l *= establishedShare
	}
	return l, nil
}

// An edge decays at edgeShare of its more durable end's rate, and an
// established edge at establishedShare of that again.
const (
	edgeShare        = 0.5
	establishedShare = 0.5
)

// LambdaEdgeSQL is LambdaEdge as a SQL expression over the ends' rates
// (tier_lambda of their tiers, SQL expressions rateA and rateB), the count
// and the threshold: the same operations in the same order, so the same
// bits, for SQL that has the rates at hand and need not call lambda_edge
// once per row. The caller checks its arguments as LambdaEdge does.
func LambdaEdgeSQL(rateA, rateB, reinforcementCount, establishedThreshold string) string {
	return fmt.Sprintf("(min(%s, %s) * %s * CASE WHEN %s >= %s THEN %s ELSE 1.0 END)",
		rateA, rateB, sqlNumber(edgeShare), reinforcementCount, establishedThreshold, sqlNumber(establishedShare))
}

// sqlNumber is a float64 as a SQL literal that reads back as the same bits.
func sqlNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// plainTagArray reads the tags as json_group_array writes them for plain
// tags: ["a","b"], strings of printable ASCII without escapes, or null, and
// no spaces. Where it answers, the JSON decoder reads the same list (the
// tiers of a million blocks are classified without it: it costs a
// microsecond a block); anything else is left to it.
func plainTagArray(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	list := []string{}
	for i := 0; i < len(body); {
		if len(list) > 0 || i > 0 {
			if body[i] != ',' {
				return nil, false
			}
			i++
		}
		switch {
		case strings.HasPrefix(body[i:], "null"):
			i += len("null")
		case i < len(body) && body[i] == '"':
			end := i + 1
			for end < len(body) && body[end] != '"' {
				if c := body[end]; c < 0x20 || c > 0x7e || c == '\\' {
					return nil, false
				}
				end++
			}
			if end == len(body) {
				return nil, false
			}
			list = append(list, body[i+1:end])
			i = end + 1
		default:
			return nil, false
		}
	}
	return list, true
}
