-- memdecay memory schema. Plain SQL only: no memdecay function appears in a
-- table, index, default or trigger, so an app without the extension can write.

CREATE TABLE mem_config (
    key   TEXT PRIMARY KEY,
    value NOT NULL
);

INSERT INTO mem_config (key, value) VALUES
    ('active_hours', 0),
    ('edge_prune_threshold', 0.10),
    ('edge_decay_threshold', 'auto'),      -- 'auto' = same as edge_prune_threshold
    ('established_edge_threshold', 10),
    ('block_prune_threshold', 0.05),
    ('curate_interval_hours', 40),
    ('reinforce_top_n', 5),
    ('max_decay_fraction', 1.0),
    ('block_archival', 'auto'),
    ('last_curate_at', ''),                -- '' = never
    ('edges_decayed_total', 0),
    ('event_retention_days', 0);           -- 0 = keep events forever

CREATE TABLE mem_blocks (
    id                    TEXT PRIMARY KEY,
    category              TEXT,
    status                TEXT NOT NULL DEFAULT 'active'
                          CHECK (status IN ('inbox', 'active', 'archived')),
    archive_reason        TEXT,
    confidence            REAL DEFAULT 0.5,
    reinforcement_count   INTEGER NOT NULL DEFAULT 0,
    last_reinforced_hours REAL,
    content               TEXT,
    created_at            INTEGER NOT NULL DEFAULT (CAST(strftime('%s', 'now') AS INTEGER))
);

CREATE INDEX mem_blocks_status ON mem_blocks (status);

CREATE TABLE mem_block_tags (
    block_id TEXT NOT NULL REFERENCES mem_blocks (id),
    tag      TEXT NOT NULL,
    PRIMARY KEY (block_id, tag)
);

CREATE INDEX mem_block_tags_tag ON mem_block_tags (tag);

CREATE TABLE mem_edges (
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
    PRIMARY KEY (from_id, to_id),
    CHECK (from_id < to_id)
);

CREATE INDEX mem_edges_to ON mem_edges (to_id);
CREATE INDEX mem_edges_relation ON mem_edges (relation_type);

CREATE TABLE mem_facts (
    id               TEXT PRIMARY KEY,
    segment          TEXT NOT NULL,
    tier             TEXT CHECK (tier IN ('permanent', 'long', 'short')),
    importance       REAL,
    decay_rate       REAL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at INTEGER,
    status           TEXT NOT NULL DEFAULT 'active'
                     CHECK (status IN ('active', 'confirmed', 'archived')),
    content          TEXT,
    created_at       INTEGER NOT NULL DEFAULT (CAST(strftime('%s', 'now') AS INTEGER))
);

CREATE INDEX mem_facts_status ON mem_facts (status);

-- Segment defaults as plain data, so the fill-in trigger needs no extension.
CREATE TABLE mem_segments (
    segment    TEXT PRIMARY KEY,
    tier       TEXT NOT NULL,
    importance REAL NOT NULL,
    decay_rate REAL NOT NULL
);

INSERT INTO mem_segments (segment, tier, importance, decay_rate) VALUES
    ('identity', 'permanent', 0.85, 0.01),
    ('correction', 'long', 0.80, 0.015),
    ('relationship', 'long', 0.75, 0.02),
    ('preference', 'long', 0.70, 0.02),
    ('project', 'long', 0.65, 0.025),
    ('knowledge', 'long', 0.60, 0.03),
    ('context', 'short', 0.40, 0.08);

CREATE TRIGGER mem_facts_segment_defaults AFTER INSERT ON mem_facts
WHEN NEW.tier IS NULL OR NEW.importance IS NULL OR NEW.decay_rate IS NULL
BEGIN
    UPDATE mem_facts SET
        tier       = coalesce(NEW.tier, (SELECT tier FROM mem_segments WHERE segment = NEW.segment)),
        importance = coalesce(NEW.importance, (SELECT importance FROM mem_segments WHERE segment = NEW.segment)),
        decay_rate = coalesce(NEW.decay_rate, (SELECT decay_rate FROM mem_segments WHERE segment = NEW.segment))
    WHERE id = NEW.id;
