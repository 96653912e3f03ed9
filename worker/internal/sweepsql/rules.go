package sweepsql

import (
	"strconv"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// maxFinite is the largest finite REAL: a number above it (or below its
// negative) is an infinity, which no formula takes.
const maxFinite = `1.7976931348623157e308`

// notFinite is true of a number col outside the finite reals (±Inf). It
// is a range test rather than abs(col) > maxFinite, which fails the whole
// statement with "integer overflow" on the integer -2^63.
func notFinite(col string) string {
	return `NOT (` + col + ` BETWEEN -` + maxFinite + ` AND ` + maxFinite + `)`
}

// Wall-clock columns (mem_facts.last_accessed_at and created_at,
// mem_edges.last_observed_at) hold unix seconds, as an integer or a real,
// or ISO-8601 / SQLite datetime text, as apps write them (docs/facts.md). The
// one reading of them is try_unix_seconds (sqlfuncs/wallclock.go), which
// the views call too. Numbers, the common case, take a shortcut in plain
// SQL that gives what the function gives (a finite number is its own unix
// seconds), so a scan of every edge makes no function call per row.

// WallSeconds is a wall-clock column's value in unix seconds, for a row
// whose column badWallClock passes; NULL when the column is NULL.
func WallSeconds(col string) string {
	return `(CASE WHEN typeof(` + col + `) IN ('integer', 'real') THEN ` + col + ` ELSE try_unix_seconds(` + col + `) END)`
}

// badWallClock is true when a wall-clock column holds no time: a number
// that is not finite, a text in no accepted form, a blob, or NULL (callers
// that allow NULL test for it first).
func badWallClock(col string) string {
	return `(CASE WHEN typeof(` + col + `) IN ('integer', 'real') THEN ` + notFinite(col) + `
	    ELSE try_unix_seconds(` + col + `) IS NULL END)`
}

// wallClockProblem says what is wrong with a wall-clock column named name
// that badWallClock finds bad, quoting (the start of) a text.
func wallClockProblem(col, name string) string {
	return `CASE typeof(` + col + `)
	    WHEN 'text' THEN '` + name + ` is text ' || quote(substr(` + col + `, 1, 40))
	        || CASE WHEN length(` + col + `) > 40 THEN '…' ELSE '' END || ', not unix seconds or an ISO-8601 time'
	    WHEN 'real' THEN '` + name + ` is not finite'
	    ELSE '` + name + ` is ' || typeof(` + col + `) END`
}

// blobKey names a blob where a key belongs (an id, an edge's end or
// kind), as a WHEN of a problem's CASE. A blob is ordinary data in any
// other column (events keep it, restore gives it back); as a key, no event
// subject, report or restore could name the row, so it is a bad row.
func blobKey(col, name string) string {
	return `WHEN typeof(` + col + `) = 'blob' THEN '` + name + ` is blob ' || quote(` + col + `)`
}

// blockKeyProblem is the WHEN of a block row b's problem (refresh.sql)
// for an id that is a blob; blockAnchorNotFinite and
// blockConfidenceNotFinite are its range tests (notFinite).
var (
	blockKeyProblem          = blobKey("b.id", "id")
	blockAnchorNotFinite     = notFinite("b.last_reinforced_hours")
	blockConfidenceNotFinite = notFinite("b.confidence")
)

// EdgeName is how a report names an edge of a table with from_id and
// to_id columns: the JSON array of its ends, as its events' subject_id, an
// end that is a blob (an invalid edge) as its SQL literal.
const EdgeName = `json_array(CASE typeof(from_id) WHEN 'blob' THEN quote(from_id) ELSE from_id END,
	CASE typeof(to_id) WHEN 'blob' THEN quote(to_id) ELSE to_id END)`

// edgeProblem names what makes an edge row e invalid, NULL when it is
// valid: an end or a relation type that is a blob, a number that is not a
// finite number where one is needed, a last_observed_at that is no time,
// or a pinned flag that is not 0 or 1. Invalid rows are reported and never
// touched.
var edgeProblem = `CASE @END_PROBLEMS` + blobKey("e.from_id", "from_id") + `
	` + blobKey("e.to_id", "to_id") + `
	` + blobKey("e.relation_type", "relation_type") + `
	WHEN typeof(e.weight) NOT IN ('integer', 'real') THEN 'weight is ' || typeof(e.weight)
	WHEN e.weight < 0 THEN 'weight is negative'
	WHEN e.weight > ` + maxFinite + ` THEN 'weight is not finite'
	WHEN typeof(e.reinforcement_count) NOT IN ('integer', 'real') THEN 'reinforcement_count is ' || typeof(e.reinforcement_count)
	WHEN e.reinforcement_count < 0 THEN 'reinforcement_count is negative'
	WHEN e.reinforcement_count > ` + maxFinite + ` THEN 'reinforcement_count is not finite'
	WHEN e.last_active_hours IS NOT NULL AND typeof(e.last_active_hours) NOT IN ('integer', 'real')
	    THEN 'last_active_hours is ' || typeof(e.last_active_hours)
	WHEN ` + notFinite("e.last_active_hours") + ` THEN 'last_active_hours is not finite'
	WHEN e.last_observed_at IS NOT NULL AND ` + badWallClock("e.last_observed_at") + `
	    THEN ` + wallClockProblem("e.last_observed_at", "last_observed_at") + `
	WHEN typeof(e.pinned) != 'integer' OR e.pinned NOT IN (0, 1) THEN 'pinned is ' || quote(e.pinned) || ' (want 0 or 1)'
END`

// edgeValidByRule is the test an edge row e passes when edgeProblem
// finds nothing wrong with it: the same rule, so the two never disagree.
var edgeValidByRule = `((` + edgeProblem + `) IS NULL)`

// plainlyValidEdge is true only of an edge row e that edgeProblem passes,
// in a few comparisons rather than its dozen tests: every key below any
// blob (so not a blob), every number between finite bounds and compared
// without affinity (the unary +), so that a text or a blob, which sort
// after every number, never passes, whatever the column's affinity. NULL
// where a value is needed makes it NULL, not true. A row it does not pass
// may still be valid: validEdge then asks the rule.
const plainlyValidEdge = `(@ENDS_PRESENT+e.from_id < x'' AND +e.to_id < x'' AND +e.relation_type < x''
	AND +e.weight >= 0 AND +e.weight <= ` + maxFinite + `
	AND +e.reinforcement_count >= 0 AND +e.reinforcement_count <= ` + maxFinite + `
	AND (e.last_active_hours IS NULL OR +e.last_active_hours BETWEEN -` + maxFinite + ` AND ` + maxFinite + `)
	AND (e.last_observed_at IS NULL OR +e.last_observed_at BETWEEN -` + maxFinite + ` AND ` + maxFinite + `)
	AND typeof(e.pinned) = 'integer' AND +e.pinned IN (0, 1))`

// ValidEdge is edgeValidByRule, answered by plainlyValidEdge for the rows
// it passes (nearly all of them): a scan of every edge, a sweep's or a
// reader's view, pays a few comparisons per row, not the rule's dozen tests.
// TestPlainlyValidEdgeIsTheRule checks the two agree on hostile rows.
var ValidEdge = `(CASE WHEN ` + plainlyValidEdge + ` THEN 1 ELSE ` + edgeValidByRule + ` END)`

// edgeObservedAt is an edge e's last_observed_at in unix seconds (the
// anchor of wall-clock policies).
var edgeObservedAt = WallSeconds("e.last_observed_at")

// factProblem names what makes a fact row f unusable, NULL when it is
// usable: an id that is a blob, no tier, an importance outside [0, 1], a
// count or rate that is not a finite non-negative number, or an age that
// cannot be told. Its age counts from last_accessed_at, or from created_at
// when that is NULL, so created_at matters only then.
var factProblem = `CASE
	` + blobKey("f.id", "id") + `
	WHEN f.tier IS NULL THEN 'tier is NULL (unknown segment ' || quote(f.segment) || ')'
	WHEN typeof(f.importance) NOT IN ('integer', 'real') OR f.importance < 0 OR f.importance > 1
	    THEN 'importance is ' || typeof(f.importance) || ' ' || quote(f.importance)
	WHEN typeof(f.decay_rate) NOT IN ('integer', 'real') OR f.decay_rate < 0 THEN 'decay_rate is ' || quote(f.decay_rate)
	WHEN f.decay_rate > ` + maxFinite + ` THEN 'decay_rate is not finite'
	WHEN typeof(f.access_count) NOT IN ('integer', 'real') OR f.access_count < 0 THEN 'access_count is ' || quote(f.access_count)
	WHEN f.access_count > ` + maxFinite + ` THEN 'access_count is not finite'
	WHEN f.last_accessed_at IS NOT NULL AND ` + badWallClock("f.last_accessed_at") + `
	    THEN ` + wallClockProblem("f.last_accessed_at", "last_accessed_at") + `
	WHEN f.last_accessed_at IS NULL AND ` + badWallClock("f.created_at") + `
	    THEN ` + wallClockProblem("f.created_at", "created_at") + `
END`

// factSince is the unix time a fact f's age counts from: its last access,
// or its creation when it was never accessed.
var factSince = WallSeconds("coalesce(f.last_accessed_at, f.created_at)")

// EdgeLambda is an edge e's decay rate from its ends' block states ta and
// tb (a block with none is standard, @STANDARD_LAMBDA): lambda_edge of
// their tiers, written in SQL over the rates the states store
// (sqlfuncs.LambdaEdgeSQL, the same bits, which TestEdgeLambdaInSQL
// checks), so evaluating a million edges makes no Go call for it.
var EdgeLambda = edgeLambdaOf("ta.lambda", "tb.lambda")

// edgeLambdaOf is EdgeLambda over the ends' rates a and b (NULL: none).
func edgeLambdaOf(a, b string) string {
	return sqlfuncs.LambdaEdgeSQL("coalesce("+a+", @STANDARD_LAMBDA)", "coalesce("+b+", @STANDARD_LAMBDA)",
		"e.reinforcement_count", ":established")
}

// DecayTokens are the tokens of a mapping's decay terms (mapping.HalfLives
// and CategoryTiersJSON, each "" when not declared): @CATEGORY_TIERS and
// @HALF_LIVES, the last argument decay_tier and tier_lambda take them by
// (or nothing), and @STANDARD_LAMBDA, the standard tier's rate.
func DecayTokens(halfLives, categoryTiers string) []string {
	arg := func(json string) string {
		if json == "" {
			return ""
		}
		return ", " + Literal(json)
	}
	standard := "tier_lambda('" + sqlfuncs.TierStandard + "'" + arg(halfLives) + ")"
	if halfLives == "" {
		rate, err := sqlfuncs.TierLambda(sqlfuncs.TierStandard)
		if err != nil {
			panic(err)
		}
		standard = strconv.FormatFloat(rate, 'g', -1, 64)
	}
	return []string{"@CATEGORY_TIERS", arg(categoryTiers), "@HALF_LIVES", arg(halfLives), "@STANDARD_LAMBDA", standard}
}

// edgeStrength is an edge e's share of each end's weighted degree (docs/sweep.md
// phase 1: weight + ln(1 + reinforcement_count) × 0.10) in fixed point, a
// multiple of 2^-32: sums and differences of such numbers are exact while
// a degree stays below 2^21, so a full recount and degrees kept by deltas
// (refresh_edges, remove_edges) agree to the bit, in any order.
// A strength above 2^20 counts as 2^20 (no real edge comes near), so no
// degree overflows to infinity.
// An edge never reinforced (most of them) has its weight as its strength:
// ln(1 + 0) is 0, and weight + 0.0 is what edge_strength returns (the
// rounding to fixed point then makes a -0.0 weight 0), so no Go call is
// made for it (TestEdgeStrengthShortcutIsTheFunction).
var edgeStrength = fixedPointStrength(`CASE WHEN e.reinforcement_count = 0 THEN e.weight + 0.0
                                     ELSE edge_strength(e.weight, e.reinforcement_count) END`)

// lostStrengths are the planned edges' ends and strengths, all of each and
// the part that prunes and decays take (plan_lost): (a, b, strength,
// removed) rows, removed NULL for an edge that stays. The OFFSET keeps each
// strength computed once.
var lostStrengths = `SELECT a, b, strength, CASE WHEN removal THEN strength END AS removed
FROM (SELECT e.@END_A AS a, e.@END_B AS b, ` + edgeStrength + ` AS strength, e.phase IN ` + RemovalPhases + ` AS removal
      FROM plan_edges e LIMIT -1 OFFSET 0)`

// fixedPointStrength is a strength expr capped at 2^20 and rounded to a
// multiple of 2^-32 (edgeStrength).
func fixedPointStrength(expr string) string {
	return `(round(min(` + expr + `, 1048576.0) * 4294967296.0) / 4294967296.0)`
}

// staticPrune is the static prune (docs/sweep.md, phase 2): an edge never
// reinforced whose weight is below edge_prune_threshold.
const staticPrune = `(weight < :prune_threshold AND reinforcement_count = 0)`

// temporalDecay says whether temporal decay (docs/sweep.md, phase 3) applies to
// an edge: not agent-asserted, anchored, not pinned (an edge of a relation
// with a policy is decayed by its policy instead).
const temporalDecay = `(origin IS NOT 'agent' AND last_active_hours IS NOT NULL AND NOT pinned)`

// staticCandidate is an edge of sweep_edges that the static prune removes:
// not pinned, and of a relation with no policy (a policy is its only decay).
const staticCandidate = `(` + staticPrune + ` AND NOT pinned AND NOT has_policy)`

// decayCandidate is an edge of sweep_edges (as e) that temporal decay
// removes, unless the decay cap keeps it: below edge_decay_threshold, and
// not already planned (not a static prune, not going with a block).
const decayCandidate = `(lambda IS NOT NULL AND effective < :decay_threshold AND NOT ` + staticPrune + `
  AND e.@END_A NOT IN (SELECT id FROM plan_blocks) AND e.@END_B NOT IN (SELECT id FROM plan_blocks))`

// mayBeRemoved holds for every edge of sweep_edges that the plan's
// removals (plan_static, plan_decay, plan_policy: REMOVAL_PHASES) can
// take, and for a few more: a static prune, below the decay threshold,
// or of a relation with a policy. An edge it leaves out is kept whatever
// the plan says, so a statement need not look it up there.
const mayBeRemoved = `(` + staticPrune + ` OR effective < :decay_threshold OR has_policy)`

// plannedSettled holds while remove_edges removes the prunes and decays
// of a full sweep's plan (:settled: the sync left their strength out of
// the degrees, and the full refresh wrote them no due row, so the list of
// edges due soon built from those has none either). A resumed sweep's
// plan is not settled: its cut-off apply may have given a planned edge an
// app changed a due row, and the app may have changed it back since.
const plannedSettled = `(:step = 'plan_edges' AND :settled)`

// RemovalPhases are the plan_edges phases whose edges the apply removes
// (the others are removed with their block).
const RemovalPhases = `('static', 'temporal', 'policy')`

// edgeEvaluationOf evaluates the edges of a CTE named eval_source (valid
// edges), reading their ends' decay rates from rates (a table with id and
// lambda): each edge's numbers, whether a relation policy decays it, and
// for an edge the default curve decays (TEMPORAL_DECAY, no policy) its
// decay rate, elapsed hours and effective weight now. evaluate_edges reads
// the block states; evaluate_edges_all, every edge, reads block_rates, the
// states' ids and rates alone (edgeEvaluationAll), or finds them in it by
// memdecay_block_rate (edgeEvaluationHashed). The OFFSET keeps
// SQLite from flattening the inner query into the outer one, which would
// copy lambda_edge into each outer expression that reads lambda and call
// it up to four times per edge.
func edgeEvaluationOf(rates string) string {
	return edgeEvaluationWith(`
    LEFT JOIN `+rates+` ta ON ta.id = e.@END_A
    LEFT JOIN `+rates+` tb ON tb.id = e.@END_B`, EdgeLambda)
}

// edgeEvaluationWith is edgeEvaluationOf with the ends' rates read by
// joins (or none) and the edge's rate by lambda.
func edgeEvaluationWith(joins, lambda string) string {
	return `SELECT e.*, CASE WHEN lambda IS NOT NULL THEN max(0, :now - last_active_hours) END AS elapsed,
       CASE WHEN lambda IS NOT NULL THEN effective_weight(weight, lambda, :now - last_active_hours) END AS effective,
       ` + edgeStrength + ` AS strength
FROM (
    SELECT e.from_id, e.to_id, @ENDS_Ee.weight, e.reinforcement_count, e.relation_type, e.origin,
           e.last_active_hours, e.last_observed_at, e.pinned, e.excluded, e.has_policy,
           CASE WHEN ` + temporalDecay + ` AND NOT e.has_policy THEN ` + lambda + ` END AS lambda
    FROM (SELECT e.*, e.relation_type IN (SELECT relation_type FROM sweep_policy) AS has_policy FROM eval_source e) e` + joins + `
    LIMIT -1 OFFSET 0) e`
}

var (
	edgeEvaluation    = edgeEvaluationOf("mem_block_state")
	edgeEvaluationAll = edgeEvaluationOf("block_rates")
	// edgeEvaluationHashed finds each end's rate in block_rates with
	// memdecay_block_rate, a hash table the statement builds once (the
	// linked build, on a file; ends that are memworker's text ids, whose
	// equality with block_rates.id is the same bytes).
	edgeEvaluationHashed = edgeEvaluationWith("", edgeLambdaOf(
		"memdecay_block_rate('block_rates', e.@END_A)", "memdecay_block_rate('block_rates', e.@END_B)"))
)

// edgeDueRows is when each edge of a CTE named due_source (an edge's
// columns, its problem (EDGE_PROBLEM), lambda, its decay rate when its
// numbers are numbers, and strength, what its ends' degrees count for it)
// next needs a decision, as mem_edge_due rows in key order (appends to the
// table they fill): the horizon of its relation policy's curve on that
// policy's clock, else 0 for a static prune, else the default curve's
// horizon. -1e308 means now (already below its threshold, or a static
// prune); NULL means never (pinned, no anchor, agent-asserted, held
// excluded until re-observed, or invalid, which its problem names).
// refresh_edges and refresh_edges_all differ only in their due_source.
// The OFFSET keeps the horizon's query from being flattened into the outer
// one, which would compute each horizon up to four times.
var edgeDueRows = `SELECT from_id, to_id,
       @ENDS_COLSCASE WHEN horizon IS NULL OR clock = 'wall' THEN NULL WHEN horizon = 0 THEN -1e308 ELSE anchor + horizon END AS due_hours,
       CASE WHEN horizon IS NULL OR clock != 'wall' THEN NULL WHEN horizon = 0 THEN -1e308 ELSE anchor + horizon * 86400 END AS due_wall,
       problem, strength
FROM (
    SELECT from_id, to_id, @ENDS_COLSproblem, clock, strength,
           CASE WHEN clock = 'wall' THEN ` + WallSeconds("last_observed_at") + ` ELSE last_active_hours END AS anchor,
           CASE WHEN problem IS NOT NULL OR pinned THEN NULL
                WHEN policy IS NOT NULL THEN
                    CASE WHEN excluded AND action = 'exclude' THEN NULL
                         WHEN (CASE WHEN clock = 'wall' THEN last_observed_at ELSE last_active_hours END) IS NULL THEN NULL
                         ELSE curve_horizon(curve, weight, CASE WHEN to_zero THEN 0 ELSE threshold END) END
                WHEN ` + staticPrune + ` THEN 0
                WHEN NOT ` + temporalDecay + ` THEN NULL
                ELSE decay_horizon(weight, lambda, :decay_threshold)
           END AS horizon
    FROM (
        SELECT e.from_id, e.to_id, @ENDS_Ee.weight, e.reinforcement_count, e.origin, e.pinned, e.excluded,
               e.last_active_hours, e.last_observed_at, e.lambda,
               p.relation_type AS policy, coalesce(p.clock, 'active_hours') AS clock, p.curve, p.to_zero, p.threshold, p.action,
               e.problem, e.strength
        FROM due_source e
        LEFT JOIN sweep_policy p ON p.relation_type = e.relation_type)
    LIMIT -1 OFFSET 0)
ORDER BY from_id, to_id`

// rankInputs are the blocks the reinforcement ranking scores, from source
// (each block as b), with their composite score's inputs: every active,
// usable block not archived or orphaned in this sweep, its degree less
// the strength it loses now (rank_lost), a constitutional block counting
// one reinforcement more and as reinforced now (docs/sweep.md, phase 6).
func rankInputs(source string) string {
	return `SELECT b.id, coalesce(b.confidence, 0.5) AS confidence,
           max(0, s.degree - coalesce(l.strength, 0)) AS degree, s.degree AS stored_degree, l.strength AS lost,
           b.reinforcement_count + s.constitutional AS reinforcement_count,
           CASE WHEN s.constitutional THEN :now ELSE b.last_reinforced_hours END AS anchor,
           s.lambda
    FROM ` + source + `
    JOIN mem_block_state s ON s.id = b.id
    LEFT JOIN rank_lost l ON l.id = b.id
    WHERE b.status = 'active' AND s.problem IS NULL
      AND b.id NOT IN (SELECT id FROM plan_blocks)
      AND b.id NOT IN (SELECT id FROM plan_orphans)`
}

// rankScore is a block's composite score from its rankInputs, on the
// scales max_degree and max_count (the largest degree and count of all
// the blocks ranked), and rankBound the bound stored for it: the same
// score, or for a block losing edges now, the score it would have kept
// them (the removal may yet find an edge changed and leave it), its
// centrality at most 1.
var (
	rankScore = rankScoreOf("degree / max_degree")
	rankBound = rankScoreOf("min(1.0, stored_degree / max_degree)")
)

func rankScoreOf(centrality string) string {
	return `composite_score(
             confidence,
             CASE WHEN anchor IS NULL THEN 0 ELSE effective_weight(1.0, lambda, :now - anchor) END,
             CASE WHEN max_degree > 0 THEN ` + centrality + ` ELSE 0 END,
             log_normalise(reinforcement_count, max_count))`
}

// rankScored is the rows of plan_rank from rankInputs named candidates
// and the scales named scale: each block's score, bound, degree and count.
// (The OFFSET keeps the scores from being computed again outside.)
var rankScored = `SELECT id, score, coalesce(bound, score), degree, reinforcement_count
FROM (SELECT id, ` + rankScore + ` AS score,
             CASE WHEN lost > 0 THEN ` + rankBound + ` END AS bound, degree, reinforcement_count
      FROM candidates, scale LIMIT -1 OFFSET 0)
ORDER BY id`

// bridgeStart is the last bridge threshold taken, g (bridge_threshold):
// of the newest of the last 50 done sweeps that took one, the hint a full
// sweep left for the sweep after it (mem_config's bridge_hint: its
// removals moved the degrees far from those it planned with), or the
// threshold in its report; NULL when none did. A sweep with no faded block
// takes none, so the newest sweep may have none. Only where a sort starts:
// any g gives the same threshold.
const bridgeStart = `SELECT (
    SELECT v FROM (
        SELECT s.id, coalesce((SELECT json_extract(c.value, '$.threshold') FROM main.mem_config c
                               WHERE c.key = 'bridge_hint' AND json_valid(c.value) AND json_extract(c.value, '$.sweep') = s.id),
                              json_extract(s.result, '$.bridge_threshold')) AS v
        FROM main.mem_sweeps s WHERE s.status = 'done' AND json_valid(s.result) ORDER BY s.id DESC LIMIT 50)
    WHERE typeof(v) IN ('integer', 'real') ORDER BY id DESC LIMIT 1) AS g`

// activeInState says a block state row s is of an active block: a
// refresh gives an active block its ranking inputs, or a problem when it
// is unusable, and any other block neither.
const activeInState = `(s.rank_count IS NOT NULL OR s.problem IS NOT NULL)`

// notRanked is the rank bound of a block the ranking skips (not active,
// or unusable): below every bound (rank.go).
const notRanked = `-1e308`

// rankedUntouched is a block state row s that the ranking scores from its
// stored inputs: ranked at its refresh (its bound is not notRanked), unchanged
// since (not in rank_changed), losing no edge now and not archived or
// orphaned in this sweep.
const rankedUntouched = `coalesce(s.rank_bound, 0) > ` + notRanked + `
                       AND s.id NOT IN (SELECT id FROM rank_changed) AND s.id NOT IN (SELECT id FROM rank_lost)
                       AND s.id NOT IN (SELECT id FROM plan_blocks) AND s.id NOT IN (SELECT id FROM plan_orphans)`

// rankBoundKept says whether a refreshed block state n keeps the rank
// bound of its state o: it had one, and nothing its score is made of went
// up (a decay rate that went down would raise its recency; a last
// reinforcement that went NULL lowers it to 0). Time passing only lowers a
// score, so the bound holds (rank.go).
const rankBoundKept = `(o.rank_bound > ` + notRanked + ` AND n.lambda >= o.lambda AND n.degree <= o.degree
      AND n.rank_count <= o.rank_count AND n.rank_confidence <= o.rank_confidence
      AND (n.rank_anchor IS NULL OR n.rank_anchor <= o.rank_anchor))`
