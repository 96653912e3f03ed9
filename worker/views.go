package worker

import (
	"strings"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// The views a reader decides by (mem_clock, mem_block_tiers,
// mem_edges_effective and the views over it, mem_facts_scored), written
// once here from the same rule macros and sqlfuncs constants the sweep
// uses: which rows are valid (validEdge, factProblem), a wall-clock
// column's seconds (wallSeconds), the models that die at weight 0
// (sqlfuncs.DiesAtZero), the 'auto' threshold (autoThreshold). The schema
// holds them as this file writes them for memworker's tables: the views'
// migration is their text (TestSchemaViewsAreViewsGo; a rule that changes
// writes the next migration with -update-views). Through a mapping the
// same functions make the same views over the adapter's views
// (mapped_views.go).

// viewSource is what the views read, and under which names they are made.
type viewSource struct {
	tables                *dialect // expands the rules' tokens (an edge's ends)
	blocks, tags, edges   string   // the tables (or the adapter's views)
	clock, tiers          string   // the names of the clock and tier views
	activeHours           string   // the active-hours clock: mem_config's, or a mapping's own
	endA, endB, extraKeys string   // an edge's ends, and columns shown after its key
}

// memViews is what memworker's own views read.
var memViews = viewSource{
	tables: memTables, blocks: "mem_blocks", tags: "mem_block_tags", edges: "mem_edges",
	clock: "mem_clock", tiers: "mem_block_tiers",
	activeHours: "(SELECT value FROM mem_config WHERE key = 'active_hours')",
	endA:        "from_id", endB: "to_id",
}

// clockView is one row of the clocks and thresholds the views decide by.
// The wall clock is mem_config's wall_clock when set (unix seconds: a test,
// or a reproducible report, pins it there; sweeps take it too), else the
// machine's; the decay threshold 'auto' is the prune threshold.
func (s viewSource) clockView() string {
	return `SELECT ` + s.activeHours + ` AS active_hours,
       coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = 'wall_clock' AND value != ''),
                CAST(strftime('%s', 'now') AS INTEGER)) AS wall,
       (SELECT value FROM mem_config WHERE key = 'established_edge_threshold') AS established,
       (SELECT CASE WHEN d.value = '` + autoThreshold + `' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = 'edge_decay_threshold' AND p.key = 'edge_prune_threshold') AS decay_threshold`
}

// tiersView is each block's tier. It runs under PRAGMA trusted_schema=OFF,
// where a view may call only innocuous functions and SQLite's JSON
// functions are not: a block's tags reach decay_tier as a comma-separated
// list (group_concat) instead of the JSON array the sweep passes. Only tags
// made of lowercase letters and slashes are passed, as every tag the tier
// rules name is: a tag with a comma or spaces in it could otherwise be
// split or trimmed into one of them.
func (s viewSource) tiersView() string {
	return `SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), ',') FROM ` + s.tags + ` t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB '*[^a-z/]*'), ''),
                  CAST(b.category AS TEXT)) AS tier
FROM ` + s.blocks + ` b`
}

// effectiveView is each valid edge with its model, clock, effective weight,
// time left and state ('live' or 'decayed'). Rows the sweeps skip as
// invalid (validEdge) are left out, so one bad row never fails the view
// for every reader.
func (s viewSource) effectiveView() string {
	var diesAtZero []string
	for _, m := range sqlfuncs.Models {
		if sqlfuncs.DiesAtZero(m) {
			diesAtZero = append(diesAtZero, "'"+m+"'")
		}
	}
	standard := "'" + sqlfuncs.TierStandard + "'"
	return s.tables.expand(`WITH cfg AS (SELECT active_hours AS now, wall, established, decay_threshold FROM ` + s.clock + `),
tiered AS (
    SELECT e.*, ta.tier AS tier_from, tb.tier AS tier_to,
           lambda_edge(coalesce(ta.tier, ` + standard + `), coalesce(tb.tier, ` + standard + `), e.reinforcement_count, cfg.established) AS lambda,
           cfg.now, cfg.wall, cfg.decay_threshold
    FROM ` + s.edges + ` e, cfg
    LEFT JOIN ` + s.tiers + ` ta ON ta.id = e.` + s.endA + `
    LEFT JOIN ` + s.tiers + ` tb ON tb.id = e.` + s.endB + `
    WHERE ` + validEdge + `),
modelled AS (
    SELECT t.*,
           coalesce(p.clock, 'active_hours') AS clock,
           coalesce(p.model, 'tiered') AS model,
           CASE WHEN p.clock = 'wall' THEN (t.wall - ` + wallSeconds("t.last_observed_at") + `) / 86400.0
                ELSE t.now - t.last_active_hours END AS elapsed,
           coalesce(p.threshold, t.decay_threshold) AS threshold,
           -- These curves die at weight <= 0, whether their threshold is NULL or 0.
           coalesce(p.model IN (` + strings.Join(diesAtZero, ", ") + `) AND coalesce(p.threshold, 0) = 0, 0) AS to_zero,
           policy_curve(p.model, p.params, p.clock) AS curve, p.action
    FROM tiered t LEFT JOIN mem_edge_policies p ON p.relation_type = t.relation_type),
weighed AS (
    SELECT m.*,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = 'agent') THEN m.weight
                WHEN m.curve IS NULL THEN effective_weight(m.weight, m.lambda, m.elapsed)
                ELSE curve_weight(m.curve, m.weight, m.elapsed) END AS effective_weight,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = 'agent') THEN NULL
                WHEN m.curve IS NULL THEN decay_horizon(m.weight, m.lambda, m.threshold) - max(0, m.elapsed)
                ELSE curve_horizon(m.curve, m.weight, CASE WHEN m.to_zero THEN 0 ELSE m.threshold END) - max(0, m.elapsed)
           END AS time_left
    FROM modelled m)
SELECT from_id, to_id, ` + s.extraKeys + `relation_type, origin, weight, reinforcement_count, pinned, excluded,
       tier_from, tier_to, model, clock,
       CASE WHEN curve IS NULL THEN lambda END AS lambda,
       max(0, elapsed) AS elapsed,
       CASE WHEN clock = 'active_hours' THEN max(0, elapsed) END AS elapsed_hours,
       effective_weight, threshold,
       max(0, time_left) AS time_left,
       CASE WHEN clock = 'active_hours' THEN max(0, time_left) END AS hours_left,
       CASE WHEN pinned OR elapsed IS NULL THEN 'live'
            WHEN to_zero AND effective_weight <= 0 THEN 'decayed'
            WHEN NOT to_zero AND effective_weight < threshold AND (curve IS NOT NULL OR origin IS NOT 'agent') THEN 'decayed'
            ELSE 'live' END AS state
FROM weighed`)
}

// factsScoredView is each usable fact (factProblem finds nothing wrong)
// with its score and the action a sweep would take now.
func factsScoredView() string {
	return memSQL(`SELECT s.*,
       CASE WHEN s.status = 'archived' THEN 'archived'
            ELSE lifecycle_action(s.score, s.tier, s.status = 'confirmed') END AS action
FROM (SELECT d.*, tideline_score(d.importance, d.decay_rate, d.days_since_access, d.access_count, d.tier) AS score
      FROM (SELECT f.*, max(0, (c.wall - FACT_SINCE) / 86400.0) AS days_since_access
            FROM mem_facts f, mem_clock c
            WHERE (FACT_PROBLEM) IS NULL) AS d) AS s`)
}

// schemaViews are the CREATE VIEW statements of memworker's views, in the
// order they depend on each other; the schema's views migration holds
// them as they are.
func schemaViews() []string {
	view := func(name, body string) string { return "CREATE VIEW " + name + " AS\n" + body }
	return []string{
		view("mem_clock", memViews.clockView()),
		view("mem_block_tiers", memViews.tiersView()),
		view("mem_edges_effective", memViews.effectiveView()),
		view("mem_edges_live", "SELECT * FROM mem_edges_effective WHERE state = 'live'"),
		view("mem_edges_decayed", "SELECT * FROM mem_edges_effective WHERE state = 'decayed'"),
		view("mem_facts_scored", factsScoredView()),
	}
}

// viewsDropped are the views schemaViews makes, dropped in the order
// their dependants allow.
var viewsDropped = []string{"mem_edges_live", "mem_edges_decayed", "mem_facts_scored", "mem_edges_effective", "mem_block_tiers", "mem_clock"}
