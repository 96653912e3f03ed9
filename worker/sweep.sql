-- The sweep (SPEC §4). Statements are named by a "-- name:" line and run in
-- order by sweep.go. A sweep first refreshes the worker's derived state
-- (mem_block_state, mem_edge_due, mem_fact_due) for the rows the triggers
-- queued. A full sweep (the first, --full, or a dry run) instead computes
-- it for every row, in passes over the tables in storage order, into temp
-- tables of the same names that shadow the main ones, inside the plan's
-- snapshot, and afterwards copies only the rows that changed. It then
-- plans every phase at one snapshot, reading only its scope (every row, or
-- the queued rows and those whose due time has come), into temp tables;
-- applies the plan in short transactions, one chunk of seq numbers at a
-- time, re-checking that each row is unchanged since it was planned; and
-- finally refreshes what its own changes queued, so the next sweep starts
-- with an empty queue.
-- Parameters: :now (active hours), :wall (unix seconds), :sweep (sweep id).

-- name: plan_reset
DROP TABLE IF EXISTS temp.mem_block_state;
DROP TABLE IF EXISTS temp.mem_edge_due;
DROP TABLE IF EXISTS temp.mem_fact_due;
DROP TABLE IF EXISTS temp.refresh_ids;
DROP TABLE IF EXISTS temp.refresh_edges;
DROP TABLE IF EXISTS temp.refresh_block_rows;
DROP TABLE IF EXISTS temp.degree;
DROP TABLE IF EXISTS temp.sync_rows;
DROP TABLE IF EXISTS temp.chunk_mark;
DROP TABLE IF EXISTS temp.sweep_invalid;
DROP TABLE IF EXISTS temp.scope_edges;
DROP TABLE IF EXISTS temp.scope_blocks;
DROP TABLE IF EXISTS temp.scope_facts;
DROP TABLE IF EXISTS temp.plan_blocks;
DROP TABLE IF EXISTS temp.plan_edges;
DROP TABLE IF EXISTS temp.plan_edges_planned;
DROP TABLE IF EXISTS temp.plan_decay;
DROP TABLE IF EXISTS temp.plan_reinforce;
DROP TABLE IF EXISTS temp.apply_rows;
DROP TABLE IF EXISTS temp.apply_block_ids;
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
-- Edges whose numbers are numbers; the others are reported, never touched.
CREATE TEMP VIEW valid_edges AS
SELECT e.rowid AS edge_rowid, e.* FROM main.mem_edges e WHERE VALID_EDGE;
-- The same for reading every edge: in table order, never through an index
-- (an index order reads the table's pages at random).
CREATE TEMP VIEW valid_edges_scan AS
SELECT e.rowid AS edge_rowid, e.* FROM main.mem_edges e NOT INDEXED WHERE VALID_EDGE;
CREATE TEMP TABLE refresh_ids (seq INTEGER PRIMARY KEY, id TEXT UNIQUE);
CREATE TEMP TABLE refresh_edges (seq INTEGER PRIMARY KEY, from_id TEXT, to_id TEXT, UNIQUE (from_id, to_id));
-- Weighted degrees of the blocks being refreshed. Each block's edge
-- strengths are added smallest first, whether for every block at once or
-- a chunk at a time, so full and incremental refreshes give the same bits
-- whatever order the rows are stored in.
CREATE TEMP TABLE degree (id TEXT PRIMARY KEY, strength REAL) WITHOUT ROWID;
-- Derived rows a full refresh changed, to copy into the main tables a
-- chunk at a time (columns NULL: the row goes).
CREATE TEMP TABLE sync_rows (seq INTEGER PRIMARY KEY, kind TEXT, id TEXT, to_id TEXT, present INTEGER,
    tier TEXT, lambda REAL, constitutional INTEGER, degree REAL, archive_at REAL,
    due_hours REAL, due_wall REAL, problem TEXT);
-- The queue's last entry when an apply chunk began: entries after it are
-- the chunk's own removals, already settled.
CREATE TEMP TABLE chunk_mark (edge_seq INTEGER);
CREATE TEMP TABLE refresh_block_rows (id TEXT PRIMARY KEY, tier TEXT, lambda REAL, constitutional INTEGER,
    degree REAL, archive_at REAL, problem TEXT);
CREATE TEMP TABLE sweep_invalid (kind TEXT, id TEXT, problem TEXT);
CREATE TEMP TABLE plan_blocks (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, last_reinforced_hours, recency REAL, tier TEXT);
CREATE TEMP TABLE plan_edges (
    seq INTEGER PRIMARY KEY, from_id TEXT, to_id TEXT, phase TEXT, relation_type TEXT, orphans TEXT,
    weight, reinforcement_count, last_active_hours, last_observed_at, effective REAL, lambda REAL, elapsed REAL,
    edge_rowid INTEGER, UNIQUE (from_id, to_id));
CREATE TEMP TABLE plan_flags (
    seq INTEGER PRIMARY KEY, from_id TEXT, to_id TEXT, relation_type TEXT, excluded_to INTEGER,
    weight, last_active_hours, last_observed_at, effective REAL, threshold REAL, elapsed REAL);
CREATE TEMP TABLE plan_orphans (id TEXT PRIMARY KEY);
CREATE TEMP TABLE plan_reinforce (id TEXT, kind TEXT, PRIMARY KEY (id, kind));
CREATE TEMP TABLE plan_facts (
    seq INTEGER PRIMARY KEY, id TEXT UNIQUE, tier TEXT, status TEXT, importance, decay_rate, access_count,
    last_accessed_at, days REAL, score REAL, action TEXT);
CREATE TEMP TABLE sweep_policy (
    relation_type TEXT PRIMARY KEY, model TEXT, curve TEXT, clock TEXT, threshold REAL, to_zero INTEGER,
    action TEXT, orphans TEXT);
-- The plan rows of the chunk being applied that still stand (edge_rowid:
-- the edge's row in mem_edges, looked up once).
CREATE TEMP TABLE apply_rows (seq INTEGER PRIMARY KEY, edge_rowid INTEGER);
-- Block ids of the chunk being applied: archived blocks, then orphans.
CREATE TEMP TABLE apply_block_ids (id TEXT PRIMARY KEY);

-- name: shadow_state
-- A dry run refreshes everything into temp tables that shadow the main ones.
CREATE TEMP TABLE mem_block_state (id TEXT PRIMARY KEY, tier TEXT NOT NULL, lambda REAL NOT NULL,
    constitutional INTEGER NOT NULL, degree REAL NOT NULL, archive_at REAL, problem TEXT) WITHOUT ROWID;
CREATE INDEX temp.mem_block_state_archive ON mem_block_state (archive_at) WHERE archive_at IS NOT NULL;
CREATE INDEX temp.mem_block_state_degree ON mem_block_state (degree);
CREATE TEMP TABLE mem_edge_due (from_id TEXT NOT NULL, to_id TEXT NOT NULL, due_hours REAL, due_wall REAL,
    problem TEXT, PRIMARY KEY (from_id, to_id)) WITHOUT ROWID;
CREATE TEMP TABLE mem_fact_due (id TEXT PRIMARY KEY, due_wall REAL, problem TEXT) WITHOUT ROWID;

-- name: refresh_blocks_all
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM main.mem_blocks ORDER BY id;

-- name: degrees_all
-- Every block's weighted degree in one pass over the edges, in table order.
DELETE FROM degree;
INSERT INTO degree (id, strength)
WITH s AS MATERIALIZED (
    SELECT from_id, to_id, edge_strength(weight, reinforcement_count) AS strength FROM valid_edges_scan)
SELECT id, sum(strength ORDER BY strength) FROM (SELECT from_id AS id, strength FROM s UNION ALL SELECT to_id, strength FROM s)
GROUP BY id;

-- name: degrees_chunk
-- The weighted degrees of one chunk of blocks, through the edge indexes.
DELETE FROM degree;
INSERT INTO degree (id, strength)
SELECT id, sum(strength ORDER BY strength) FROM (
    SELECT r.id, edge_strength(e.weight, e.reinforcement_count) AS strength
    FROM refresh_ids r CROSS JOIN main.mem_edges e ON e.from_id = r.id WHERE r.seq BETWEEN :lo AND :hi AND VALID_EDGE
    UNION ALL
    SELECT r.id, edge_strength(e.weight, e.reinforcement_count)
    FROM refresh_ids r CROSS JOIN main.mem_edges e ON e.to_id = r.id WHERE r.seq BETWEEN :lo AND :hi AND VALID_EDGE)
GROUP BY id;

-- name: refresh_blocks_queued
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM main.mem_dirty_blocks
WHERE seq > :block_from AND seq <= :block_mark ORDER BY id;

-- name: refresh_blocks
-- One chunk of blocks: tier, weighted degree (on the graph as it stands),
-- the active hour their recency falls below block_prune_threshold, and
-- what makes an active block unusable.
DELETE FROM refresh_block_rows;
INSERT INTO refresh_block_rows (id, tier, lambda, constitutional, degree, archive_at, problem)
WITH rows AS MATERIALIZED (
    SELECT b.id, b.status, b.last_reinforced_hours,
           decay_tier((SELECT json_group_array(CAST(t.tag AS TEXT)) FROM main.mem_block_tags t WHERE t.block_id = b.id),
                      CAST(b.category AS TEXT)) AS tier,
           EXISTS (SELECT 1 FROM main.mem_block_tags t WHERE t.block_id = b.id AND t.tag = 'self/constitutional') AS constitutional,
           coalesce((SELECT strength FROM degree d WHERE d.id = b.id), 0) AS degree,
           CASE WHEN b.status != 'active' THEN NULL
                WHEN b.last_reinforced_hours IS NOT NULL AND typeof(b.last_reinforced_hours) NOT IN ('integer', 'real')
                    THEN 'last_reinforced_hours is ' || typeof(b.last_reinforced_hours)
                WHEN b.confidence IS NOT NULL AND typeof(b.confidence) NOT IN ('integer', 'real')
                    THEN 'confidence is ' || typeof(b.confidence)
                WHEN typeof(b.reinforcement_count) NOT IN ('integer', 'real') OR b.reinforcement_count < 0
                    THEN 'reinforcement_count is ' || typeof(b.reinforcement_count)
           END AS problem
    FROM refresh_ids r CROSS JOIN main.mem_blocks b ON b.id = r.id
    WHERE r.seq BETWEEN :lo AND :hi),
tiered AS MATERIALIZED (SELECT rows.*, tier_lambda(tier) AS lambda FROM rows)
SELECT id, tier, lambda, constitutional, degree,
       CASE WHEN status = 'active' AND problem IS NULL AND typeof(last_reinforced_hours) IN ('integer', 'real')
            THEN last_reinforced_hours + decay_horizon(1.0, lambda, :block_threshold) END,
       problem
FROM tiered;

-- name: refresh_blocks_retier
-- A block whose tier changed changes the decay rate of its edges.
INSERT INTO main.mem_dirty_edges (from_id, to_id)
SELECT e.from_id, e.to_id FROM refresh_ids r
LEFT JOIN refresh_block_rows n ON n.id = r.id LEFT JOIN mem_block_state o ON o.id = r.id
JOIN main.mem_edges e ON e.from_id = r.id
WHERE r.seq BETWEEN :lo AND :hi AND n.tier IS NOT o.tier;
INSERT INTO main.mem_dirty_edges (from_id, to_id)
SELECT e.from_id, e.to_id FROM refresh_ids r
LEFT JOIN refresh_block_rows n ON n.id = r.id LEFT JOIN mem_block_state o ON o.id = r.id
JOIN main.mem_edges e ON e.to_id = r.id
WHERE r.seq BETWEEN :lo AND :hi AND n.tier IS NOT o.tier;

-- name: refresh_blocks_store
DELETE FROM mem_block_state WHERE id IN (SELECT id FROM refresh_ids WHERE seq BETWEEN :lo AND :hi);
INSERT INTO mem_block_state (id, tier, lambda, constitutional, degree, archive_at, problem)
SELECT id, tier, lambda, constitutional, degree, archive_at, problem FROM refresh_block_rows;


-- name: refresh_edges_queued
INSERT OR IGNORE INTO refresh_edges (from_id, to_id)
SELECT from_id, to_id FROM main.mem_dirty_edges WHERE seq > :edge_from AND seq <= :edge_mark ORDER BY from_id, to_id;

-- name: refresh_edges
-- One chunk of edges (or, in refresh_edges_all, every edge, as evaluated
-- for the plan): when each next needs a decision. -1e308 means now
-- (already below its threshold, or a static prune); NULL means never
-- (pinned, no anchor, agent-asserted, or held excluded until re-observed).
-- EDGES_TO_REFRESH is e: the edge's columns and lambda, its decay rate
-- when its numbers are numbers.
INSERT OR REPLACE INTO mem_edge_due (from_id, to_id, due_hours, due_wall, problem)
SELECT from_id, to_id,
       CASE WHEN horizon IS NULL OR clock = 'wall' THEN NULL WHEN horizon = 0 THEN -1e308 ELSE anchor + horizon END,
       CASE WHEN horizon IS NULL OR clock != 'wall' THEN NULL WHEN horizon = 0 THEN -1e308 ELSE anchor + horizon * 86400 END,
       problem
FROM (
    SELECT from_id, to_id, problem, clock,
           CASE WHEN clock = 'wall' THEN last_observed_at ELSE last_active_hours END AS anchor,
           CASE WHEN problem IS NOT NULL OR pinned THEN NULL
                WHEN policy IS NOT NULL THEN
                    CASE WHEN excluded AND action = 'exclude' THEN NULL
                         WHEN (CASE WHEN clock = 'wall' THEN last_observed_at ELSE last_active_hours END) IS NULL THEN NULL
                         ELSE curve_horizon(curve, weight, CASE WHEN to_zero THEN 0 ELSE threshold END) END
                WHEN weight < :prune_threshold AND reinforcement_count = 0 THEN 0
                WHEN origin = 'agent' OR last_active_hours IS NULL THEN NULL
                ELSE decay_horizon(weight, lambda, :decay_threshold)
           END AS horizon
    FROM (
        SELECT e.from_id, e.to_id, e.weight, e.reinforcement_count, e.origin, e.pinned, e.excluded,
               e.last_active_hours, e.last_observed_at, e.lambda,
               p.relation_type AS policy, coalesce(p.clock, 'active_hours') AS clock, p.curve, p.to_zero, p.threshold, p.action,
               CASE WHEN typeof(e.weight) NOT IN ('integer', 'real') THEN 'weight is ' || typeof(e.weight)
                    WHEN e.weight < 0 THEN 'weight is negative'
                    WHEN typeof(e.reinforcement_count) NOT IN ('integer', 'real') THEN 'reinforcement_count is ' || typeof(e.reinforcement_count)
                    WHEN e.reinforcement_count < 0 THEN 'reinforcement_count is negative'
                    WHEN e.last_active_hours IS NOT NULL AND typeof(e.last_active_hours) NOT IN ('integer', 'real')
                        THEN 'last_active_hours is ' || typeof(e.last_active_hours)
                    WHEN e.last_observed_at IS NOT NULL AND typeof(e.last_observed_at) NOT IN ('integer', 'real')
                        THEN 'last_observed_at is ' || typeof(e.last_observed_at)
               END AS problem
        FROM EDGES_TO_REFRESH
        LEFT JOIN sweep_policy p ON p.relation_type = e.relation_type))
-- In key order: appends to the table it fills.
ORDER BY from_id, to_id;
-- Edges that are gone leave no due time behind.
DELETE FROM mem_edge_due WHERE (from_id, to_id) IN (
    SELECT r.from_id, r.to_id FROM refresh_edges r WHERE r.seq BETWEEN :lo AND :hi
      AND NOT EXISTS (SELECT 1 FROM main.mem_edges e WHERE e.from_id = r.from_id AND e.to_id = r.to_id));

-- name: refresh_facts_all
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM main.mem_facts ORDER BY id;

-- name: refresh_facts_queued
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM main.mem_dirty_facts
WHERE seq > :fact_from AND seq <= :fact_mark ORDER BY id;

-- name: refresh_facts
-- One chunk of facts: the wall time their score crosses the next lifecycle
-- threshold (0.15 for short facts, 0.05 for long ones); never when immune.
DELETE FROM mem_fact_due WHERE id IN (SELECT id FROM refresh_ids WHERE seq BETWEEN :lo AND :hi);
INSERT INTO mem_fact_due (id, due_wall, problem)
SELECT id, CASE WHEN horizon IS NULL THEN NULL WHEN horizon = 0 THEN -1e308 ELSE since + horizon * 86400 END, problem
FROM (
    SELECT id, problem, coalesce(last_accessed_at, created_at) AS since,
           CASE WHEN problem IS NULL AND status = 'active' AND tier != 'permanent'
                THEN tideline_horizon(importance, decay_rate, access_count,
                                      CASE tier WHEN 'short' THEN :archive_score ELSE :prune_score END, tier) END AS horizon
    FROM (
        SELECT f.*, CASE
            WHEN f.status NOT IN ('active', 'confirmed') THEN NULL
            WHEN f.tier IS NULL THEN 'tier is NULL (unknown segment ' || quote(f.segment) || ')'
            WHEN typeof(f.importance) NOT IN ('integer', 'real') OR f.importance < 0 OR f.importance > 1
                THEN 'importance is ' || typeof(f.importance) || ' ' || quote(f.importance)
            WHEN typeof(f.decay_rate) NOT IN ('integer', 'real') OR f.decay_rate < 0 THEN 'decay_rate is ' || quote(f.decay_rate)
            WHEN typeof(f.access_count) NOT IN ('integer', 'real') OR f.access_count < 0 THEN 'access_count is ' || quote(f.access_count)
            WHEN f.last_accessed_at IS NOT NULL AND typeof(f.last_accessed_at) NOT IN ('integer', 'real')
                THEN 'last_accessed_at is ' || typeof(f.last_accessed_at)
            WHEN typeof(f.created_at) NOT IN ('integer', 'real') THEN 'created_at is ' || typeof(f.created_at)
        END AS problem
        FROM refresh_ids r CROSS JOIN main.mem_facts f ON f.id = r.id
        WHERE r.seq BETWEEN :lo AND :hi));

-- name: sync_collect
-- A full refresh computes the derived state into temp tables; the rows
-- that differ from the main tables' are then copied over a chunk at a
-- time. Edges this sweep is about to prune or decay have no due time
-- there (see refresh_edges_all), so theirs go.
DELETE FROM sync_rows;
INSERT INTO sync_rows (kind, id, present, tier, lambda, constitutional, degree, archive_at, problem)
SELECT 'block', t.id, 1, t.tier, t.lambda, t.constitutional, t.degree, t.archive_at, t.problem
FROM temp.mem_block_state t LEFT JOIN main.mem_block_state m ON m.id = t.id
WHERE m.id IS NULL OR m.tier IS NOT t.tier OR m.lambda IS NOT t.lambda OR m.constitutional IS NOT t.constitutional
   OR m.degree IS NOT t.degree OR m.archive_at IS NOT t.archive_at OR m.problem IS NOT t.problem
ORDER BY t.id;
INSERT INTO sync_rows (kind, id, present)
SELECT 'block', m.id, 0 FROM main.mem_block_state m
WHERE NOT EXISTS (SELECT 1 FROM temp.mem_block_state t WHERE t.id = m.id) ORDER BY m.id;
INSERT INTO sync_rows (kind, id, to_id, present, due_hours, due_wall, problem)
SELECT 'edge', t.from_id, t.to_id, 1, t.due_hours, t.due_wall, t.problem
FROM temp.mem_edge_due t LEFT JOIN main.mem_edge_due m ON m.from_id = t.from_id AND m.to_id = t.to_id
WHERE m.from_id IS NULL OR m.due_hours IS NOT t.due_hours OR m.due_wall IS NOT t.due_wall OR m.problem IS NOT t.problem
ORDER BY t.from_id, t.to_id;
INSERT INTO sync_rows (kind, id, to_id, present)
SELECT 'edge', m.from_id, m.to_id, 0 FROM main.mem_edge_due m
WHERE NOT EXISTS (SELECT 1 FROM temp.mem_edge_due t WHERE t.from_id = m.from_id AND t.to_id = m.to_id)
ORDER BY m.from_id, m.to_id;
INSERT INTO sync_rows (kind, id, present, due_wall, problem)
SELECT 'fact', t.id, 1, t.due_wall, t.problem
FROM temp.mem_fact_due t LEFT JOIN main.mem_fact_due m ON m.id = t.id
WHERE m.id IS NULL OR m.due_wall IS NOT t.due_wall OR m.problem IS NOT t.problem
ORDER BY t.id;
INSERT INTO sync_rows (kind, id, present)
SELECT 'fact', m.id, 0 FROM main.mem_fact_due m
WHERE NOT EXISTS (SELECT 1 FROM temp.mem_fact_due t WHERE t.id = m.id) ORDER BY m.id;

-- name: sync_apply
INSERT OR REPLACE INTO main.mem_block_state (id, tier, lambda, constitutional, degree, archive_at, problem)
SELECT id, tier, lambda, constitutional, degree, archive_at, problem FROM sync_rows
WHERE seq BETWEEN :lo AND :hi AND kind = 'block' AND present;
DELETE FROM main.mem_block_state WHERE id IN (
    SELECT id FROM sync_rows WHERE seq BETWEEN :lo AND :hi AND kind = 'block' AND NOT present);
INSERT OR REPLACE INTO main.mem_edge_due (from_id, to_id, due_hours, due_wall, problem)
SELECT id, to_id, due_hours, due_wall, problem FROM sync_rows
WHERE seq BETWEEN :lo AND :hi AND kind = 'edge' AND present;
DELETE FROM main.mem_edge_due WHERE (from_id, to_id) IN (
    SELECT id, to_id FROM sync_rows WHERE seq BETWEEN :lo AND :hi AND kind = 'edge' AND NOT present);
INSERT OR REPLACE INTO main.mem_fact_due (id, due_wall, problem)
SELECT id, due_wall, problem FROM sync_rows WHERE seq BETWEEN :lo AND :hi AND kind = 'fact' AND present;
DELETE FROM main.mem_fact_due WHERE id IN (
    SELECT id FROM sync_rows WHERE seq BETWEEN :lo AND :hi AND kind = 'fact' AND NOT present);

-- name: drop_shadow_state
DROP TABLE temp.mem_block_state;
DROP TABLE temp.mem_edge_due;
DROP TABLE temp.mem_fact_due;

-- name: scope_full
-- Evaluate every row.
CREATE TEMP VIEW sweep_blocks AS SELECT id FROM main.mem_blocks WHERE status = 'active';
CREATE TEMP VIEW sweep_facts AS SELECT id FROM main.mem_facts WHERE status IN ('active', 'confirmed');

-- name: scope_incremental
-- Evaluate the rows whose due time has come, and those queued as changed.
-- :slack covers rounding between a stored due time and the exact check.
CREATE TEMP TABLE scope_edges (from_id TEXT, to_id TEXT, PRIMARY KEY (from_id, to_id)) WITHOUT ROWID;
INSERT OR IGNORE INTO scope_edges SELECT from_id, to_id FROM mem_edge_due WHERE due_hours <= :now + :slack;
INSERT OR IGNORE INTO scope_edges SELECT from_id, to_id FROM mem_edge_due WHERE due_wall <= :wall + :slack;
INSERT OR IGNORE INTO scope_edges SELECT from_id, to_id FROM refresh_edges;
CREATE TEMP TABLE scope_blocks (id TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT OR IGNORE INTO scope_blocks SELECT id FROM mem_block_state WHERE archive_at <= :now + :slack;
CREATE TEMP TABLE scope_facts (id TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT OR IGNORE INTO scope_facts SELECT id FROM mem_fact_due WHERE due_wall <= :wall + :slack;
INSERT OR IGNORE INTO scope_facts SELECT id FROM main.mem_dirty_facts WHERE seq <= :fact_mark;
CREATE TEMP VIEW sweep_blocks AS
SELECT s.id FROM scope_blocks s CROSS JOIN main.mem_blocks b ON b.id = s.id WHERE b.status = 'active';
CREATE TEMP VIEW sweep_facts AS
SELECT s.id FROM scope_facts s CROSS JOIN main.mem_facts f ON f.id = s.id WHERE f.status IN ('active', 'confirmed');

-- name: evaluate_edges
-- The edges in scope (EDGES_IN_SCOPE: every valid edge, or the scoped ones),
-- each read once: its numbers, and for an edge the default curve decays
-- (not agent-asserted, anchored, not pinned, no policy) its decay rate and
-- effective weight now.
CREATE TEMP TABLE sweep_edges AS
SELECT e.*, CASE WHEN lambda IS NOT NULL THEN max(0, :now - last_active_hours) END AS elapsed,
       CASE WHEN lambda IS NOT NULL THEN effective_weight(weight, lambda, :now - last_active_hours) END AS effective
FROM (
    SELECT e.edge_rowid, e.from_id, e.to_id, e.weight, e.reinforcement_count, e.relation_type, e.origin,
           e.last_active_hours, e.last_observed_at, e.pinned, e.excluded, e.has_policy,
           CASE WHEN e.origin IS NOT 'agent' AND e.last_active_hours IS NOT NULL AND NOT e.pinned AND NOT e.has_policy
                THEN EDGE_LAMBDA
           END AS lambda
    FROM (SELECT e.*, e.relation_type IN (SELECT relation_type FROM sweep_policy) AS has_policy FROM EDGES_IN_SCOPE) e
    LEFT JOIN mem_block_state ta ON ta.id = e.from_id
    LEFT JOIN mem_block_state tb ON tb.id = e.to_id) e;

-- name: plan_invalid
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'edge', json_array(from_id, to_id), problem FROM mem_edge_due WHERE problem IS NOT NULL;
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'block', id, problem FROM mem_block_state WHERE problem IS NOT NULL;
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'fact', id, problem FROM mem_fact_due WHERE problem IS NOT NULL;

-- name: bridge_threshold
-- d[min(floor(0.8 n), n - 1)] over the n non-zero degrees sorted ascending.
SELECT degree FROM mem_block_state WHERE degree > 0 ORDER BY degree
LIMIT 1 OFFSET (SELECT max(0, min(CAST(0.8 * count(*) AS INTEGER), count(*) - 1)) FROM mem_block_state WHERE degree > 0);

-- name: plan_archive
INSERT INTO plan_blocks (id, last_reinforced_hours, recency, tier)
WITH faded AS MATERIALIZED (
    SELECT id, last_reinforced_hours, tier, degree, recency FROM (
        SELECT b.id, b.last_reinforced_hours, s.tier, s.degree,
               effective_weight(1.0, s.lambda, :now - b.last_reinforced_hours) AS recency
        FROM sweep_blocks k CROSS JOIN main.mem_blocks b ON b.id = k.id CROSS JOIN mem_block_state s ON s.id = b.id
        WHERE s.problem IS NULL AND typeof(b.last_reinforced_hours) IN ('integer', 'real'))
    WHERE recency < :block_threshold)
SELECT c.id, c.last_reinforced_hours, c.recency, c.tier FROM faded c
WHERE NOT coalesce(c.degree >= :bridge, 0)
  AND NOT EXISTS (SELECT 1 FROM main.mem_edges e WHERE e.from_id = c.id AND e.pinned)
  AND NOT EXISTS (SELECT 1 FROM main.mem_edges e WHERE e.to_id = c.id AND e.pinned)
ORDER BY c.id;
-- Every valid edge touching an archived block goes with it.
INSERT OR IGNORE INTO plan_edges (from_id, to_id, phase, weight, reinforcement_count, last_active_hours, last_observed_at,
                                   edge_rowid)
SELECT e.from_id, e.to_id, 'block_archived', e.weight, e.reinforcement_count, e.last_active_hours, e.last_observed_at,
       e.edge_rowid
FROM plan_blocks p CROSS JOIN valid_edges e ON e.from_id = p.id
UNION
SELECT e.from_id, e.to_id, 'block_archived', e.weight, e.reinforcement_count, e.last_active_hours, e.last_observed_at,
       e.edge_rowid
FROM plan_blocks p CROSS JOIN valid_edges e ON e.to_id = p.id
ORDER BY 1, 2;

-- name: plan_static
INSERT OR IGNORE INTO plan_edges (from_id, to_id, phase, weight, reinforcement_count, last_active_hours, last_observed_at,
                                   edge_rowid)
SELECT from_id, to_id, 'static', weight, reinforcement_count, last_active_hours, last_observed_at, edge_rowid
FROM sweep_edges
WHERE weight < :prune_threshold AND reinforcement_count = 0 AND NOT pinned AND NOT has_policy
ORDER BY from_id, to_id;

-- name: plan_decay_candidates
CREATE TEMP TABLE plan_decay AS
SELECT from_id, to_id, weight, reinforcement_count, last_active_hours, last_observed_at, lambda, edge_rowid, elapsed, effective
FROM sweep_edges e
WHERE lambda IS NOT NULL AND effective < :decay_threshold
  -- Not already planned: not a static prune, not going with a block.
  AND NOT (e.weight < :prune_threshold AND e.reinforcement_count = 0)
  AND e.from_id NOT IN (SELECT id FROM plan_blocks) AND e.to_id NOT IN (SELECT id FROM plan_blocks);

-- name: plan_decay_cap
-- The decay cap, when it leaves some candidates: the lowest effective
-- weights first, ties by edge.
DELETE FROM plan_decay WHERE rowid NOT IN (
    SELECT rowid FROM plan_decay ORDER BY effective, from_id, to_id LIMIT :budget);

-- name: plan_decay
INSERT INTO plan_edges (from_id, to_id, phase, weight, reinforcement_count, last_active_hours, last_observed_at,
                        effective, lambda, elapsed, edge_rowid)
SELECT from_id, to_id, 'temporal', weight, reinforcement_count, last_active_hours, last_observed_at, effective, lambda, elapsed,
       edge_rowid
FROM plan_decay;

-- name: plan_policy
-- Edges of relation types with a policy (their only decay): evaluated on
-- the policy's clock and curve; pinned edges and edges going with an
-- archived block are left out.
CREATE TEMP TABLE plan_policy_eval AS
SELECT e.from_id, e.to_id, e.relation_type, e.weight, e.reinforcement_count, e.last_active_hours,
       e.last_observed_at, e.excluded, e.pinned, e.edge_rowid, p.action, p.orphans, p.curve, p.to_zero, p.threshold,
       max(0, CASE p.clock WHEN 'wall' THEN (:wall - e.last_observed_at) / 86400.0 ELSE :now - e.last_active_hours END) AS elapsed
FROM sweep_edges e JOIN sweep_policy p ON p.relation_type = e.relation_type
WHERE NOT EXISTS (SELECT 1 FROM plan_edges x WHERE x.from_id = e.from_id AND x.to_id = e.to_id);
ALTER TABLE plan_policy_eval ADD COLUMN effective REAL;
ALTER TABLE plan_policy_eval ADD COLUMN below INTEGER;
UPDATE plan_policy_eval SET effective = curve_weight(curve, weight, elapsed) WHERE NOT pinned AND elapsed IS NOT NULL;
UPDATE plan_policy_eval SET below = CASE WHEN to_zero THEN effective <= 0 ELSE effective < threshold END
WHERE effective IS NOT NULL;
INSERT INTO plan_edges (from_id, to_id, phase, relation_type, orphans, weight, reinforcement_count,
                        last_active_hours, last_observed_at, effective, elapsed, edge_rowid)
SELECT from_id, to_id, 'policy', relation_type, orphans, weight, reinforcement_count,
       last_active_hours, last_observed_at, effective, elapsed, edge_rowid
FROM plan_policy_eval WHERE below AND action = 'delete'
ORDER BY from_id, to_id;
INSERT INTO plan_flags (from_id, to_id, relation_type, excluded_to, weight, last_active_hours, last_observed_at,
                        effective, threshold, elapsed)
SELECT from_id, to_id, relation_type, below, weight, last_active_hours, last_observed_at, effective,
       CASE WHEN to_zero THEN 0 ELSE threshold END, elapsed
FROM plan_policy_eval
WHERE action = 'exclude' AND below IS NOT NULL AND below != (excluded != 0)
ORDER BY from_id, to_id;
-- Orphans: active ends of policy-deleted edges (orphans = 'delete') that
-- keep no edge at all once the planned removals are done.
INSERT INTO plan_orphans (id)
SELECT DISTINCT b.id
FROM (SELECT from_id AS id FROM plan_edges WHERE phase = 'policy' AND orphans = 'delete'
      UNION SELECT to_id FROM plan_edges WHERE phase = 'policy' AND orphans = 'delete') o
CROSS JOIN main.mem_blocks b ON b.id = o.id
WHERE b.status = 'active' AND b.id NOT IN (SELECT id FROM plan_blocks)
  AND NOT EXISTS (SELECT 1 FROM main.mem_edges e WHERE (e.from_id = b.id OR e.to_id = b.id)
                  AND NOT EXISTS (SELECT 1 FROM plan_edges x WHERE x.from_id = e.from_id AND x.to_id = e.to_id));

-- name: plan_reinforce
INSERT INTO plan_reinforce (id, kind)
SELECT s.id, 'constitutional' FROM mem_block_state s JOIN main.mem_blocks b ON b.id = s.id
WHERE s.constitutional AND b.status = 'active'
  AND s.id NOT IN (SELECT id FROM plan_blocks) AND s.id NOT IN (SELECT id FROM plan_orphans);
-- Top N by composite over the active blocks and edges left after the
-- removals and the constitutional reinforcement; ties to the smaller id.
INSERT INTO plan_reinforce (id, kind)
-- A block that loses edges in this sweep loses their strength from its
-- stored degree.
WITH lost AS MATERIALIZED (
    SELECT id, sum(strength) AS strength FROM (
        SELECT from_id AS id, edge_strength(weight, reinforcement_count) AS strength FROM plan_edges
        UNION ALL
        SELECT to_id, edge_strength(weight, reinforcement_count) FROM plan_edges)
    GROUP BY id),
candidates AS (
    SELECT b.id, coalesce(b.confidence, 0.5) AS confidence,
           max(0, s.degree - coalesce(l.strength, 0)) AS degree,
           b.reinforcement_count + s.constitutional AS reinforcement_count,
           CASE WHEN s.constitutional THEN :now ELSE b.last_reinforced_hours END AS anchor,
           s.lambda
    FROM main.mem_blocks b
    JOIN mem_block_state s ON s.id = b.id
    LEFT JOIN lost l ON l.id = b.id
    WHERE b.status = 'active' AND s.problem IS NULL
      AND b.id NOT IN (SELECT id FROM plan_blocks)
      AND b.id NOT IN (SELECT id FROM plan_orphans)),
scale AS (SELECT max(degree) AS max_degree, max(reinforcement_count) AS max_count FROM candidates)
SELECT id, 'top' FROM candidates, scale
ORDER BY composite_score(
             confidence,
             CASE WHEN anchor IS NULL THEN 0 ELSE effective_weight(1.0, lambda, :now - anchor) END,
             CASE WHEN max_degree > 0 THEN degree / max_degree ELSE 0 END,
             log_normalise(reinforcement_count, max_count)) DESC,
         id
LIMIT :top_n;

-- name: plan_order
-- Removals are applied in the table's row order, so each chunk of deletes
-- touches few of its pages.
CREATE TEMP TABLE plan_edges_planned AS SELECT * FROM plan_edges;
DELETE FROM plan_edges;
INSERT INTO plan_edges (from_id, to_id, phase, relation_type, orphans, weight, reinforcement_count, last_active_hours,
                        last_observed_at, effective, lambda, elapsed, edge_rowid)
SELECT from_id, to_id, phase, relation_type, orphans, weight, reinforcement_count, last_active_hours,
       last_observed_at, effective, lambda, elapsed, edge_rowid
FROM plan_edges_planned ORDER BY edge_rowid, seq;
DROP TABLE plan_edges_planned;

-- name: plan_facts
-- Fact lifecycle on the wall clock: days since the last access (or since
-- creation when never accessed).
INSERT INTO plan_facts (id, tier, status, importance, decay_rate, access_count, last_accessed_at, days, score, action)
SELECT id, tier, status, importance, decay_rate, access_count, last_accessed_at, days, score,
       lifecycle_action(score, tier, status = 'confirmed')
FROM (SELECT f.*, max(0, (:wall - coalesce(f.last_accessed_at, f.created_at)) / 86400.0) AS days,
             tideline_score(f.importance, f.decay_rate, max(0, (:wall - coalesce(f.last_accessed_at, f.created_at)) / 86400.0),
                            f.access_count, f.tier) AS score
      FROM sweep_facts k JOIN main.mem_facts f ON f.id = k.id
      WHERE f.id NOT IN (SELECT id FROM sweep_invalid WHERE kind = 'fact'))
ORDER BY id;

-- name: apply_blocks
-- One chunk of archivals: the blocks still as planned, their events (with
-- tags), their edges' events, then the removals and the status change.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_blocks p CROSS JOIN main.mem_blocks b ON b.id = p.id
WHERE p.seq BETWEEN :lo AND :hi AND b.status = 'active' AND b.last_reinforced_hours IS p.last_reinforced_hours;
INSERT INTO main.mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT :sweep, :wall, :now, 'block', b.id, 'archive', 'decayed',
       json_object('block', BLOCK_SNAPSHOT, 'tags', BLOCK_TAGS, 'tier', p.tier, 'recency', p.recency)
FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq JOIN main.mem_blocks b ON b.id = p.id;
DELETE FROM apply_block_ids;
INSERT INTO apply_block_ids (id) SELECT p.id FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq;
INSERT INTO main.mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT :sweep, :wall, :now, 'edge', json_array(e.from_id, e.to_id), 'delete', 'block_archived',
       json_object('edge', EDGE_SNAPSHOT,
                   'archived_block', CASE WHEN e.from_id IN (SELECT id FROM apply_block_ids) THEN e.from_id ELSE e.to_id END)
FROM valid_edges e
WHERE e.from_id IN (SELECT id FROM apply_block_ids) OR e.to_id IN (SELECT id FROM apply_block_ids);
DELETE FROM main.mem_edges WHERE rowid IN (
    SELECT e.edge_rowid FROM valid_edges e
    WHERE e.from_id IN (SELECT id FROM apply_block_ids) OR e.to_id IN (SELECT id FROM apply_block_ids));
DELETE FROM main.mem_block_tags WHERE block_id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq);
UPDATE main.mem_blocks SET status = 'archived', archive_reason = 'decayed'
WHERE id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq);

-- name: apply_edges
-- One chunk of static prunes, temporal decays and policy removals, each
-- edge only if it is unchanged since it was planned (an app's refresh in
-- between wins), then the blocks this chunk left orphaned.
DELETE FROM chunk_mark;
INSERT INTO chunk_mark (edge_seq) SELECT coalesce(max(seq), 0) FROM main.mem_dirty_edges;
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq, edge_rowid)
SELECT p.seq, e.rowid FROM plan_edges p CROSS JOIN main.mem_edges e ON e.from_id = p.from_id AND e.to_id = p.to_id
WHERE p.seq BETWEEN :lo AND :hi AND p.phase IN REMOVAL_PHASES
  AND e.weight IS p.weight AND e.reinforcement_count IS p.reinforcement_count
  AND e.last_active_hours IS p.last_active_hours AND e.last_observed_at IS p.last_observed_at AND NOT e.pinned;
INSERT INTO main.mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT :sweep, :wall, :now, 'edge', json_array(e.from_id, e.to_id),
       CASE p.phase WHEN 'static' THEN 'prune' ELSE 'decay' END,
       CASE p.phase WHEN 'policy' THEN 'policy:' || p.relation_type ELSE p.phase END,
       json_object('edge', EDGE_SNAPSHOT, 'effective_weight', p.effective, 'lambda', p.lambda,
                   CASE p.phase WHEN 'policy' THEN 'elapsed' ELSE 'elapsed_hours' END, p.elapsed)
FROM apply_rows a CROSS JOIN plan_edges p ON p.seq = a.seq CROSS JOIN main.mem_edges e ON e.rowid = a.edge_rowid;
DELETE FROM main.mem_edges WHERE rowid IN (SELECT edge_rowid FROM apply_rows);
-- The removed edges need no refresh: their due times go with them (their
-- ends stay queued, for their degrees). A full sweep stored none for them.
DELETE FROM main.mem_edge_due WHERE NOT :full AND (from_id, to_id) IN (
    SELECT p.from_id, p.to_id FROM apply_rows a CROSS JOIN plan_edges p ON p.seq = a.seq);
DELETE FROM main.mem_dirty_edges WHERE seq > (SELECT edge_seq FROM chunk_mark);
DELETE FROM apply_block_ids;
INSERT INTO apply_block_ids (id)
SELECT b.id FROM (SELECT p.from_id AS id FROM apply_rows a CROSS JOIN plan_edges p ON p.seq = a.seq
                  WHERE p.phase = 'policy' AND p.orphans = 'delete'
                  UNION SELECT p.to_id FROM apply_rows a CROSS JOIN plan_edges p ON p.seq = a.seq
                  WHERE p.phase = 'policy' AND p.orphans = 'delete') AS o
CROSS JOIN main.mem_blocks b ON b.id = o.id
WHERE b.status = 'active'
  AND NOT EXISTS (SELECT 1 FROM main.mem_edges e WHERE e.from_id = b.id)
  AND NOT EXISTS (SELECT 1 FROM main.mem_edges e WHERE e.to_id = b.id);
INSERT INTO main.mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT :sweep, :wall, :now, 'block', b.id, 'archive', 'orphaned', json_object('block', BLOCK_SNAPSHOT, 'tags', BLOCK_TAGS)
FROM apply_block_ids o JOIN main.mem_blocks b ON b.id = o.id;
DELETE FROM main.mem_block_tags WHERE block_id IN (SELECT id FROM apply_block_ids);
UPDATE main.mem_blocks SET status = 'archived', archive_reason = 'orphaned' WHERE id IN (SELECT id FROM apply_block_ids);

-- name: apply_flags
-- One chunk of soft exclusions and readmissions under 'exclude' policies.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_flags p CROSS JOIN main.mem_edges e ON e.from_id = p.from_id AND e.to_id = p.to_id
WHERE p.seq BETWEEN :lo AND :hi AND e.weight IS p.weight AND e.last_active_hours IS p.last_active_hours
  AND e.last_observed_at IS p.last_observed_at AND (e.excluded != 0) != p.excluded_to AND NOT e.pinned;
INSERT INTO main.mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT :sweep, :wall, :now, 'edge', json_array(e.from_id, e.to_id),
       CASE WHEN p.excluded_to THEN 'exclude' ELSE 'readmit' END,
       CASE WHEN p.excluded_to THEN 'below_minimum' ELSE 'reobserved' END || ':' || p.relation_type,
       json_object('edge', EDGE_SNAPSHOT, 'effective_weight', p.effective, 'threshold', p.threshold, 'elapsed', p.elapsed)
FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq
JOIN main.mem_edges e ON e.from_id = p.from_id AND e.to_id = p.to_id;
-- Their due time changes with the flag: queue them for the next refresh.
INSERT INTO main.mem_dirty_edges (from_id, to_id)
SELECT p.from_id, p.to_id FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq;
UPDATE main.mem_edges SET excluded = (SELECT p.excluded_to FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq
                                      WHERE p.from_id = mem_edges.from_id AND p.to_id = mem_edges.to_id)
WHERE rowid IN (SELECT e.rowid FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq
                JOIN main.mem_edges e ON e.from_id = p.from_id AND e.to_id = p.to_id);

-- name: apply_facts
-- One chunk of fact archivals and prunes; a pruned fact lives on as the
-- snapshot in its event.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_facts p CROSS JOIN main.mem_facts f ON f.id = p.id
WHERE p.seq BETWEEN :lo AND :hi AND p.action IN ('archive', 'prune') AND f.status = 'active'
  AND f.importance IS p.importance AND f.access_count IS p.access_count AND f.last_accessed_at IS p.last_accessed_at;
INSERT INTO main.mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT :sweep, :wall, :now, 'fact', f.id, p.action, 'faded',
       json_object('fact', json_object('id', f.id, 'segment', f.segment, 'tier', f.tier, 'importance', f.importance,
                                       'decay_rate', f.decay_rate, 'access_count', f.access_count,
                                       'last_accessed_at', f.last_accessed_at, 'status', f.status,
                                       'content', f.content, 'created_at', f.created_at),
                   'score', p.score, 'days_since_access', p.days)
FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq JOIN main.mem_facts f ON f.id = p.id;
DELETE FROM main.mem_facts WHERE id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq WHERE p.action = 'prune');
UPDATE main.mem_facts SET status = 'archived'
WHERE id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq WHERE p.action = 'archive');

