-- mem_edges keyed by (from_id, to_id) with no rowid: each row is stored in
-- its primary key's B-tree, in key order, instead of a rowid table plus a
-- separate key index. A sweep removes edges in key order, so a bounded
-- transaction rewrites a few neighbouring pages instead of pages all over
-- two B-trees (bench/README.md has the measurements). Every column,
-- constraint, index and trigger stays as it was; memworker re-creates an
-- app's own indexes and triggers on mem_edges after this step (schema.go).
--
-- The views name mem_edges: with legacy_alter_table the rename leaves them
-- as they are (they would otherwise be checked while no mem_edges exists),
-- and they read the new table under the old name.
PRAGMA legacy_alter_table = ON;
CREATE TABLE mem_edges_rebuilt (
    from_id             TEXT NOT NULL REFERENCES mem_blocks (id),
    to_id               TEXT NOT NULL REFERENCES mem_blocks (id),
    weight              REAL,
    reinforcement_count INTEGER DEFAULT 0,
    relation_type       TEXT NOT NULL DEFAULT 'similar',
    origin              TEXT NOT NULL DEFAULT 'similarity'
                        CHECK (origin IN ('similarity', 'outcome', 'agent', 'observed')),
    last_active_hours   REAL,
    last_observed_at    INTEGER,
    pinned              INTEGER NOT NULL DEFAULT 0,
    note                TEXT,
    created_at          INTEGER NOT NULL DEFAULT (CAST(strftime('%s', 'now') AS INTEGER)),
    excluded            INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (from_id, to_id),
    CHECK (from_id < to_id)
) WITHOUT ROWID;
INSERT INTO mem_edges_rebuilt (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours, last_observed_at, pinned, note, created_at, excluded)
SELECT from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours, last_observed_at, pinned, note, created_at, excluded FROM mem_edges ORDER BY from_id, to_id;
DROP TABLE mem_edges;
ALTER TABLE mem_edges_rebuilt RENAME TO mem_edges;
PRAGMA legacy_alter_table = OFF;

CREATE INDEX mem_edges_to ON mem_edges (to_id);
CREATE INDEX mem_edges_relation ON mem_edges (relation_type);

-- The queue triggers went with the old table.
CREATE TRIGGER mem_edges_queue_insert AFTER INSERT ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (NEW.from_id, NEW.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (NEW.from_id), (NEW.to_id);
END;
CREATE TRIGGER mem_edges_queue_update AFTER UPDATE OF from_id, to_id, weight, reinforcement_count, relation_type,
    origin, last_active_hours, last_observed_at, pinned ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id), (NEW.from_id, NEW.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.from_id), (OLD.to_id), (NEW.from_id), (NEW.to_id);
END;
-- A sweep's own removals are settled in their transaction (their ends'
-- degrees, their due times), so they are not queued: the sweep marks them
-- with a mem_config row it deletes again before its commit, which no other
-- connection ever sees.
CREATE TRIGGER mem_edges_queue_delete AFTER DELETE ON mem_edges
WHEN NOT EXISTS (SELECT 1 FROM mem_config WHERE key = 'sweep_removing')
BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.from_id), (OLD.to_id);
END;
