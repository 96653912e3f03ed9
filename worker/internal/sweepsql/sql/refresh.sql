-- The refresh of the worker's derived state (mem_block_state, mem_edge_due,
-- mem_fact_due) for the rows the triggers queued (the *_queued forms), or
-- for every row into the temp shadow tables (the *_all forms), a chunk of
-- ids at a time.

-- name: refresh_blocks_all
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM @NODES ORDER BY id;

-- name: degrees_all
-- Every block's weighted degree in one pass over the edges, in key order
-- (a full refresh), and 0 for every other block being refreshed.
DELETE FROM block_degree;
INSERT INTO block_degree (id, strength)
WITH s AS MATERIALIZED (
    SELECT e.@END_A, e.@END_B, EDGE_STRENGTH AS strength FROM valid_edges_scan e)
SELECT id, sum(strength) FROM (SELECT @END_A AS id, strength FROM s UNION ALL SELECT @END_B, strength FROM s)
GROUP BY id;
INSERT OR IGNORE INTO block_degree (id, strength) SELECT id, 0 FROM refresh_ids;

-- name: degrees_later
-- A full refresh on a file counts every degree from the strengths the
-- edges' evaluation computes (degrees_from_evaluation), which needs the
-- blocks' tiers first: until then every block refreshed has degree 0.
DELETE FROM block_degree;
INSERT OR IGNORE INTO block_degree (id, strength) SELECT id, 0 FROM refresh_ids;

-- name: degrees_from_evaluation
-- After evaluate_edges_all: every block's weighted degree from the
-- strengths in sweep_edges (no edge read again; the from side in key
-- order, then the to side added). Fixed-point sums: the same bits as
-- degrees_all. Where memdecay_sum_ends can, it sums edge_strengths instead
-- (sweep.sumEnds).
DELETE FROM block_degree;
INSERT INTO block_degree (id, strength) SELECT @END_A, sum(strength) FROM sweep_edges GROUP BY @END_A;
INSERT INTO block_degree (id, strength) SELECT @END_B, sum(strength) FROM sweep_edges WHERE true GROUP BY @END_B
ON CONFLICT (id) DO UPDATE SET strength = strength + excluded.strength;

-- name: edge_strengths
-- Each evaluated edge's ends and strength, for memdecay_sum_ends.
SELECT @END_A, @END_B, strength FROM sweep_edges;

-- name: degrees_store
-- The degrees counted into the block states the full refresh stored with
-- degree 0.
UPDATE temp.mem_block_state SET degree = d.strength FROM block_degree d WHERE d.id = mem_block_state.id;

-- name: refresh_blocks_queued
-- The queued blocks. A block keeps the degree it has; one with no state
-- yet starts from its edges' stored strengths (see refresh_blocks), the
-- due rows of queued edges that are gone included: gone_due_to sums those
-- by their to_id (their from_id is the due table's own key), read from the
-- edge queue only when some queued block has no state.
DELETE FROM block_degree;
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM main.mem_dirty_blocks
WHERE seq > :block_from AND seq <= :block_mark ORDER BY id;
DELETE FROM gone_due_to;
INSERT INTO gone_due_to (id, strength)
SELECT d.to_id, total(d.strength)
FROM (SELECT DISTINCT from_id, to_id FROM main.mem_dirty_edges WHERE seq > :edge_from) q
CROSS JOIN main.mem_edge_due d ON d.from_id = q.from_id AND d.to_id = q.to_id
WHERE EXISTS (SELECT 1 FROM refresh_ids r WHERE NOT EXISTS (SELECT 1 FROM main.mem_block_state s WHERE s.id = r.id))
  AND NOT EXISTS (SELECT 1 FROM @EDGES e WHERE e.@KEY_A = q.from_id AND e.@KEY_B = q.to_id)
GROUP BY d.to_id;

-- name: refresh_blocks
-- One chunk of blocks: tier, weighted degree, the active hour their
-- recency falls below block_prune_threshold, and what makes an active
-- block unusable. The degree is the full recount's (block_degree, a full
-- refresh), else the one stored (kept by delta: remove_edges,
-- refresh_edges), else, for a block with no state yet, the sum of the
-- strengths stored in the due rows of its edges, which is what the deltas
-- to come start from.
DELETE FROM refresh_block_rows;
INSERT INTO refresh_block_rows (id, tier, lambda, constitutional, degree, archive_at, problem,
                                rank_count, rank_confidence, rank_anchor)