-- name: apply_reinforce
UPDATE main.mem_blocks
SET reinforcement_count = reinforcement_count + (SELECT count(*) FROM plan_reinforce r WHERE r.id = mem_blocks.id),
    last_reinforced_hours = :now
WHERE id IN (SELECT id FROM plan_reinforce) AND status = 'active';

-- name: clear_queues
-- The rows this sweep refreshed leave the queues, a bounded batch at a time.
DELETE FROM main.mem_dirty_blocks WHERE seq IN (SELECT seq FROM main.mem_dirty_blocks WHERE seq <= :block_mark LIMIT :limit);
DELETE FROM main.mem_dirty_edges WHERE seq IN (SELECT seq FROM main.mem_dirty_edges WHERE seq <= :edge_mark LIMIT :limit);
DELETE FROM main.mem_dirty_facts WHERE seq IN (SELECT seq FROM main.mem_dirty_facts WHERE seq <= :fact_mark LIMIT :limit);

-- name: clear_plan
DELETE FROM main.mem_sweep_plans WHERE (sweep_id, step, seq) IN (
    SELECT sweep_id, step, seq FROM main.mem_sweep_plans WHERE sweep_id <= :sweep LIMIT :limit);

-- name: expire_events
DELETE FROM main.mem_events WHERE id IN (
    SELECT id FROM main.mem_events WHERE at < :cutoff ORDER BY id LIMIT :limit);
