-- The sweep's temp tables (docs/sweep.md): the plan and its working tables live on
-- the sweep's own connection. A full sweep (the first, --full, or a dry run)
-- computes the derived state into temp tables of the same names that shadow
-- the main ones (shadow_state), and afterwards copies only the rows that
-- changed (sync.sql).
-- Parameters everywhere: :now (active hours), :wall (unix seconds), :sweep
-- (sweep id); macros (VALID_EDGE, EDGE_LAMBDA, REMOVAL_PHASES, the event
-- snapshots) are the rules and encoders of rules.go and events.go.

-- name: plan_drop
-- The working tables go (a sweep starts with plan_drop, then plan_create).
DROP TABLE IF EXISTS temp.mem_block_state;
DROP TABLE IF EXISTS temp.mem_edge_due;
DROP TABLE IF EXISTS temp.mem_fact_due;
DROP TABLE IF EXISTS temp.refresh_ids;
DROP TABLE IF EXISTS temp.refresh_edges;
DROP TABLE IF EXISTS temp.refresh_degree_deltas;
DROP TABLE IF EXISTS temp.refresh_due_rows;
DROP TABLE IF EXISTS temp.refresh_block_rows;
DROP TABLE IF EXISTS temp.block_degree;
DROP TABLE IF EXISTS temp.block_rates;
DROP TABLE IF EXISTS temp.gone_due_to;
DROP TABLE IF EXISTS temp.sync_rows;
DROP TABLE IF EXISTS temp.sweep_invalid;
DROP TABLE IF EXISTS temp.scope_edges;
DROP TABLE IF EXISTS temp.scope_blocks;
DROP TABLE IF EXISTS temp.scope_facts;
DROP TABLE IF EXISTS temp.plan_faded;
DROP TABLE IF EXISTS temp.plan_blocks;
DROP TABLE IF EXISTS temp.plan_edges;
DROP TABLE IF EXISTS temp.plan_edges_planned;
DROP TABLE IF EXISTS temp.plan_decay;
DROP TABLE IF EXISTS temp.plan_reinforce;
DROP TABLE IF EXISTS temp.rank_lost;
DROP TABLE IF EXISTS temp.rank_changed;
DROP TABLE IF EXISTS temp.rank_ids;
DROP TABLE IF EXISTS temp.rank_scale;
DROP TABLE IF EXISTS temp.plan_rank;
DROP TABLE IF EXISTS temp.apply_rows;
DROP TABLE IF EXISTS temp.apply_order;
DROP TABLE IF EXISTS temp.apply_held;
DROP TABLE IF EXISTS temp.apply_edge_keys;
DROP TABLE IF EXISTS temp.apply_block_ids;
DROP TABLE IF EXISTS temp.apply_kept_keys;
DROP TABLE IF EXISTS temp.apply_reinforce_before;
DROP TABLE IF EXISTS temp.plan_policy_eval;
DROP TABLE IF EXISTS temp.plan_flags;
DROP TABLE IF EXISTS temp.plan_orphans;
DROP TABLE IF EXISTS temp.plan_facts;
DROP TABLE IF EXISTS temp.sweep_policy;
DROP VIEW IF EXISTS temp.valid_edges;
DROP VIEW IF EXISTS temp.valid_edges_scan;
DROP TABLE IF EXISTS temp.sweep_edges;
DROP VIEW IF EXISTS temp.sweep_blocks;
DROP VIEW IF EXISTS temp.sweep_facts;