WITH rows AS MATERIALIZED (
    SELECT b.id, b.status, b.last_reinforced_hours, b.reinforcement_count, b.confidence,
           decay_tier((SELECT json_group_array(CAST(t.tag AS TEXT)) FROM @TAGS t WHERE t.block_id = b.id),
                      CAST(b.category AS TEXT)@CATEGORY_TIERS) AS tier,
           EXISTS (SELECT 1 FROM @TAGS t WHERE t.block_id = b.id AND t.tag = 'self/constitutional') AS constitutional,
           coalesce((SELECT strength FROM block_degree d WHERE d.id = b.id),
                    (SELECT degree FROM mem_block_state s WHERE s.id = b.id),
                    @NEW_BLOCK_DEGREE) AS degree,
           CASE WHEN b.status != 'active' THEN NULL
                BLOCK_KEY_PROBLEM
                WHEN b.last_reinforced_hours IS NOT NULL AND typeof(b.last_reinforced_hours) NOT IN ('integer', 'real')
                    THEN 'last_reinforced_hours is ' || typeof(b.last_reinforced_hours)
                WHEN BLOCK_ANCHOR_NOT_FINITE THEN 'last_reinforced_hours is not finite'
                WHEN b.confidence IS NOT NULL AND typeof(b.confidence) NOT IN ('integer', 'real')
                    THEN 'confidence is ' || typeof(b.confidence)
                WHEN BLOCK_CONFIDENCE_NOT_FINITE THEN 'confidence is not finite'
                WHEN b.confidence < 0 OR b.confidence > 1 THEN 'confidence is ' || b.confidence || ' (want 0 to 1)'
                WHEN typeof(b.reinforcement_count) NOT IN ('integer', 'real')
                    THEN 'reinforcement_count is ' || typeof(b.reinforcement_count)
                WHEN b.reinforcement_count < 0 THEN 'reinforcement_count is negative'
                WHEN b.reinforcement_count > MAX_FINITE THEN 'reinforcement_count is not finite'
           END AS problem
    FROM refresh_ids r CROSS JOIN @NODES b ON b.id = r.id
    WHERE r.seq BETWEEN :lo AND :hi),
tiered AS MATERIALIZED (SELECT rows.*, tier_lambda(tier@HALF_LIVES) AS lambda FROM rows)
SELECT id, tier, lambda, constitutional, degree,
       CASE WHEN status = 'active' AND problem IS NULL AND typeof(last_reinforced_hours) IN ('integer', 'real')
            THEN last_reinforced_hours + decay_horizon(1.0, lambda, :block_threshold) END,
       problem,
       -- The ranking's inputs (rankInputs), for a block it ranks.
       CASE WHEN status = 'active' AND problem IS NULL THEN reinforcement_count + constitutional END,
       CASE WHEN status = 'active' AND problem IS NULL THEN coalesce(confidence, 0.5) END,
       CASE WHEN status = 'active' AND problem IS NULL THEN last_reinforced_hours END
FROM tiered;

-- name: refresh_blocks_retier
-- A block whose tier changed changes the decay rate of its edges.
INSERT INTO main.mem_dirty_edges (from_id, to_id)
SELECT e.from_id, e.to_id FROM refresh_ids r
LEFT JOIN refresh_block_rows n ON n.id = r.id LEFT JOIN mem_block_state o ON o.id = r.id
JOIN @EDGES e ON e.@END_A = r.id
WHERE r.seq BETWEEN :lo AND :hi AND n.tier IS NOT o.tier;
INSERT INTO main.mem_dirty_edges (from_id, to_id)
SELECT e.from_id, e.to_id FROM refresh_ids r
LEFT JOIN refresh_block_rows n ON n.id = r.id LEFT JOIN mem_block_state o ON o.id = r.id
JOIN @EDGES e ON e.@END_B = r.id
WHERE r.seq BETWEEN :lo AND :hi AND n.tier IS NOT o.tier;

