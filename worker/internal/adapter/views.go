package adapter

import (
	"context"
	"strings"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
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
	tables                *sweepsql.Dialect // expands the rules' tokens (an edge's ends)
	blocks, tags, edges   string            // the tables (or the adapter's views)
	facts                 string            // the facts table (or the adapter's view)
	clock, tiers          string            // the names of the clock and tier views
	effective             string            // the name of the edges' effective view
	activeHours           string            // the active-hours clock: mem_config's, or a mapping's own
	wall                  string            // the wall clock, unix seconds (viewWall when "")
	endA, endB, extraKeys string            // an edge's ends, and columns shown after its key
}

// memViews is what memworker's own views read.
var memViews = viewSource{
	tables: sweepsql.MemTables, blocks: "mem_blocks", tags: "mem_block_tags", edges: "mem_edges", facts: "main.mem_facts",
	clock: "mem_clock", tiers: "mem_block_tiers", effective: "mem_edges_effective",
	activeHours: "(SELECT value FROM mem_config WHERE key = 'active_hours')",
	endA:        "from_id", endB: "to_id",
	// The same columns as a mapping's views have: a connection keeps the
	// columns a view had when it first read it, whatever is declared after.
	extraKeys: "from_id AS end_a, to_id AS end_b, from_id AS key_raw, to_id AS key_raw2, ",
}

// clockView is one row of the clocks and thresholds the views decide by.
// The wall clock is mem_config's wall_clock when set (unix seconds: a test,
// or a reproducible report, pins it there; sweeps take it too), else the
// machine's; the decay threshold 'auto' is the prune threshold.
func (s viewSource) clockView() string {
	wall := s.wall
	if wall == "" {
		wall = viewWall
	}
	return `SELECT ` + s.activeHours + ` AS active_hours,
       ` + wall + ` AS wall,
       (SELECT value FROM mem_config WHERE key = 'established_edge_threshold') AS established,
       (SELECT CASE WHEN d.value = '` + settings.AutoThreshold + `' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = 'edge_decay_threshold' AND p.key = 'edge_prune_threshold') AS decay_threshold`
}

// viewWall is the wall clock the views read, in unix seconds.
const viewWall = `coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = 'wall_clock' AND value != ''),
                CAST(strftime('%s', 'now') AS INTEGER))`

// tiersView is each block's tier. It runs under PRAGMA trusted_schema=OFF,
// where a view may call only innocuous functions and SQLite's JSON
// functions are not: a block's tags reach decay_tier as a comma-separated
// list (group_concat) instead of the JSON array the sweep passes. Only tags
// made of lowercase letters and slashes are passed, as every tag the tier
// rules name is: a tag with a comma or spaces in it could otherwise be
// split or trimmed into one of them.
// A mapping's categories reach decay_tier as its last argument
// (@CATEGORY_TIERS).
func (s viewSource) tiersView() string {
	return s.tables.Expand(`SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), ',') FROM ` + s.tags + ` t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB '*[^a-z/]*'), ''),
                  CAST(b.category AS TEXT)@CATEGORY_TIERS) AS tier
FROM ` + s.blocks + ` b`)
}

