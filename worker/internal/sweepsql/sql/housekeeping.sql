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
