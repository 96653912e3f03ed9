-- Each edge's due row keeps the fixed-point strength its ends' degrees
-- count for it (0 for an invalid edge): a refresh of a queued edge adds the
-- difference between its strength now and the one stored to both ends'
-- degrees, and a removal subtracts the stored one, so no sweep recounts a
-- block's degree from its edges. The derived state's fingerprint names the
-- schema version, so the first sweep after this step recomputes every row.
ALTER TABLE mem_edge_due ADD COLUMN strength REAL NOT NULL DEFAULT 0;

-- A changed edge no longer queues its ends: their degrees take its delta
-- when the edge itself is refreshed, and nothing else of a block's derived
-- state depends on its edges.
DROP TRIGGER mem_edges_queue_insert;
DROP TRIGGER mem_edges_queue_update;
DROP TRIGGER mem_edges_queue_delete;
CREATE TRIGGER mem_edges_queue_insert AFTER INSERT ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (NEW.from_id, NEW.to_id);
END;
CREATE TRIGGER mem_edges_queue_update AFTER UPDATE OF from_id, to_id, weight, reinforcement_count, relation_type,
    origin, last_active_hours, last_observed_at, pinned ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id), (NEW.from_id, NEW.to_id);
END;
-- A sweep's own removals are settled in their transaction (their ends'
-- degrees, their due rows), so they are not queued: the sweep marks them
-- with a mem_config row it deletes again before its commit, which no other
-- connection ever sees.
CREATE TRIGGER mem_edges_queue_delete AFTER DELETE ON mem_edges
WHEN NOT EXISTS (SELECT 1 FROM mem_config WHERE key = 'sweep_removing')
BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id);
END;