// effectiveView is each valid edge with its model, clock, effective weight,
// time left and state ('live' or 'decayed'); a mapping's half-lives reach
// lambda_edge as its last argument (@HALF_LIVES). Rows the sweeps skip as
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
	return s.tables.Expand(`WITH cfg AS (SELECT active_hours AS now, wall, established, decay_threshold FROM ` + s.clock + `),
tiered AS (
    SELECT e.*, ta.tier AS tier_from, tb.tier AS tier_to,
           lambda_edge(coalesce(ta.tier, ` + standard + `), coalesce(tb.tier, ` + standard + `), e.reinforcement_count, cfg.established@HALF_LIVES) AS lambda,
           cfg.now, cfg.wall, cfg.decay_threshold
    FROM ` + s.edges + ` e, cfg
    LEFT JOIN ` + s.tiers + ` ta ON ta.id = e.` + s.endA + `
    LEFT JOIN ` + s.tiers + ` tb ON tb.id = e.` + s.endB + `
    WHERE ` + sweepsql.ValidEdge + `),
modelled AS (
    SELECT t.*,
           coalesce(p.clock, 'active_hours') AS clock,
           coalesce(p.model, 'tiered') AS model,
           CASE WHEN p.clock = 'wall' THEN (t.wall - ` + sweepsql.WallSeconds("t.last_observed_at") + `) / 86400.0
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
func (s viewSource) factsScoredView() string {
	return s.tables.Expand(sweepsql.Macros.Replace(`SELECT s.*,
       CASE WHEN s.status = 'archived' THEN 'archived'
            ELSE lifecycle_action(s.score, s.tier, s.status = 'confirmed') END AS action
FROM (SELECT d.*, tideline_score(d.importance, d.decay_rate, d.days_since_access, d.access_count, d.tier) AS score
      FROM (SELECT ` + sweepsql.ColumnsOf("f", sweepsql.FactColumns) + `, max(0, (c.wall - FACT_SINCE) / 86400.0) AS days_since_access
            FROM ` + s.facts + ` f, ` + s.clock + ` c
            WHERE (FACT_PROBLEM) IS NULL) AS d) AS s`))
}

// readerView is one of the readers' views: its name and its query,
// self-contained (the views it reads are its common table expressions).
type readerView struct{ name, query string }

// readerViews are the readers' views of s, each query prefixed by the
// common table expressions its tables come from (through a mapping, the
// adapter's views). They are not views of the file: the extension serves
// each under its name on every connection that loads it (eponymous
// virtual tables, ext/shim/readerviews.c), from its query as stored in
// mem_reader_views, so no object of the file's schema calls a memdecay
// function and an app's ALTER TABLE works without the extension.
func (s viewSource) readerViews(from []string) []readerView {
	cte := func(name, body string) string { return name + " AS (\n" + body + "\n)" }
	with := func(ctes ...string) string {
		all := append(append([]string{}, from...), ctes...)
		if len(all) == 0 {
			return ""
		}
		return "WITH " + strings.Join(all, ",\n") + "\n"
	}
	clock, tiers := cte(s.clock, s.clockView()), cte(s.tiers, s.tiersView())
	effective := cte(s.effective, s.effectiveView())
	edges := func(state string) string {
		return with(clock, tiers, effective) + "SELECT * FROM " + s.effective + " WHERE state = '" + state + "'"
	}
	return []readerView{
		{"mem_clock", with() + s.clockView()},
		{"mem_block_tiers", with() + s.tiersView()},
		{"mem_edges_effective", with(clock, tiers, effective) + "SELECT * FROM " + s.effective},
		{"mem_edges_live", edges("live")},
		{"mem_edges_decayed", edges("decayed")},
		{"mem_facts_scored", with(clock) + s.factsScoredView()},
	}
}

// readerViewsTable holds the readers' views' queries the extension serves.
const readerViewsTable = "mem_reader_views"

// readerViewSteps store views as the readers' views the extension serves,
// in place of those stored before.
func readerViewSteps(views []readerView) []memdb.Step {
	steps := []memdb.Step{{Query: `DELETE FROM main.` + readerViewsTable, Args: nil}}
	for _, v := range views {
		steps = append(steps, memdb.Step{Query: `INSERT INTO main.` + readerViewsTable + ` (name, sql) VALUES (?, ?)`, Args: []any{v.name, v.query}})
	}
	return steps
}

// viewsDropped are the views memworker's schema held before the readers'
// views were served by the extension, dropped in the order their
// dependants allow.
var viewsDropped = []string{"mem_edges_live", "mem_edges_decayed", "mem_facts_scored", "mem_edges_effective", "mem_block_tiers", "mem_clock"}

// mappingViewSteps are the steps that store the readers' views of the
// mapping m (memworker's own tables when m is nil or mem), which the
// mapping's check passed.
func mappingViewSteps(ctx context.Context, q memdb.Querier, m *mapping.Mapping) ([]memdb.Step, error) {
	if m == nil || m.IsDefault() {
		return readerViewSteps(memViews.readerViews(nil)), nil
	}
	a, err := adaptReaders(ctx, q, m)
	if err != nil {
		return nil, err
	}
	views, err := a.readerViews()
	if err != nil {
		return nil, err
	}
	return readerViewSteps(views), nil
}

// StoreReaderViews stores the readers' views of the database's declared
// mapping, which the extension serves on every connection that loads it
// (memworker's migrate up runs it after the migrations: a migration
// stores the views of memworker's own tables).
func StoreReaderViews(ctx context.Context, db *memdb.DB) error {
	_, err := memdb.ReadThenWrite(ctx, db, "views", func(q memdb.Querier) ([]memdb.Step, error) {
		d, err := mapping.Load(ctx, q)
		if err != nil {
			return nil, err
		}
		if !d.IsDefault() && d.Validate(ctx, q) != nil {
			// A mapping that no longer fits the schema (sweeps refuse it
			// and say why) has no views until it is declared again.
			return readerViewSteps(nil), nil
		}
		return mappingViewSteps(ctx, q, d.Mapping)
	})
	return err
}
