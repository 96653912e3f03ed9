-- Incremental sweeps. The worker keeps, per row, what its decay depends on
-- (a block's tier and weighted degree, the active hour or wall time when an
-- edge, block or fact next needs a decision) with indexes, so a sweep reads
-- only rows that changed or reached that time. Triggers only queue changed
-- rows for recomputation: plain SQL, no memdecay function.

CREATE TABLE mem_dirty_blocks (seq INTEGER PRIMARY KEY, id TEXT NOT NULL);
CREATE TABLE mem_dirty_edges (seq INTEGER PRIMARY KEY, from_id TEXT NOT NULL, to_id TEXT NOT NULL);
CREATE TABLE mem_dirty_facts (seq INTEGER PRIMARY KEY, id TEXT NOT NULL);

-- Worker-owned, recomputed from the rows above; NULL times mean never.
CREATE TABLE mem_block_state (
    id             TEXT PRIMARY KEY,
    tier           TEXT NOT NULL,
    lambda         REAL NOT NULL,
    constitutional INTEGER NOT NULL,
    degree         REAL NOT NULL,
    archive_at     REAL,            -- active hour its recency falls below block_prune_threshold
    problem        TEXT             -- why an active block is skipped (not a number where one is needed)
) WITHOUT ROWID;
CREATE INDEX mem_block_state_archive ON mem_block_state (archive_at) WHERE archive_at IS NOT NULL;
CREATE INDEX mem_block_state_degree ON mem_block_state (degree);
CREATE INDEX mem_block_state_constitutional ON mem_block_state (id) WHERE constitutional;
CREATE INDEX mem_block_state_problem ON mem_block_state (id) WHERE problem IS NOT NULL;

CREATE TABLE mem_edge_due (
    from_id   TEXT NOT NULL,
    to_id     TEXT NOT NULL,
    due_hours REAL,                 -- active hour of the next decision (static prune, decay)
    due_wall  REAL,                 -- unix time of the next decision (wall-clock policies)
    problem   TEXT,
    PRIMARY KEY (from_id, to_id)
) WITHOUT ROWID;
CREATE INDEX mem_edge_due_hours ON mem_edge_due (due_hours) WHERE due_hours IS NOT NULL;
CREATE INDEX mem_edge_due_wall ON mem_edge_due (due_wall) WHERE due_wall IS NOT NULL;
CREATE INDEX mem_edge_due_problem ON mem_edge_due (from_id, to_id) WHERE problem IS NOT NULL;

CREATE TABLE mem_fact_due (
    id       TEXT PRIMARY KEY,
    due_wall REAL,                  -- unix time its score crosses the next lifecycle threshold
    problem  TEXT
) WITHOUT ROWID;
CREATE INDEX mem_fact_due_wall ON mem_fact_due (due_wall) WHERE due_wall IS NOT NULL;
CREATE INDEX mem_fact_due_problem ON mem_fact_due (id) WHERE problem IS NOT NULL;

-- Edges: their own decision, and both ends' weighted degree.
CREATE TRIGGER mem_edges_queue_insert AFTER INSERT ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (NEW.from_id, NEW.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (NEW.from_id), (NEW.to_id);
END;
CREATE TRIGGER mem_edges_queue_update AFTER UPDATE OF from_id, to_id, weight, reinforcement_count, relation_type,
    origin, last_active_hours, last_observed_at, pinned ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id), (NEW.from_id, NEW.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.from_id), (OLD.to_id), (NEW.from_id), (NEW.to_id);
END;
CREATE TRIGGER mem_edges_queue_delete AFTER DELETE ON mem_edges BEGIN
    INSERT INTO mem_dirty_edges (from_id, to_id) VALUES (OLD.from_id, OLD.to_id);
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.from_id), (OLD.to_id);
END;

-- Blocks: tier, recency and ranking inputs.
CREATE TRIGGER mem_blocks_queue_insert AFTER INSERT ON mem_blocks BEGIN
    INSERT INTO mem_dirty_blocks (id) VALUES (NEW.id);
END;
CREATE TRIGGER mem_blocks_queue_update AFTER UPDATE OF id, category, status, confidence, reinforcement_count,
    last_reinforced_hours ON mem_blocks BEGIN
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.id), (NEW.id);
END;
CREATE TRIGGER mem_blocks_queue_delete AFTER DELETE ON mem_blocks BEGIN
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.id);
END;
CREATE TRIGGER mem_block_tags_queue_insert AFTER INSERT ON mem_block_tags BEGIN
    INSERT INTO mem_dirty_blocks (id) VALUES (NEW.block_id);
END;
CREATE TRIGGER mem_block_tags_queue_update AFTER UPDATE ON mem_block_tags BEGIN
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.block_id), (NEW.block_id);
END;
CREATE TRIGGER mem_block_tags_queue_delete AFTER DELETE ON mem_block_tags BEGIN
    INSERT INTO mem_dirty_blocks (id) VALUES (OLD.block_id);
END;

-- Facts.
CREATE TRIGGER mem_facts_queue_insert AFTER INSERT ON mem_facts BEGIN
    INSERT INTO mem_dirty_facts (id) VALUES (NEW.id);
END;
CREATE TRIGGER mem_facts_queue_update AFTER UPDATE OF id, segment, tier, importance, decay_rate, access_count,
    last_accessed_at, status, created_at ON mem_facts BEGIN
    INSERT INTO mem_dirty_facts (id) VALUES (OLD.id), (NEW.id);
END;
CREATE TRIGGER mem_facts_queue_delete AFTER DELETE ON mem_facts BEGIN
    INSERT INTO mem_dirty_facts (id) VALUES (OLD.id);
END;