END;

CREATE TABLE mem_edge_policies (
    relation_type TEXT PRIMARY KEY,
    model         TEXT NOT NULL,
    params        TEXT NOT NULL DEFAULT '{}',
    clock         TEXT NOT NULL DEFAULT 'active_hours' CHECK (clock IN ('active_hours', 'wall')),
    threshold     REAL,
    action        TEXT NOT NULL DEFAULT 'delete' CHECK (action IN ('delete', 'exclude')),
    orphans       TEXT NOT NULL DEFAULT 'keep' CHECK (orphans IN ('keep', 'delete'))
);

CREATE TABLE mem_events (
    id           INTEGER PRIMARY KEY,
    sweep_id     INTEGER,
    at           INTEGER NOT NULL,
    clock_hours  REAL,
    subject_kind TEXT NOT NULL CHECK (subject_kind IN ('edge', 'block', 'fact')),
    subject_id   TEXT NOT NULL,
    action       TEXT NOT NULL,
    reason       TEXT,
    detail       TEXT
);

CREATE INDEX mem_events_subject ON mem_events (subject_kind, subject_id);
CREATE INDEX mem_events_sweep ON mem_events (sweep_id);
CREATE INDEX mem_events_at ON mem_events (at);

CREATE TABLE mem_sweeps (
    id          INTEGER PRIMARY KEY,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    clock_hours REAL,
    dry_run     INTEGER NOT NULL DEFAULT 0,
    status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    lease_until INTEGER,
    owner       TEXT,
    result      TEXT
);

-- Views need the memdecay functions loaded to be queried.
CREATE VIEW mem_block_tiers AS
SELECT b.id,
       b.status,
       decay_tier((SELECT json_group_array(CAST(t.tag AS TEXT)) FROM mem_block_tags t WHERE t.block_id = b.id),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b;

CREATE VIEW mem_edges_effective AS
SELECT e.from_id,
       e.to_id,
       e.relation_type,
       e.origin,
       e.weight,
       e.reinforcement_count,
       e.pinned,
       ta.tier AS tier_from,
       tb.tier AS tier_to,
       lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count,
                   (SELECT value FROM mem_config WHERE key = 'established_edge_threshold')) AS lambda,
       max(0, (SELECT value FROM mem_config WHERE key = 'active_hours') - e.last_active_hours) AS elapsed_hours,
       CASE WHEN e.pinned OR e.origin = 'agent' OR e.last_active_hours IS NULL THEN e.weight
            ELSE effective_weight(e.weight,
                                  lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count,
                                              (SELECT value FROM mem_config WHERE key = 'established_edge_threshold')),
                                  (SELECT value FROM mem_config WHERE key = 'active_hours') - e.last_active_hours)
       END AS effective_weight,
       CASE WHEN e.pinned OR e.origin = 'agent' OR e.last_active_hours IS NULL THEN NULL
            ELSE max(0, e.last_active_hours
                        + decay_horizon(e.weight,
                                        lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count,
                                                    (SELECT value FROM mem_config WHERE key = 'established_edge_threshold')),
                                        (SELECT CASE WHEN d.value = 'auto' THEN p.value ELSE d.value END
                                         FROM mem_config d, mem_config p
                                         WHERE d.key = 'edge_decay_threshold' AND p.key = 'edge_prune_threshold'))
                        - (SELECT value FROM mem_config WHERE key = 'active_hours'))
       END AS hours_left
FROM mem_edges e
LEFT JOIN mem_block_tiers ta ON ta.id = e.from_id
LEFT JOIN mem_block_tiers tb ON tb.id = e.to_id
WHERE typeof(e.weight) IN ('integer', 'real');
