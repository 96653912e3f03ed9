-- After the sweep: its queue entries and saved plans cleared, old events
-- expired.

-- name: clear_queues
-- The rows this sweep refreshed leave the queues, a bounded batch at a time.
-- :keep 1 keeps the entry at the mark (see clearQueues).
DELETE FROM main.mem_dirty_blocks WHERE seq IN (SELECT seq FROM main.mem_dirty_blocks WHERE seq <= :block_mark - :keep LIMIT :limit);
DELETE FROM main.mem_dirty_edges WHERE seq IN (SELECT seq FROM main.mem_dirty_edges WHERE seq <= :edge_mark - :keep LIMIT :limit);
DELETE FROM main.mem_dirty_facts WHERE seq IN (SELECT seq FROM main.mem_dirty_facts WHERE seq <= :fact_mark - :keep LIMIT :limit);

-- name: clear_plan
DELETE FROM main.mem_sweep_plans WHERE (sweep_id, step, seq) IN (
    SELECT sweep_id, step, seq FROM main.mem_sweep_plans WHERE sweep_id <= :sweep LIMIT :limit);

-- name: expire_events
DELETE FROM main.mem_event_log WHERE id IN (
    SELECT id FROM main.mem_event_log WHERE at < :cutoff ORDER BY id LIMIT :limit);

-- name: expire_sweeps
-- The record of a sweep (about 1 KB each) expires with the events of its
-- time (EXPIRED_SWEEP).
DELETE FROM main.mem_sweeps WHERE id IN (
    SELECT id FROM main.mem_sweeps WHERE EXPIRED_SWEEP ORDER BY id LIMIT :limit);

-- name: count_expired
-- What expire_events and expire_sweeps would remove (a dry run's report).
SELECT (SELECT count(*) FROM main.mem_event_log WHERE at < :cutoff), (SELECT count(*) FROM main.mem_sweeps WHERE EXPIRED_SWEEP);

-- name: empty_QUEUE
-- One statement list per table of emptiedWhole (statements.go), QUEUE its
-- name and QUEUE_KEY the column its mark counts in. Emptied whole, which
-- SQLite does by freeing its pages rather than row by row, keeping the rows
-- queued after :mark.
DROP TABLE IF EXISTS temp.keep_rows;
CREATE TEMP TABLE keep_rows AS SELECT * FROM main.QUEUE WHERE QUEUE_KEY > :mark;
DELETE FROM main.QUEUE;
INSERT INTO main.QUEUE SELECT * FROM temp.keep_rows;
DROP TABLE temp.keep_rows;

-- name: edges_counted_keep
-- The edges this sweep left (its report's total_edges_after), exact at a
-- snapshot where the edge queue went up to :count_mark, kept for the
-- sweeps after it (edges_kept); :edges_of names what was counted.
INSERT INTO main.mem_config (key, value)
VALUES ('edges_counted', json_object('sweep', :sweep, 'edges', :edges, 'mark', :count_mark, 'of', :edges_of))
ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- name: edges_counted_check
-- Before the sweep clears the edge queue: an edge queued since the count
-- (an app's write, or an edge the sweep queued itself) makes the count
-- kept old, and it goes, while the queue still tells.
DELETE FROM main.mem_config WHERE key = 'edges_counted'
  AND (NOT json_valid(value) OR EXISTS (SELECT 1 FROM main.mem_dirty_edges WHERE seq > json_extract(value, '$.mark')));

-- name: edges_kept
-- The edges the last sweep left, while no edge write since can have gone
-- untold: that sweep is the newest before this one and done, it kept its
-- count (edges_counted_keep), no edge queued after it took it was cleared
-- (edges_counted_check), and the edges are of the same tables, settings
-- and schema (:edges_of). -1 otherwise. Every write of an edge since, but
-- a sweep's own, is in the edge queue (edges_queued_delta).
SELECT coalesce((
    SELECT json_extract(c.value, '$.edges') FROM main.mem_config c
    WHERE c.key = 'edges_counted' AND json_valid(c.value)
      AND json_extract(c.value, '$.of') = :edges_of
      AND json_extract(c.value, '$.sweep') = (SELECT max(id) FROM main.mem_sweeps WHERE id < :sweep)
      AND (SELECT status FROM main.mem_sweeps WHERE id = json_extract(c.value, '$.sweep')) = 'done'
      AND typeof(json_extract(c.value, '$.edges')) = 'integer'), -1);

-- name: edges_queued_delta
-- Before the refresh: the edge queue's end, and how many more edges the
-- queued keys hold now than when the last sweep counted, at one snapshot.
-- Until a refresh rewrites it, an edge has a due row exactly when it was
-- there at that count (the sweep that counted settled every edge it saw),
-- so each queued key adds whether it is an edge now less whether it has a
-- due row.
SELECT (SELECT coalesce(max(seq), 0) FROM main.mem_dirty_edges),
       (SELECT coalesce(sum(EXISTS (SELECT 1 FROM @EDGES e WHERE e.@KEY_A = q.from_id AND e.@KEY_B = q.to_id))
                        - sum(EXISTS (SELECT 1 FROM main.mem_edge_due d WHERE d.from_id = q.from_id AND d.to_id = q.to_id)), 0)
        FROM (SELECT DISTINCT from_id, to_id FROM main.mem_dirty_edges) q);