-- name: refresh_blocks_store
-- A block keeps its rank bound while none of what its score is made of
-- went up (RANK_BOUND_KEPT); one the ranking skips has NOT_RANKED. A full
-- refresh (:queued 0) keeps none: its sweep scores every block.
UPDATE refresh_block_rows SET rank_bound = NOT_RANKED WHERE rank_count IS NULL;
UPDATE refresh_block_rows AS n
SET rank_bound = (SELECT o.rank_bound FROM mem_block_state o WHERE o.id = n.id AND RANK_BOUND_KEPT)
WHERE n.rank_count IS NOT NULL AND :queued;
DELETE FROM mem_block_state WHERE id IN (SELECT id FROM refresh_ids WHERE seq BETWEEN :lo AND :hi);
INSERT OR FAIL INTO mem_block_state (id, tier, lambda, constitutional, degree, archive_at, problem,
                             rank_count, rank_confidence, rank_anchor, rank_bound)
SELECT id, tier, lambda, constitutional, degree, archive_at, problem,
       rank_count, rank_confidence, rank_anchor, rank_bound FROM refresh_block_rows;

-- name: refresh_edges_queued
INSERT OR IGNORE INTO refresh_edges (from_id, to_id)
SELECT from_id, to_id FROM main.mem_dirty_edges WHERE seq > :edge_from AND seq <= :edge_mark ORDER BY from_id, to_id;

-- name: refresh_edges
-- One chunk of queued edges, read through the primary key. First their
-- ends' degrees take the difference between each edge's strength now (0
-- when it is gone or invalid) and the one its due row stored: exact, as
-- strengths are fixed-point. Then when each next needs a decision
-- (EDGE_DUE_ROWS); due_source is each edge's columns, its problem, lambda,
-- its decay rate when its numbers are numbers, and its strength.
-- (An edge's ends are its key in memworker's tables; through a mapping
-- they are columns of their own, and its due row keeps the ends its
-- strength was counted for: the strength is taken back from those and
-- given to the ends it has now.)
-- The numbers are computed into temp tables first, and the main tables
-- written from those: a statement that calls a function could fail
-- partway, and SQLite would copy every page such a statement changes into
-- a temp file first, to put back.
DELETE FROM refresh_degree_deltas;
DELETE FROM refresh_due_rows;
INSERT INTO refresh_degree_deltas (id, delta)
WITH queued AS MATERIALIZED (SELECT from_id, to_id FROM refresh_edges WHERE seq BETWEEN :lo AND :hi),
present AS MATERIALIZED (
    SELECT e.@END_A AS a, e.@END_B AS b, CASE WHEN VALID_EDGE THEN EDGE_STRENGTH ELSE 0 END AS strength
    FROM queued r CROSS JOIN @EDGES e ON e.@KEY_A = r.from_id AND e.@KEY_B = r.to_id),
counted AS MATERIALIZED (
    SELECT d.@END_A AS a, d.@END_B AS b, d.strength
    FROM queued r CROSS JOIN main.mem_edge_due d ON d.from_id = r.from_id AND d.to_id = r.to_id),
change AS (
    SELECT a AS id, strength AS delta FROM present UNION ALL SELECT b, strength FROM present
    UNION ALL SELECT a, -strength FROM counted UNION ALL SELECT b, -strength FROM counted)
SELECT id, sum(delta) AS delta FROM change WHERE delta != 0 GROUP BY id HAVING sum(delta) != 0;
UPDATE OR FAIL main.mem_block_state SET degree = degree + l.delta,
    rank_bound = CASE WHEN l.delta > 0 AND rank_bound > NOT_RANKED THEN NULL ELSE rank_bound END
