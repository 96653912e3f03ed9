package worker

// The decay rules the sweep's SQL shares, each written once and expanded
// into the statements of sql/ by name (statements.go). Each reads an edge
// row as e, or its columns unqualified where the statement has one source.

// maxFinite is the largest finite REAL: a number above it (or below its
// negative) is an infinity, which no formula takes.
const maxFinite = `1.7976931348623157e308`

// edgeProblem names what makes an edge row e invalid, NULL when it is
// valid: a number that is not a finite number where one is needed, or a
// pinned flag that is not 0 or 1. Invalid rows are reported and never
// touched.
const edgeProblem = `CASE WHEN typeof(e.weight) NOT IN ('integer', 'real') THEN 'weight is ' || typeof(e.weight)
	WHEN e.weight < 0 THEN 'weight is negative'
	WHEN e.weight > ` + maxFinite + ` THEN 'weight is not finite'
	WHEN typeof(e.reinforcement_count) NOT IN ('integer', 'real') THEN 'reinforcement_count is ' || typeof(e.reinforcement_count)
	WHEN e.reinforcement_count < 0 THEN 'reinforcement_count is negative'
	WHEN e.reinforcement_count > ` + maxFinite + ` THEN 'reinforcement_count is not finite'
	WHEN e.last_active_hours IS NOT NULL AND typeof(e.last_active_hours) NOT IN ('integer', 'real')
	    THEN 'last_active_hours is ' || typeof(e.last_active_hours)
	WHEN abs(e.last_active_hours) > ` + maxFinite + ` THEN 'last_active_hours is not finite'
	WHEN e.last_observed_at IS NOT NULL AND typeof(e.last_observed_at) NOT IN ('integer', 'real')
	    THEN 'last_observed_at is ' || typeof(e.last_observed_at)
	WHEN abs(e.last_observed_at) > ` + maxFinite + ` THEN 'last_observed_at is not finite'
	WHEN typeof(e.pinned) != 'integer' OR e.pinned NOT IN (0, 1) THEN 'pinned is ' || quote(e.pinned) || ' (want 0 or 1)'
END`

// validEdge is the test an edge row e passes when edgeProblem finds
// nothing wrong with it: the same rule, so the two never disagree.
const validEdge = `((` + edgeProblem + `) IS NULL)`

// edgeLambda is an edge e's decay rate from its ends' block states ta and
// tb (a block with none is standard).
const edgeLambda = `lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count, :established)`

// edgeStrength is an edge e's share of each end's weighted degree (SPEC
// §4.1: weight + ln(1 + reinforcement_count) × 0.10) in fixed point, a
// multiple of 2^-32: sums and differences of such numbers are exact while
// a degree stays below 2^21, so a full recount, a chunk's recount and the
// sweep's own subtractions (remove_edges) agree to the bit, in any order.
// A strength above 2^20 counts as 2^20 (no real edge comes near), so no
// degree overflows to infinity.
const edgeStrength = `(round(min(edge_strength(e.weight, e.reinforcement_count), 1048576.0) * 4294967296.0) / 4294967296.0)`

// staticPrune is the static prune (SPEC §4.1 phase 2): an edge never
// reinforced whose weight is below edge_prune_threshold.
const staticPrune = `(weight < :prune_threshold AND reinforcement_count = 0)`

// temporalDecay says whether temporal decay (SPEC §4.1 phase 3) applies to
// an edge: not agent-asserted, anchored, not pinned (an edge of a relation
// with a policy is decayed by its policy instead).
const temporalDecay = `(origin IS NOT 'agent' AND last_active_hours IS NOT NULL AND NOT pinned)`

// removalPhases are the plan_edges phases whose edges the apply removes
// (the others are removed with their block).
const removalPhases = `('static', 'temporal', 'policy')`