-- name: plan_create
-- Edges whose numbers are numbers; the others are reported, never touched.
CREATE TEMP VIEW valid_edges AS
SELECT e.* FROM @EDGES e WHERE VALID_EDGE;
-- The same for reading every edge: in key order, the table's own order,
-- never through another index (which would read its pages at random).
CREATE TEMP VIEW valid_edges_scan AS
SELECT e.* FROM @EDGES_SCAN WHERE VALID_EDGE;
CREATE TEMP TABLE refresh_ids (seq INTEGER PRIMARY KEY, id TEXT UNIQUE);
CREATE TEMP TABLE refresh_edges (seq INTEGER PRIMARY KEY, from_id TEXT, to_id TEXT, UNIQUE (from_id, to_id));
-- A chunk of queued edges' degree changes by block, and their due rows as
-- EDGE_DUE_ROWS makes them (refresh_edges), before they are written.
-- Untyped, so the values reach mem_block_state and mem_edge_due as the
-- statements computed them.
CREATE TEMP TABLE refresh_degree_deltas (id, delta);
CREATE TEMP TABLE refresh_due_rows (from_id, to_id, end_a, end_b, due_hours, due_wall, problem, strength);
-- Weighted degrees of every block, recounted by a full refresh: sums of
-- fixed-point strengths (EDGE_STRENGTH), exact, so a recount and degrees
-- kept by deltas give the same bits in any order.
CREATE TEMP TABLE block_degree (id TEXT PRIMARY KEY, strength REAL) WITHOUT ROWID;
-- Every block state's id and decay rate, for a full evaluation of the
-- edges (evaluate_edges_all).
CREATE TEMP TABLE block_rates (id TEXT PRIMARY KEY, lambda REAL) WITHOUT ROWID;
-- The strengths stored in the due rows of queued edges that are gone, by
-- their to_id (see refresh_blocks_queued).
CREATE TEMP TABLE gone_due_to (id TEXT PRIMARY KEY, strength REAL) WITHOUT ROWID;
-- Derived rows a full refresh changed, to copy into the main tables a
-- chunk at a time (columns NULL: the row goes).
CREATE TEMP TABLE sync_rows (seq INTEGER PRIMARY KEY, kind TEXT, id TEXT, to_id TEXT, present INTEGER,
    tier TEXT, lambda REAL, constitutional INTEGER, degree REAL, archive_at REAL,
    due_hours REAL, due_wall REAL, problem TEXT, rank_count REAL, rank_confidence REAL, rank_anchor REAL, rank_bound REAL);
CREATE TEMP TABLE refresh_block_rows (id TEXT PRIMARY KEY, tier TEXT, lambda REAL, constitutional INTEGER,
    degree REAL, archive_at REAL, problem TEXT, rank_count REAL, rank_confidence REAL, rank_anchor REAL, rank_bound REAL);
-- planned: 1 for a change the plan counted that the app's rules held or
-- kept when applied (counts.go takes it off the planned changes).
CREATE TEMP TABLE sweep_invalid (kind TEXT, id TEXT, problem TEXT, planned INTEGER);
-- The archival's candidates (plan_faded): untyped, so the values reach
-- plan_blocks as they were read.
CREATE TEMP TABLE plan_faded (id, last_reinforced_hours, tier, degree, recency);
CREATE TEMP TABLE plan_blocks (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, last_reinforced_hours, recency REAL, tier TEXT);
CREATE TEMP TABLE plan_edges (
    seq INTEGER PRIMARY KEY, from_id TEXT, to_id TEXT, @ENDS_COLSphase TEXT, relation_type TEXT, orphans TEXT,
    weight, reinforcement_count, last_active_hours, last_observed_at, effective REAL, lambda REAL, elapsed REAL,
    UNIQUE (from_id, to_id));
-- The ends of its policy deletions that orphan blocks (orphan_blocks).
CREATE INDEX temp.plan_edges_orphan_a ON plan_edges (@END_A) WHERE phase = 'policy' AND orphans = 'delete';
CREATE INDEX temp.plan_edges_orphan_b ON plan_edges (@END_B) WHERE phase = 'policy' AND orphans = 'delete';
CREATE TEMP TABLE plan_flags (
    seq INTEGER PRIMARY KEY, from_id TEXT, to_id TEXT, relation_type TEXT, excluded_to INTEGER,
    weight, last_active_hours, last_observed_at, effective REAL, threshold REAL, elapsed REAL);
