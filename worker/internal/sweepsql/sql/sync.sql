-- After a full refresh: the derived rows that differ from the main tables'
-- are copied over a chunk at a time.

-- name: sync_collect
-- A full refresh computes the derived state into temp tables; the rows
-- that differ from the main tables' are then copied over a chunk at a
-- time. Of the edges, the shadow holds only the invalid ones: the usable
-- edges' due times go straight into the main table (refresh_edges_all).
DELETE FROM sync_rows;
-- A block's rank bound is the one the sweep's ranking scored, in the
-- scales' :epoch (rank.go; none for a block it reinforces, whose refresh
-- would forget it), else the shadow's, NULL or NOT_RANKED.
-- A block's degree is stored without the strength of the edges the plan
-- prunes or decays (plan_lost; fixed point: exact), so their removal
-- touches no block state: the apply counts them at 0 (:counted). A
-- cut-off apply is finished from the saved plan, or the full sweep that
-- its cleared fingerprint forces recounts every degree.
INSERT INTO sync_rows (kind, id, present, tier, lambda, constitutional, degree, archive_at, problem,
                       rank_count, rank_confidence, rank_anchor, rank_bound)
WITH t AS (
    SELECT t.*, coalesce((SELECT r.bound - 2 * :epoch FROM plan_rank r
                          WHERE r.id = t.id AND r.id NOT IN (SELECT id FROM plan_reinforce)), t.rank_bound) AS bound,
           t.degree - coalesce((SELECT l.removed FROM rank_lost l WHERE l.id = t.id), 0) AS kept
    FROM temp.mem_block_state t)
SELECT 'block', t.id, 1, t.tier, t.lambda, t.constitutional, t.kept, t.archive_at, t.problem,
       t.rank_count, t.rank_confidence, t.rank_anchor, t.bound
FROM t LEFT JOIN main.mem_block_state m ON m.id = t.id
WHERE m.id IS NULL OR m.tier IS NOT t.tier OR m.lambda IS NOT t.lambda OR m.constitutional IS NOT t.constitutional
   OR m.degree IS NOT t.kept OR m.archive_at IS NOT t.archive_at OR m.problem IS NOT t.problem
   OR m.rank_count IS NOT t.rank_count OR m.rank_confidence IS NOT t.rank_confidence OR m.rank_anchor IS NOT t.rank_anchor
   OR m.rank_bound IS NOT t.bound
ORDER BY t.id;
INSERT INTO sync_rows (kind, id, present)
SELECT 'block', m.id, 0 FROM main.mem_block_state m
WHERE NOT EXISTS (SELECT 1 FROM temp.mem_block_state t WHERE t.id = m.id) ORDER BY m.id;
INSERT INTO sync_rows (kind, id, to_id, present, due_hours, due_wall, problem)
SELECT 'edge', t.from_id, t.to_id, 1, t.due_hours, t.due_wall, t.problem
FROM temp.mem_edge_due t LEFT JOIN main.mem_edge_due m ON m.from_id = t.from_id AND m.to_id = t.to_id
WHERE m.from_id IS NULL OR m.due_hours IS NOT t.due_hours OR m.due_wall IS NOT t.due_wall OR m.problem IS NOT t.problem
ORDER BY t.from_id, t.to_id;
INSERT INTO sync_rows (kind, id, present, due_wall, problem)
SELECT 'fact', t.id, 1, t.due_wall, t.problem
FROM temp.mem_fact_due t LEFT JOIN main.mem_fact_due m ON m.id = t.id
WHERE m.id IS NULL OR m.due_wall IS NOT t.due_wall OR m.problem IS NOT t.problem
ORDER BY t.id;
INSERT INTO sync_rows (kind, id, present)
SELECT 'fact', m.id, 0 FROM main.mem_fact_due m
WHERE NOT EXISTS (SELECT 1 FROM temp.mem_fact_due t WHERE t.id = m.id) ORDER BY m.id;

-- name: sync_apply
INSERT OR REPLACE INTO main.mem_block_state (id, tier, lambda, constitutional, degree, archive_at, problem,
                                             rank_count, rank_confidence, rank_anchor, rank_bound)
SELECT id, tier, lambda, constitutional, degree, archive_at, problem,
       rank_count, rank_confidence, rank_anchor, rank_bound FROM sync_rows
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
