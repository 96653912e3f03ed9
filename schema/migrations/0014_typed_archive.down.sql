-- Back to one table of events: every event the view shows (the archives'
-- with their detail as built on read) becomes a row of mem_events again,
-- under its own id. The archives of a mapping's tables go after this step
-- (schema.go), once their rows are here.
CREATE TABLE mem_events_kept (
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
INSERT INTO mem_events_kept (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail FROM mem_events ORDER BY id;
DROP VIEW mem_events;
DROP TABLE mem_archive_mem_edges;
DROP TABLE mem_archive_mem_blocks;
DROP TABLE mem_archive_mem_facts;
DROP TABLE mem_archives;
DROP TABLE mem_event_ids;
DROP TABLE mem_event_log;
PRAGMA legacy_alter_table = ON;
ALTER TABLE mem_events_kept RENAME TO mem_events;
PRAGMA legacy_alter_table = OFF;
CREATE INDEX mem_events_subject ON mem_events (subject_kind, subject_id);
CREATE INDEX mem_events_sweep ON mem_events (sweep_id);
CREATE INDEX mem_events_at ON mem_events (at);