CREATE TEMP TABLE plan_orphans (id TEXT PRIMARY KEY);
CREATE TEMP TABLE plan_reinforce (id TEXT, kind TEXT, PRIMARY KEY (id, kind));
-- The ranking (rank.go): the strength each block loses in this sweep, the
-- blocks changed since the refresh, the blocks to score, the scales and
-- every score computed (the bounds the apply stores).
CREATE TEMP TABLE rank_lost (id TEXT PRIMARY KEY, strength REAL, removed REAL) WITHOUT ROWID;
CREATE TEMP TABLE rank_changed (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TEMP TABLE rank_ids (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TEMP TABLE rank_scale (max_degree REAL, max_count REAL);
CREATE TEMP TABLE plan_rank (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, score REAL, bound REAL, degree REAL, count REAL);
CREATE TEMP TABLE plan_facts (
    seq INTEGER PRIMARY KEY, id TEXT UNIQUE, tier TEXT, status TEXT, importance, decay_rate, access_count,
    last_accessed_at, days REAL, score REAL, action TEXT);
CREATE TEMP TABLE sweep_policy (
    relation_type TEXT PRIMARY KEY, model TEXT, curve TEXT, clock TEXT, threshold REAL, to_zero INTEGER,
    action TEXT, orphans TEXT);
-- The plan rows of the chunk being applied that still stand.
CREATE TEMP TABLE apply_rows (seq INTEGER PRIMARY KEY);
-- apply_rows numbered 1, 2, … in order (n): the events' ids of an insert
-- that takes one row per plan row, with no window function to buffer
-- the rows it writes.
CREATE TEMP TABLE apply_order (n INTEGER PRIMARY KEY, seq INTEGER);
-- The plan rows of the chunk an app's foreign key holds (refused.go), and why.
CREATE TEMP TABLE apply_held (seq INTEGER PRIMARY KEY, why TEXT);
-- The edges the chunk being applied removes, in key order, with their
-- fixed-point strength.
CREATE TEMP TABLE apply_edge_keys (from_id TEXT, to_id TEXT, @ENDS_COLSstrength REAL, PRIMARY KEY (from_id, to_id)) WITHOUT ROWID;
-- Block ids of the chunk being applied: archived blocks, then orphans.
CREATE TEMP TABLE apply_block_ids (id TEXT PRIMARY KEY);
-- The edges of apply_edge_keys an app's trigger kept (remove_edges).
CREATE TEMP TABLE apply_kept_keys (from_id TEXT, to_id TEXT, PRIMARY KEY (from_id, to_id)) WITHOUT ROWID;
-- The reinforced blocks of the chunk being applied as they were before
-- (apply_reinforce).
CREATE TEMP TABLE apply_reinforce_before (id TEXT PRIMARY KEY, count, last);

-- name: shadow_state
-- A dry run refreshes everything into temp tables that shadow the main ones.
CREATE TEMP TABLE mem_block_state (id TEXT PRIMARY KEY, tier TEXT NOT NULL, lambda REAL NOT NULL,
    constitutional INTEGER NOT NULL, degree REAL NOT NULL, archive_at REAL, problem TEXT,
    rank_count REAL, rank_confidence REAL, rank_anchor REAL, rank_bound REAL) WITHOUT ROWID;
CREATE INDEX temp.mem_block_state_archive ON mem_block_state (archive_at) WHERE archive_at IS NOT NULL;
CREATE TEMP TABLE mem_edge_due (from_id TEXT NOT NULL, to_id TEXT NOT NULL, due_hours REAL, due_wall REAL,
    problem TEXT, strength REAL NOT NULL DEFAULT 0, end_a TEXT, end_b TEXT, PRIMARY KEY (from_id, to_id)) WITHOUT ROWID;
CREATE TEMP TABLE mem_fact_due (id TEXT PRIMARY KEY, due_wall REAL, problem TEXT) WITHOUT ROWID;

-- name: drop_shadow_state
DROP TABLE temp.mem_block_state;
DROP TABLE temp.mem_edge_due;
DROP TABLE temp.mem_fact_due;