FROM refresh_degree_deltas AS l
WHERE mem_block_state.id = l.id;
INSERT INTO refresh_due_rows (from_id, to_id, @ENDS_COLSdue_hours, due_wall, problem, strength)
WITH due_source AS (
    SELECT e.*, EDGE_PROBLEM AS problem, CASE WHEN VALID_EDGE THEN EDGE_LAMBDA END AS lambda,
           CASE WHEN VALID_EDGE THEN EDGE_STRENGTH ELSE 0 END AS strength
    FROM refresh_edges r CROSS JOIN @EDGES e
         ON e.@KEY_A = r.from_id AND e.@KEY_B = r.to_id AND r.seq BETWEEN :lo AND :hi
    LEFT JOIN mem_block_state ta ON ta.id = e.@END_A
    LEFT JOIN mem_block_state tb ON tb.id = e.@END_B)
EDGE_DUE_ROWS;
-- Every queued edge's due row goes, and those of the edges still there
-- come back; an edge that is gone leaves no due time behind.
DELETE FROM mem_edge_due WHERE (from_id, to_id) IN (
    SELECT from_id, to_id FROM refresh_edges WHERE seq BETWEEN :lo AND :hi);
INSERT OR FAIL INTO mem_edge_due (from_id, to_id, @ENDS_COLSdue_hours, due_wall, problem, strength)
SELECT from_id, to_id, @ENDS_COLSdue_hours, due_wall, problem, strength FROM refresh_due_rows ORDER BY rowid;
-- The list of edges due soon follows (none while it has no horizon:
-- :soon_hours and :soon_wall are NULL).
DELETE FROM main.mem_edge_soon WHERE (from_id, to_id) IN (
    SELECT from_id, to_id FROM refresh_edges WHERE seq BETWEEN :lo AND :hi);
INSERT OR FAIL INTO main.mem_edge_soon (from_id, to_id, due_hours, due_wall)
SELECT d.from_id, d.to_id, d.due_hours, d.due_wall
FROM refresh_edges r CROSS JOIN main.mem_edge_due d ON d.from_id = r.from_id AND d.to_id = r.to_id
WHERE r.seq BETWEEN :lo AND :hi AND (d.due_hours <= :soon_hours OR d.due_wall <= :soon_wall)
ORDER BY r.from_id, r.to_id;

