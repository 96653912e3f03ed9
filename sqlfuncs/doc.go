// Package sqlfuncs holds the decay maths behind every memdecay SQL function,
// as plain Go with no cgo and no SQLite import. It is the single source of
// truth for each formula: the loadable extension (ext/) and the worker's
// connections call these functions, and so do the tests.
//
// SQL signatures (the registry in ext/shim writes each once, and a test
// holds this list to it; docs/ gives units and examples):
//
//	memdecay_version()
//	memdecay_debug()
//	decay_tier(tags, category [, category_tiers])
//	tier_lambda(tier [, half_lives])
//	lambda_edge(tier_a, tier_b [, reinforcement_count [, established_threshold [, half_lives]]])
//	effective_weight(weight, lambda, elapsed)
//	half_life_weight(weight, half_life, elapsed)
//	linear_weight(weight, rate, elapsed [, hold])
//	multi_linear_weight(tiers_json, elapsed)
//	power_law_weight(weight, alpha, elapsed [, scale])
//	curve_weight(curve_json, weight, elapsed)
//	decay_horizon(weight, lambda, threshold)
//	curve_horizon(curve_json, weight [, threshold])
//	tideline_score(importance, decay_rate, days_since_access, access_count [, tier])
//	segment_tier(segment)
//	segment_importance(segment)
//	segment_decay_rate(segment)
//	lifecycle_action(score, tier, confirmed)
//	edge_strength(weight, reinforcement_count)
//	log_normalise(count, max_count)
//	composite_score(confidence, recency, centrality, reinforcement)
//	policy_curve(model, params, clock)
//	tideline_horizon(importance, decay_rate, access_count, threshold [, tier])
//	unix_seconds(value)
//	try_unix_seconds(value)
package sqlfuncs

// Version is the memdecay release, returned by memdecay_version().
const Version = "0.1.0"
