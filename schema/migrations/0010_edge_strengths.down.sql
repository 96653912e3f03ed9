-- Version 9 recounted the degrees of queued blocks from their edges, and a
-- changed edge queued both its ends.
DROP TRIGGER mem_edges_queue_insert;
DROP TRIGGER mem_edges_queue_update;
DROP TRIGGER mem_edges_queue_delete;
CREATE TRIGGER mem_edges_queue_insert AFTER INSERT ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (NEW.from_id, NEW.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (NEW.from_id), (NEW.to_id);
END;
CREATE TRIGGER mem_edges_queue_update AFTER UPDATE OF from_id, to_id, weight, reinforcement_count, relation_type,
    origin, last_active_hours, last_observed_at, pinned ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id), (NEW.from_id, NEW.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.from_id), (OLD.to_id), (NEW.from_id), (NEW.to_id);
END;
CREATE TRIGGER mem_edges_queue_delete AFTER DELETE ON mem_edges
WHEN NOT EXISTS (SELECT 1 FROM mem_config WHERE key = 'sweep_removing')
BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.from_id), (OLD.to_id);
END;
ALTER TABLE mem_edge_due DROP COLUMN strength;
