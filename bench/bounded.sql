-- The edge rules of bench/plain.sql with what every memworker sweep also
-- guarantees (docs/sweep.md), and nothing else: each removed edge gets an
-- event with a JSON snapshot of its row, committed with its delete, and
-- the removals run in transactions of at most 5,000 rows. No incremental
-- state, no re-check of what changed since the plan, no resuming: the
-- floor under memworker's sweep for these rules.
--
-- bench/run makes the script: the part of bench/plain.sql above its rules
-- (settings and each block's λ), then the plan below, then the chunk
-- below repeated with :lo and :hi set by the shell's .parameter, once per
-- 5,000 edges in the file (the chunks past the plan's end change nothing).

-- name: plan
-- Which edges go, and why: their reason, λ_edge, elapsed hours and
-- effective weight, as memworker's events record them.
-- In key order (mem_edges is keyed by (from_id, to_id), no rowid), so each
-- chunk deletes neighbouring rows.
CREATE TEMP TABLE doomed (seq INTEGER PRIMARY KEY, from_id TEXT, to_id TEXT, reason TEXT,
    lambda REAL, elapsed REAL, effective REAL);
INSERT INTO doomed (from_id, to_id, reason, lambda, elapsed, effective)
SELECT from_id, to_id, CASE WHEN static THEN 'static' ELSE 'temporal' END, lambda, elapsed, weight * exp(-lambda * elapsed)
FROM (
    SELECT from_id, to_id, weight,
           weight < (SELECT prune FROM cfg) AND reinforcement_count = 0 AS static,
           CASE WHEN origin IS NOT 'agent' AND last_active_hours IS NOT NULL THEN
               min(coalesce((SELECT lambda FROM tier WHERE id = from_id), 0.010),
                   coalesce((SELECT lambda FROM tier WHERE id = to_id), 0.010)) * 0.5
               * CASE WHEN reinforcement_count >= (SELECT established FROM cfg) THEN 0.5 ELSE 1.0 END
           END AS lambda,
           max(0, (SELECT now FROM cfg) - last_active_hours) AS elapsed
    FROM mem_edges WHERE NOT pinned)
WHERE static OR weight * exp(-lambda * elapsed) < (SELECT decay FROM cfg)
ORDER BY from_id, to_id;
COMMIT;

-- name: chunk
BEGIN IMMEDIATE;
INSERT INTO mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT 0, CAST(strftime('%s', 'now') AS INTEGER), (SELECT now FROM cfg), 'edge', json_array(e.from_id, e.to_id),
       CASE d.reason WHEN 'static' THEN 'prune' ELSE 'decay' END, d.reason,
       json_object('edge', json_object('from_id', e.from_id, 'to_id', e.to_id, 'weight', e.weight,
                       'reinforcement_count', e.reinforcement_count, 'relation_type', e.relation_type, 'origin', e.origin,
                       'last_active_hours', e.last_active_hours, 'last_observed_at', e.last_observed_at, 'pinned', e.pinned,
                       'note', e.note, 'created_at', e.created_at, 'excluded', e.excluded),
                   'effective_weight', d.effective, 'lambda', d.lambda, 'elapsed_hours', d.elapsed)
FROM doomed d JOIN mem_edges e ON e.from_id = d.from_id AND e.to_id = d.to_id
WHERE d.seq BETWEEN :lo AND :hi;
DELETE FROM mem_edges WHERE (from_id, to_id) IN (SELECT from_id, to_id FROM doomed WHERE seq BETWEEN :lo AND :hi);
COMMIT;

-- name: report
SELECT 'edges_pruned', count(*) FROM doomed WHERE reason = 'static';
SELECT 'edges_decayed', count(*) FROM doomed WHERE reason = 'temporal';
SELECT 'total_edges_after', count(*) FROM mem_edges;