-- name: refresh_edges_all
-- One chunk (rows :lo to :hi of sweep_edges, in key order) of the due times
-- of every usable edge, as evaluate_edges_all computed them for the plan
-- (each edge read once, its ends' tiers looked up once), written straight
-- into the main table where they differ, in key order: no shadow, no copy.
-- First, the due rows in the chunk's key range whose edge is gone go, and
-- so do those of edges the plan prunes or decays (their removal settles
-- them: it subtracts the strength the plan read when no due row has one, or
-- nothing where the sync already left it out of the degrees; an app's
-- write that saves one queues it, and the apply stores the strength the
-- degrees counted for it).
-- Only an edge that may be among the plan's removals (MAY_BE_REMOVED) is
-- looked up in the plan: a third of a first sweep's edges, not all.
DELETE FROM main.mem_edge_due
WHERE (from_id, to_id) > (SELECT from_id, to_id FROM sweep_edges WHERE rowid = :lo - 1 UNION ALL SELECT '', '' LIMIT 1)
  AND (from_id, to_id) <= (SELECT from_id, to_id FROM sweep_edges WHERE rowid = min(:hi, (SELECT max(rowid) FROM sweep_edges)))
  AND (NOT EXISTS (SELECT 1 FROM @EDGES e WHERE e.@KEY_A = mem_edge_due.from_id AND e.@KEY_B = mem_edge_due.to_id)
       OR EXISTS (SELECT 1 FROM plan_edges p WHERE p.from_id = mem_edge_due.from_id AND p.to_id = mem_edge_due.to_id
                                             AND p.phase IN REMOVAL_PHASES));
INSERT OR REPLACE INTO main.mem_edge_due (from_id, to_id, @ENDS_COLSdue_hours, due_wall, problem, strength)
WITH due_source AS (
    SELECT from_id, to_id, @ENDS_COLSweight, reinforcement_count, relation_type, origin, last_active_hours, last_observed_at,
           pinned, excluded, lambda, strength, NULL AS problem -- every edge evaluated is valid
    FROM sweep_edges s
    WHERE s.rowid BETWEEN :lo AND :hi
      AND NOT CASE WHEN MAY_BE_REMOVED
                   THEN EXISTS (SELECT 1 FROM plan_edges p WHERE p.from_id = s.from_id AND p.to_id = s.to_id
                                                            AND p.phase IN REMOVAL_PHASES)
                   ELSE 0 END)
SELECT n.from_id, n.to_id, @ENDS_Nn.due_hours, n.due_wall, n.problem, n.strength
FROM (EDGE_DUE_ROWS) n LEFT JOIN main.mem_edge_due m ON m.from_id = n.from_id AND m.to_id = n.to_id
WHERE m.from_id IS NULL OR m.due_hours IS NOT n.due_hours OR m.due_wall IS NOT n.due_wall OR m.problem IS NOT n.problem
   OR m.strength IS NOT n.strength@ENDS_MOVED;

-- name: refresh_edges_tail
-- After the chunks of refresh_edges_all: the due rows past the last usable
-- edge's key whose edge is gone go too (all of them when no edge is usable).
DELETE FROM main.mem_edge_due
WHERE (from_id, to_id) > (SELECT from_id, to_id FROM sweep_edges WHERE rowid = (SELECT max(rowid) FROM sweep_edges)
                          UNION ALL SELECT '', '' LIMIT 1)
  AND NOT EXISTS (SELECT 1 FROM @EDGES e WHERE e.@KEY_A = mem_edge_due.from_id AND e.@KEY_B = mem_edge_due.to_id);

-- name: refresh_edges_invalid
-- Every edge whose numbers are not numbers, read in table order: its
-- problem, and no due time (sweeps skip it and never touch it).
INSERT OR REPLACE INTO mem_edge_due (from_id, to_id, due_hours, due_wall, problem)
SELECT e.from_id, e.to_id, NULL, NULL, EDGE_PROBLEM
FROM @EDGES_SCAN WHERE NOT VALID_EDGE
ORDER BY e.from_id, e.to_id;

-- name: refresh_facts_all
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM @FACTS ORDER BY id;

-- name: refresh_facts_queued
INSERT OR IGNORE INTO refresh_ids (id) SELECT id FROM main.mem_dirty_facts
WHERE seq > :fact_from AND seq <= :fact_mark ORDER BY id;

-- name: refresh_facts
-- One chunk of facts: the wall time their score crosses the next lifecycle
-- threshold (0.15 for short facts, 0.05 for long ones); never when immune.
-- (The OFFSET keeps the inner query from being flattened, which would call
-- tideline_horizon once for each use of horizon.)
DELETE FROM mem_fact_due WHERE id IN (SELECT id FROM refresh_ids WHERE seq BETWEEN :lo AND :hi);
INSERT INTO mem_fact_due (id, due_wall, problem)
SELECT id, CASE WHEN horizon IS NULL THEN NULL WHEN horizon = 0 THEN -1e308 ELSE since + horizon * 86400 END, problem
FROM (
    SELECT id, problem, since,
           CASE WHEN problem IS NULL AND status = 'active' AND tier != 'permanent'
                THEN tideline_horizon(importance, decay_rate, access_count,
                                      CASE tier WHEN 'short' THEN :archive_score ELSE :prune_score END, tier) END AS horizon
    FROM (
        SELECT f.*, CASE WHEN f.status NOT IN ('active', 'confirmed') THEN NULL ELSE FACT_PROBLEM END AS problem, FACT_SINCE AS since
        FROM refresh_ids r CROSS JOIN @FACTS f ON f.id = r.id
        WHERE r.seq BETWEEN :lo AND :hi)
    LIMIT -1 OFFSET 0);

-- name: forget_gone
-- After a full refresh in place (a replica): the derived rows of blocks and
-- facts that are gone go too (an edge's go with refresh_edges_tail).
DELETE FROM main.mem_block_state WHERE id NOT IN (SELECT id FROM @NODES);
DELETE FROM main.mem_fact_due WHERE id NOT IN (SELECT id FROM @FACTS);
