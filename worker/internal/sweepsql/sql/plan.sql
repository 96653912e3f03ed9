-- The plan: every phase decided at one read snapshot, reading only its scope
-- (every row, or the queued rows and those whose due time has come), into
-- temp tables.

-- name: scope_full
-- Evaluate every row.
CREATE TEMP VIEW sweep_blocks AS SELECT id FROM @NODES WHERE status = 'active';
CREATE TEMP VIEW sweep_facts AS SELECT id FROM @FACTS WHERE status IN ('active', 'confirmed');

-- name: scope_incremental
-- Evaluate the rows whose due time has come (scope_due or scope_due_soon),
-- and those queued as changed.
-- :slack covers rounding between a stored due time and the exact check.
CREATE TEMP TABLE scope_edges (from_id TEXT, to_id TEXT, PRIMARY KEY (from_id, to_id)) WITHOUT ROWID;
INSERT OR IGNORE INTO scope_edges SELECT from_id, to_id FROM refresh_edges;
CREATE TEMP TABLE scope_blocks (id TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT OR IGNORE INTO scope_blocks SELECT id FROM mem_block_state WHERE archive_at <= :now + :slack;
CREATE TEMP TABLE scope_facts (id TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT OR IGNORE INTO scope_facts SELECT id FROM mem_fact_due WHERE due_wall <= :wall + :slack;
INSERT OR IGNORE INTO scope_facts SELECT id FROM main.mem_dirty_facts WHERE seq <= :fact_mark;
CREATE TEMP VIEW sweep_blocks AS
SELECT s.id FROM scope_blocks s CROSS JOIN @NODES b ON b.id = s.id WHERE b.status = 'active';
CREATE TEMP VIEW sweep_facts AS
SELECT s.id FROM scope_facts s CROSS JOIN @FACTS f ON f.id = s.id WHERE f.status IN ('active', 'confirmed');

-- name: scope_due
-- The edges due now: one pass over the due times, in key order (they have
-- no index of their own).
INSERT OR IGNORE INTO scope_edges SELECT from_id, to_id FROM mem_edge_due
WHERE due_hours <= :now + :slack OR due_wall <= :wall + :slack;

-- name: scope_due_soon
-- The same from the list of edges due soon, when its horizon covers the
-- sweep's clock: every due row at or before it is there (mem_edge_soon).
INSERT OR IGNORE INTO scope_edges SELECT from_id, to_id FROM main.mem_edge_soon
WHERE due_hours <= :now + :slack OR due_wall <= :wall + :slack;

-- name: due_soon_build
-- The list of edges due soon, built again up to a new horizon (:soon_hours,
-- :soon_wall) from one pass over the due times, in key order.
DELETE FROM main.mem_edge_soon;
INSERT INTO main.mem_edge_soon (from_id, to_id, due_hours, due_wall)
SELECT from_id, to_id, due_hours, due_wall FROM main.mem_edge_due
WHERE due_hours <= :soon_hours OR due_wall <= :soon_wall;

-- name: due_soon_forget
-- A full sweep rewrites the due times: the list and its horizon go first,
-- and the sweep builds them again once the due times are written.
DELETE FROM main.mem_config WHERE key = 'due_soon';
DELETE FROM main.mem_edge_soon;

-- name: evaluate_edges
-- The edges in scope, read through the primary key, each once
-- (EDGE_EVALUATION).
CREATE TEMP TABLE sweep_edges AS
WITH eval_source AS (
    SELECT e.* FROM scope_edges s CROSS JOIN valid_edges e ON e.@KEY_A = s.from_id AND e.@KEY_B = s.to_id)
EDGE_EVALUATION;

-- name: fill_block_rates
-- The block states' ids and rates alone, for evaluate_edges_all: a million
-- edges look up two million ends, in to_id's order at random, which a copy
-- that small keeps in the page cache. A block at the standard rate, or
-- with none, is left out: an end not found counts as standard
-- (EdgeLambda), so the rates are the same bits, and the copy most blocks
-- are in is smaller (fewer levels, fewer pages to find).
DELETE FROM block_rates;
INSERT INTO block_rates (id, lambda) SELECT id, lambda FROM mem_block_state
WHERE lambda IS NOT NULL AND lambda != @STANDARD_LAMBDA ORDER BY id;

-- name: evaluate_edges_all
-- Every valid edge, in table order, evaluated as evaluate_edges does, its
-- ends' decay rates read from block_rates (EDGE_EVALUATION_ALL).
CREATE TEMP TABLE sweep_edges AS
WITH eval_source AS (SELECT e.* FROM valid_edges_scan e)
EDGE_EVALUATION_ALL;
DELETE FROM block_rates;

-- name: evaluate_edges_all_hashed
-- evaluate_edges_all with the ends' rates found in block_rates by a hash
-- table (EDGE_EVALUATION_HASHED): a file's own tables, where the copy fits
-- (refreshEveryEdge).
CREATE TEMP TABLE sweep_edges AS
WITH eval_source AS (SELECT e.* FROM valid_edges_scan e)
EDGE_EVALUATION_HASHED;
DELETE FROM block_rates;

-- name: plan_invalid
-- The rows whose derived state names a problem; through a mapping, also
-- those its views leave out for their key (a NULL, or a key that reads as
-- another row's id), which have none.
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'edge', EDGE_NAME, problem FROM mem_edge_due WHERE problem IS NOT NULL@EDGE_KEYS_INVALID;
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'block', id, problem FROM mem_block_state WHERE problem IS NOT NULL@BLOCK_KEYS_INVALID;
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'fact', id, problem FROM mem_fact_due WHERE problem IS NOT NULL@FACT_KEYS_INVALID;

-- name: plan_changed_blocks
-- The blocks changed since the refresh: their state may be older than the
-- blocks themselves, so the plan reads them as they stand.
DELETE FROM rank_changed;
INSERT OR IGNORE INTO rank_changed (id) SELECT id FROM main.mem_dirty_blocks WHERE seq > :block_mark;

-- name: bridge_threshold
-- d[min(floor(0.8 n), n - 1)] over the n non-zero degrees of the active
-- blocks sorted ascending (inbox and archived blocks have degrees too, and
-- take no part), taken only when the archival has faded blocks to decide
-- on (plan_faded). Whether a block is active comes from its state
-- (ACTIVE_IN_STATE: one pass over the narrow state table, no block read),
-- or for a block changed since the refresh, from the block. It is taken
-- counting from the top: position off = n - 1 - k of the degrees sorted
-- descending. Degrees move little between sweeps, so the sort starts from
-- the last threshold taken, g (BRIDGE_START): the off + 1 - above degrees
-- just below g, or the above - off just above it (above: how many are at
-- least g), so it keeps a few rows rather than a fifth of them; with no g
-- (NULL) it is the sort from the top. Any g gives the same number. The
-- degrees are read where they are, not copied: the counts in one pass over
-- the state table (and the changed blocks), the rows near g in another.
WITH g AS MATERIALIZED (BRIDGE_START),
d AS NOT MATERIALIZED (
    SELECT s.degree FROM mem_block_state s
    WHERE s.degree > 0 AND ACTIVE_IN_STATE AND s.id NOT IN (SELECT id FROM rank_changed)
    UNION ALL
    SELECT s.degree FROM rank_changed c CROSS JOIN mem_block_state s ON s.id = c.id CROSS JOIN @NODES b ON b.id = s.id
    WHERE s.degree > 0 AND b.status = 'active'),
counts AS MATERIALIZED (
    SELECT count(*) AS n, count(CASE WHEN s.degree >= g.g THEN 1 END) AS above
    FROM mem_block_state s CROSS JOIN g
    WHERE s.degree > 0 AND ACTIVE_IN_STATE AND s.id NOT IN (SELECT id FROM rank_changed)
    UNION ALL
    SELECT count(*), count(CASE WHEN s.degree >= g.g THEN 1 END)
    FROM rank_changed c CROSS JOIN mem_block_state s ON s.id = c.id CROSS JOIN @NODES b ON b.id = s.id CROSS JOIN g
    WHERE s.degree > 0 AND b.status = 'active'),
k AS MATERIALIZED (
    SELECT n - 1 - max(0, min(CAST(0.8 * n AS INTEGER), n - 1)) AS off, above
    FROM (SELECT sum(n) AS n, sum(above) AS above FROM counts))
SELECT CASE WHEN (SELECT above > off FROM k)
            THEN (SELECT degree FROM d WHERE degree >= (SELECT g FROM g)
                  ORDER BY degree LIMIT 1 OFFSET (SELECT above - off - 1 FROM k))
            ELSE (SELECT degree FROM d WHERE (SELECT g FROM g) IS NULL OR degree < (SELECT g FROM g)
                  ORDER BY degree DESC LIMIT 1 OFFSET (SELECT off - above FROM k)) END;

-- name: bridge_start
-- The last bridge threshold taken (BRIDGE_START), where an incremental
-- ranking's pass over the states starts looking (rank.go) when this sweep
-- took none.
BRIDGE_START;

-- name: plan_faded
-- The archival's candidates: the active blocks in scope whose recency is
-- below the threshold. Bridges among them stay (plan_archive), and only
-- when there are some does the sweep take the bridge threshold, a pass
-- over every block state.
INSERT INTO plan_faded (id, last_reinforced_hours, tier, degree, recency)
SELECT id, last_reinforced_hours, tier, degree, recency FROM (
    SELECT b.id, b.last_reinforced_hours, s.tier, s.degree,
           effective_weight(1.0, s.lambda, :now - b.last_reinforced_hours) AS recency
    FROM sweep_blocks k CROSS JOIN @NODES b ON b.id = k.id CROSS JOIN mem_block_state s ON s.id = b.id
    WHERE s.problem IS NULL AND typeof(b.last_reinforced_hours) IN ('integer', 'real')@AND_UNPINNED)
WHERE recency < :block_threshold;

-- name: plan_archive
-- The faded blocks archived: all but the bridges (:bridge, the bridge
-- threshold) and those with a pinned edge.
INSERT INTO plan_blocks (id, last_reinforced_hours, recency, tier)
SELECT c.id, c.last_reinforced_hours, c.recency, c.tier FROM plan_faded c
WHERE NOT coalesce(c.degree >= :bridge, 0)
  AND NOT EXISTS (SELECT 1 FROM @EDGES e WHERE e.@END_A = c.id AND e.pinned)
  AND NOT EXISTS (SELECT 1 FROM @EDGES e WHERE e.@END_B = c.id AND e.pinned)
ORDER BY c.id;
-- Every valid edge touching an archived block goes with it.
INSERT OR IGNORE INTO plan_edges (from_id, to_id, @ENDS_COLSphase, weight, reinforcement_count, last_active_hours, last_observed_at)
SELECT e.from_id, e.to_id, @ENDS_E'block_archived', e.weight, e.reinforcement_count, e.last_active_hours, e.last_observed_at
FROM plan_blocks p CROSS JOIN valid_edges e ON e.@END_A = p.id
UNION
SELECT e.from_id, e.to_id, @ENDS_E'block_archived', e.weight, e.reinforcement_count, e.last_active_hours, e.last_observed_at
FROM plan_blocks p CROSS JOIN valid_edges e ON e.@END_B = p.id
ORDER BY 1, 2;

-- name: plan_removals
-- With no decay cap (max_decay_fraction 1): the static prunes and the
-- decays in one pass over the evaluation, in its order. The evaluation
-- of the file's own edges is in key order (a full one reads the table in
-- its order, an incremental one its scope's), so into an empty plan they
-- come out in the order the apply takes them (plan_order has nothing to
-- do); a static prune has no effective weight, λ or elapsed hours in the
-- plan.
INSERT OR IGNORE INTO plan_edges (from_id, to_id, @ENDS_COLSphase, weight, reinforcement_count, last_active_hours, last_observed_at,
                                  effective, lambda, elapsed)
SELECT from_id, to_id, @ENDS_COLSCASE WHEN STATIC_PRUNE THEN 'static' ELSE 'temporal' END,
       weight, reinforcement_count, last_active_hours, last_observed_at,
       CASE WHEN NOT STATIC_PRUNE THEN effective END, CASE WHEN NOT STATIC_PRUNE THEN lambda END,
       CASE WHEN NOT STATIC_PRUNE THEN elapsed END
FROM sweep_edges e
WHERE STATIC_CANDIDATE OR DECAY_CANDIDATE;

-- name: plan_static
INSERT OR IGNORE INTO plan_edges (from_id, to_id, @ENDS_COLSphase, weight, reinforcement_count, last_active_hours, last_observed_at)
SELECT from_id, to_id, @ENDS_COLS'static', weight, reinforcement_count, last_active_hours, last_observed_at
FROM sweep_edges
WHERE STATIC_CANDIDATE
ORDER BY from_id, to_id;

-- name: plan_decay_candidates
CREATE TEMP TABLE plan_decay AS
SELECT from_id, to_id, @ENDS_COLSweight, reinforcement_count, last_active_hours, last_observed_at, lambda, elapsed, effective
FROM sweep_edges e
WHERE DECAY_CANDIDATE;

-- name: plan_decay_cap
-- The decay cap, when it leaves some candidates: the lowest effective
-- weights first, ties by edge.
DELETE FROM plan_decay WHERE rowid NOT IN (
    SELECT rowid FROM plan_decay ORDER BY effective, from_id, to_id LIMIT :budget);

-- name: plan_decay
INSERT INTO plan_edges (from_id, to_id, @ENDS_COLSphase, weight, reinforcement_count, last_active_hours, last_observed_at,
                        effective, lambda, elapsed)
SELECT from_id, to_id, @ENDS_COLS'temporal', weight, reinforcement_count, last_active_hours, last_observed_at, effective, lambda, elapsed
FROM plan_decay;

-- name: plan_policy
-- Edges of relation types with a policy (their only decay): evaluated on
-- the policy's clock and curve; pinned edges and edges going with an
-- archived block are left out.
CREATE TEMP TABLE plan_policy_eval AS
SELECT e.from_id, e.to_id, @ENDS_Ee.relation_type, e.weight, e.reinforcement_count, e.last_active_hours,
       e.last_observed_at, e.excluded, e.pinned, p.action, p.orphans, p.curve, p.to_zero, p.threshold,
       max(0, CASE p.clock WHEN 'wall' THEN (:wall - EDGE_OBSERVED_AT) / 86400.0 ELSE :now - e.last_active_hours END) AS elapsed
FROM sweep_edges e JOIN sweep_policy p ON p.relation_type = e.relation_type
WHERE NOT EXISTS (SELECT 1 FROM plan_edges x WHERE x.from_id = e.from_id AND x.to_id = e.to_id);
ALTER TABLE plan_policy_eval ADD COLUMN effective REAL;
ALTER TABLE plan_policy_eval ADD COLUMN below INTEGER;
UPDATE plan_policy_eval SET effective = curve_weight(curve, weight, elapsed) WHERE NOT pinned AND elapsed IS NOT NULL;
UPDATE plan_policy_eval SET below = CASE WHEN to_zero THEN effective <= 0 ELSE effective < threshold END
WHERE effective IS NOT NULL;
INSERT INTO plan_edges (from_id, to_id, @ENDS_COLSphase, relation_type, orphans, weight, reinforcement_count,
                        last_active_hours, last_observed_at, effective, elapsed)
SELECT from_id, to_id, @ENDS_COLS'policy', relation_type, orphans, weight, reinforcement_count,
       last_active_hours, last_observed_at, effective, elapsed
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
FROM (SELECT @END_A AS id FROM plan_edges WHERE phase = 'policy' AND orphans = 'delete'
      UNION SELECT @END_B FROM plan_edges WHERE phase = 'policy' AND orphans = 'delete') o
CROSS JOIN @NODES b ON b.id = o.id
WHERE b.status = 'active'@AND_UNPINNED AND b.id NOT IN (SELECT id FROM plan_blocks)
  AND NOT EXISTS (SELECT 1 FROM @EDGES e WHERE (e.@END_A = b.id OR e.@END_B = b.id)
                  AND NOT EXISTS (SELECT 1 FROM plan_edges x WHERE x.from_id = e.from_id AND x.to_id = e.to_id));

-- name: plan_lost
-- The strength each block loses in this sweep: all of it (the ranking
-- scores a block on its degree after the sweep), and the part of it that
-- prunes and decays take (removed: a full sweep's sync leaves it out of
-- the stored degrees). Where memdecay_sum_ends can, it sums lost_strengths
-- instead (sweep.sumEnds).
DELETE FROM rank_lost;
INSERT INTO rank_lost (id, strength, removed)
WITH lost AS MATERIALIZED (LOST_STRENGTHS)
SELECT id, sum(strength), coalesce(sum(removed), 0)
FROM (SELECT a AS id, strength, removed FROM lost UNION ALL SELECT b, strength, removed FROM lost)
GROUP BY id;

-- name: lost_strengths
LOST_STRENGTHS;

-- name: plan_reinforce
-- (From the constitutional blocks' states to their blocks, not through
-- every active block.)
INSERT INTO plan_reinforce (id, kind)
SELECT s.id, 'constitutional' FROM mem_block_state s CROSS JOIN @NODES b ON b.id = s.id
WHERE s.constitutional AND b.status = 'active'
  AND s.id NOT IN (SELECT id FROM plan_blocks) AND s.id NOT IN (SELECT id FROM plan_orphans);

-- name: plan_rank_all
-- Every active block left after the removals and the constitutional
-- reinforcement scored (RANK_INPUTS_ALL, RANK_SCORED), on the scales of all of
-- them. (Read twice, its maxima then the scores: computed once.)
DELETE FROM plan_rank;
DELETE FROM rank_scale;
INSERT INTO plan_rank (id, score, bound, degree, count)
WITH candidates AS MATERIALIZED (RANK_INPUTS_ALL),
scale AS (SELECT max(degree) AS max_degree, max(reinforcement_count) AS max_count FROM candidates)
RANK_SCORED;
INSERT INTO rank_scale (max_degree, max_count) SELECT max(degree), max(count) FROM plan_rank;

-- name: plan_rank_scale
-- The scales of an incremental ranking: the largest degree and count
-- among the blocks ranked, from the state of those untouched since the
-- refresh (one pass over the narrow state table, reading no block), and
-- as they stand of those changed since (rank_changed) or losing edges now
-- (rank_lost). A block losing edges but unchanged since the refresh is
-- read from its state too: its stored count is the block's count plus its
-- constitutional one, and NULL unless the block is active and usable.
-- Only the changed blocks are read. The pass looks up whether a block is
-- untouched only for those at or above a floor (:degree_floor,
-- :count_floor: the last scales shrunk as far as the ranking allows,
-- rank.go), and looks again at every block only for a largest value below
-- it: any floor, or none, gives the same scales.
DELETE FROM rank_ids;
INSERT OR IGNORE INTO rank_ids (id) SELECT id FROM rank_changed;
DELETE FROM rank_scale;
INSERT INTO rank_scale (max_degree, max_count)
WITH fresh AS MATERIALIZED (
    SELECT degree, reinforcement_count FROM (RANK_INPUTS_OF_IDS)
    UNION ALL
    SELECT max(0, s.degree - l.strength), s.rank_count
    FROM rank_lost l CROSS JOIN mem_block_state s ON s.id = l.id
    WHERE s.rank_count IS NOT NULL AND l.id NOT IN (SELECT id FROM rank_changed)
      AND l.id NOT IN (SELECT id FROM plan_blocks) AND l.id NOT IN (SELECT id FROM plan_orphans)),
high AS MATERIALIZED (
    SELECT max(CASE WHEN s.degree >= :degree_floor THEN s.degree END) AS degree,
           max(CASE WHEN s.rank_count >= :count_floor THEN s.rank_count END) AS count
    FROM mem_block_state s WHERE (s.degree >= :degree_floor OR s.rank_count >= :count_floor) AND RANKED_UNTOUCHED),
every AS MATERIALIZED (
    SELECT max(s.degree) AS degree, max(s.rank_count) AS count FROM mem_block_state s WHERE RANKED_UNTOUCHED),
stored AS MATERIALIZED (
    SELECT coalesce(h.degree, (SELECT degree FROM every)) AS degree, coalesce(h.count, (SELECT count FROM every)) AS count
    FROM high h)
SELECT max(coalesce((SELECT max(degree) FROM fresh), 0), coalesce((SELECT degree FROM stored), 0)),
       max(coalesce((SELECT max(reinforcement_count) FROM fresh), 0), coalesce((SELECT count FROM stored), 0));

-- name: plan_rank_seed
-- The blocks an incremental ranking scores first: those whose bound is
-- not known, those changed since the refresh, and the :seed best bounds.
DELETE FROM plan_rank;
DELETE FROM rank_ids;
INSERT OR IGNORE INTO rank_ids (id) SELECT id FROM mem_block_state WHERE rank_bound IS NULL;
INSERT OR IGNORE INTO rank_ids (id) SELECT id FROM rank_changed;
INSERT OR IGNORE INTO rank_ids (id)
SELECT id FROM mem_block_state INDEXED BY mem_block_state_rank_bound WHERE rank_bound > NOT_RANKED ORDER BY rank_bound DESC LIMIT :seed;

-- name: plan_rank_more
-- Then every block whose bound could reach the top (:cut, in the scales'
-- epoch: rank.go).
DELETE FROM rank_ids;
INSERT OR IGNORE INTO rank_ids (id)
SELECT id FROM mem_block_state INDEXED BY mem_block_state_rank_bound
WHERE rank_bound >= :cut AND id NOT IN (SELECT id FROM plan_rank);

-- name: plan_rank_ids
-- The blocks of rank_ids scored, on the scales of rank_scale.
INSERT INTO plan_rank (id, score, bound, degree, count)
WITH candidates AS (SELECT * FROM (RANK_INPUTS_OF_IDS) WHERE id NOT IN (SELECT id FROM plan_rank)),
scale AS (SELECT max_degree, max_count FROM rank_scale)
RANK_SCORED;

-- name: plan_rank_top
-- The top N by composite score; ties to the smaller id.
INSERT INTO plan_reinforce (id, kind)
SELECT id, 'top' FROM plan_rank ORDER BY score DESC, id LIMIT :top_n;

-- name: plan_order
-- Removals are applied in key order, the table's own, so each chunk of
-- deletes touches a few neighbouring pages. The plan is copied aside read
-- through its key (no sort), then back in the copy's order.
CREATE TEMP TABLE plan_edges_planned AS SELECT * FROM plan_edges ORDER BY from_id, to_id;
DELETE FROM plan_edges;
INSERT INTO plan_edges (from_id, to_id, @ENDS_COLSphase, relation_type, orphans, weight, reinforcement_count, last_active_hours,
                        last_observed_at, effective, lambda, elapsed)
SELECT from_id, to_id, @ENDS_COLSphase, relation_type, orphans, weight, reinforcement_count, last_active_hours,
       last_observed_at, effective, lambda, elapsed
FROM plan_edges_planned ORDER BY rowid;
DROP TABLE plan_edges_planned;

-- name: plan_facts
-- Fact lifecycle on the wall clock: days since the last access (or since
-- creation when never accessed), FACT_SINCE. (The OFFSET keeps the inner
-- query from being flattened, which would call tideline_score twice.)
INSERT INTO plan_facts (id, tier, status, importance, decay_rate, access_count, last_accessed_at, days, score, action)
SELECT id, tier, status, importance, decay_rate, access_count, last_accessed_at, days, score,
       lifecycle_action(score, tier, status = 'confirmed')
FROM (SELECT f.*, max(0, (:wall - FACT_SINCE) / 86400.0) AS days,
             tideline_score(f.importance, f.decay_rate, max(0, (:wall - FACT_SINCE) / 86400.0),
                            f.access_count, f.tier) AS score
      FROM sweep_facts k JOIN @FACTS f ON f.id = k.id
      WHERE f.id NOT IN (SELECT id FROM sweep_invalid WHERE kind = 'fact')
      LIMIT -1 OFFSET 0)
ORDER BY id;
