-- The typed archive (worker/archive.go): a removal's event is a row of
-- the archive of the table the row left, holding the row's own columns
-- unchanged, the event's, and the numbers that decided it. Every other
-- event, and every event written before this step, is a row of
-- mem_event_log (the table mem_events was). mem_events is a view over the
-- log and the archives, with the columns it always had; an archive row's
-- detail is built on read, the JSON its event held. One counter numbers
-- them all: mem_event_ids.next is the id of the next event. An archive
-- made for a mapping is listed in mem_archives with memworker's own, and
-- the view is made again over all of them (the statements of this step
-- after the log's are those archive.go writes for memworker's tables).
-- The rename leaves an app's views that read mem_events as they are
-- (legacy_alter_table): they read the view. A trigger of the app's on
-- mem_events is refused before this step (schema.go).
PRAGMA legacy_alter_table = ON;
ALTER TABLE mem_events RENAME TO mem_event_log;
PRAGMA legacy_alter_table = OFF;
CREATE TABLE mem_event_ids (next INTEGER NOT NULL);
INSERT INTO mem_event_ids (next) SELECT coalesce(max(id), 0) + 1 FROM mem_event_log;
CREATE TRIGGER mem_event_log_ids AFTER INSERT ON mem_event_log BEGIN
UPDATE mem_event_ids SET next = max(next, NEW.id + 1);
END;
CREATE TABLE mem_archives (
    name   TEXT PRIMARY KEY,
    kind   TEXT NOT NULL CHECK (kind IN ('edge', 'block', 'fact')),
    source TEXT NOT NULL
);
CREATE TABLE "mem_archive_mem_edges" (
    mem_event_id INTEGER PRIMARY KEY,
    mem_sweep_id INTEGER,
    mem_at INTEGER NOT NULL,
    mem_clock_hours REAL,
    mem_subject TEXT NOT NULL,
    mem_action TEXT NOT NULL,
    mem_reason TEXT,
    mem_effective_weight,
    mem_lambda,
    mem_elapsed,
    mem_archived_block,
    "from_id",
    "to_id",
    "weight",
    "reinforcement_count",
    "relation_type",
    "origin",
    "last_active_hours",
    "last_observed_at",
    "pinned",
    "note",
    "created_at",
    "excluded"
);
CREATE INDEX "mem_archive_mem_edges_subject" ON "mem_archive_mem_edges" (mem_subject);
CREATE INDEX "mem_archive_mem_edges_sweep" ON "mem_archive_mem_edges" (mem_sweep_id);
INSERT INTO mem_archives (name, kind, source) VALUES ('mem_archive_mem_edges', 'edge', 'mem_edges');
CREATE TABLE "mem_archive_mem_blocks" (
    mem_event_id INTEGER PRIMARY KEY,
    mem_sweep_id INTEGER,
    mem_at INTEGER NOT NULL,
    mem_clock_hours REAL,
    mem_subject TEXT NOT NULL,
    mem_action TEXT NOT NULL,
    mem_reason TEXT,
    mem_tags,
    mem_tier,
    mem_recency,
    "id",
    "category",
    "status",
    "archive_reason",
    "confidence",
    "reinforcement_count",
    "last_reinforced_hours",
    "content",
    "created_at"
);
CREATE INDEX "mem_archive_mem_blocks_subject" ON "mem_archive_mem_blocks" (mem_subject);
CREATE INDEX "mem_archive_mem_blocks_sweep" ON "mem_archive_mem_blocks" (mem_sweep_id);
INSERT INTO mem_archives (name, kind, source) VALUES ('mem_archive_mem_blocks', 'block', 'mem_blocks');
CREATE TABLE "mem_archive_mem_facts" (
    mem_event_id INTEGER PRIMARY KEY,
    mem_sweep_id INTEGER,
    mem_at INTEGER NOT NULL,
    mem_clock_hours REAL,
    mem_subject TEXT NOT NULL,
    mem_action TEXT NOT NULL,
    mem_reason TEXT,
    mem_score,
    mem_days_since_access,
    "id",
    "segment",
    "tier",
    "importance",
    "decay_rate",
    "access_count",
    "last_accessed_at",
    "status",
    "content",
    "created_at"
);
CREATE INDEX "mem_archive_mem_facts_subject" ON "mem_archive_mem_facts" (mem_subject);
CREATE INDEX "mem_archive_mem_facts_sweep" ON "mem_archive_mem_facts" (mem_sweep_id);
INSERT INTO mem_archives (name, kind, source) VALUES ('mem_archive_mem_facts', 'fact', 'mem_facts');
CREATE VIEW mem_events (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail) AS
SELECT id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail FROM mem_event_log
UNION ALL
SELECT r.mem_event_id, r.mem_sweep_id, r.mem_at, r.mem_clock_hours, 'edge', r.mem_subject, r.mem_action, r.mem_reason,
       json_patch('{}', json_object('edge', json_object('from_id', CASE typeof(r."from_id") WHEN 'blob' THEN json_object('blob', hex(r."from_id"))
	    WHEN 'real' THEN CASE WHEN abs(r."from_id") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."from_id" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."from_id" END
	    ELSE r."from_id" END, 'to_id', CASE typeof(r."to_id") WHEN 'blob' THEN json_object('blob', hex(r."to_id"))
	    WHEN 'real' THEN CASE WHEN abs(r."to_id") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."to_id" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."to_id" END
	    ELSE r."to_id" END, 'weight', CASE typeof(r."weight") WHEN 'blob' THEN json_object('blob', hex(r."weight"))
	    WHEN 'real' THEN CASE WHEN abs(r."weight") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."weight" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."weight" END
	    ELSE r."weight" END, 'reinforcement_count', CASE typeof(r."reinforcement_count") WHEN 'blob' THEN json_object('blob', hex(r."reinforcement_count"))
	    WHEN 'real' THEN CASE WHEN abs(r."reinforcement_count") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."reinforcement_count" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."reinforcement_count" END
	    ELSE r."reinforcement_count" END, 'relation_type', CASE typeof(r."relation_type") WHEN 'blob' THEN json_object('blob', hex(r."relation_type"))
	    WHEN 'real' THEN CASE WHEN abs(r."relation_type") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."relation_type" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."relation_type" END
	    ELSE r."relation_type" END, 'origin', CASE typeof(r."origin") WHEN 'blob' THEN json_object('blob', hex(r."origin"))
	    WHEN 'real' THEN CASE WHEN abs(r."origin") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."origin" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."origin" END
	    ELSE r."origin" END, 'last_active_hours', CASE typeof(r."last_active_hours") WHEN 'blob' THEN json_object('blob', hex(r."last_active_hours"))
	    WHEN 'real' THEN CASE WHEN abs(r."last_active_hours") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."last_active_hours" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."last_active_hours" END
	    ELSE r."last_active_hours" END, 'last_observed_at', CASE typeof(r."last_observed_at") WHEN 'blob' THEN json_object('blob', hex(r."last_observed_at"))
	    WHEN 'real' THEN CASE WHEN abs(r."last_observed_at") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."last_observed_at" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."last_observed_at" END
	    ELSE r."last_observed_at" END, 'pinned', CASE typeof(r."pinned") WHEN 'blob' THEN json_object('blob', hex(r."pinned"))
	    WHEN 'real' THEN CASE WHEN abs(r."pinned") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."pinned" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."pinned" END
	    ELSE r."pinned" END, 'note', CASE typeof(r."note") WHEN 'blob' THEN json_object('blob', hex(r."note"))
	    WHEN 'real' THEN CASE WHEN abs(r."note") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."note" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."note" END
	    ELSE r."note" END, 'created_at', CASE typeof(r."created_at") WHEN 'blob' THEN json_object('blob', hex(r."created_at"))
	    WHEN 'real' THEN CASE WHEN abs(r."created_at") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."created_at" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."created_at" END
	    ELSE r."created_at" END, 'excluded', CASE typeof(r."excluded") WHEN 'blob' THEN json_object('blob', hex(r."excluded"))
	    WHEN 'real' THEN CASE WHEN abs(r."excluded") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."excluded" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."excluded" END
	    ELSE r."excluded" END), 'effective_weight', r.mem_effective_weight, 'lambda', r.mem_lambda, CASE WHEN substr(r.mem_reason, 1, 7) = 'policy:' THEN 'elapsed' ELSE 'elapsed_hours' END, r.mem_elapsed, 'archived_block', r.mem_archived_block))
FROM "mem_archive_mem_edges" r
UNION ALL
SELECT r.mem_event_id, r.mem_sweep_id, r.mem_at, r.mem_clock_hours, 'block', r.mem_subject, r.mem_action, r.mem_reason,
       json_patch('{}', json_object('block', json_object('id', CASE typeof(r."id") WHEN 'blob' THEN json_object('blob', hex(r."id"))
	    WHEN 'real' THEN CASE WHEN abs(r."id") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."id" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."id" END
	    ELSE r."id" END, 'category', CASE typeof(r."category") WHEN 'blob' THEN json_object('blob', hex(r."category"))
	    WHEN 'real' THEN CASE WHEN abs(r."category") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."category" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."category" END
	    ELSE r."category" END, 'status', CASE typeof(r."status") WHEN 'blob' THEN json_object('blob', hex(r."status"))
	    WHEN 'real' THEN CASE WHEN abs(r."status") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."status" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."status" END
	    ELSE r."status" END, 'archive_reason', CASE typeof(r."archive_reason") WHEN 'blob' THEN json_object('blob', hex(r."archive_reason"))
	    WHEN 'real' THEN CASE WHEN abs(r."archive_reason") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."archive_reason" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."archive_reason" END
	    ELSE r."archive_reason" END, 'confidence', CASE typeof(r."confidence") WHEN 'blob' THEN json_object('blob', hex(r."confidence"))
	    WHEN 'real' THEN CASE WHEN abs(r."confidence") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."confidence" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."confidence" END
	    ELSE r."confidence" END, 'reinforcement_count', CASE typeof(r."reinforcement_count") WHEN 'blob' THEN json_object('blob', hex(r."reinforcement_count"))
	    WHEN 'real' THEN CASE WHEN abs(r."reinforcement_count") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."reinforcement_count" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."reinforcement_count" END
	    ELSE r."reinforcement_count" END, 'last_reinforced_hours', CASE typeof(r."last_reinforced_hours") WHEN 'blob' THEN json_object('blob', hex(r."last_reinforced_hours"))
	    WHEN 'real' THEN CASE WHEN abs(r."last_reinforced_hours") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."last_reinforced_hours" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."last_reinforced_hours" END
	    ELSE r."last_reinforced_hours" END, 'content', CASE typeof(r."content") WHEN 'blob' THEN json_object('blob', hex(r."content"))
	    WHEN 'real' THEN CASE WHEN abs(r."content") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."content" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."content" END
	    ELSE r."content" END, 'created_at', CASE typeof(r."created_at") WHEN 'blob' THEN json_object('blob', hex(r."created_at"))
	    WHEN 'real' THEN CASE WHEN abs(r."created_at") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."created_at" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."created_at" END
	    ELSE r."created_at" END), 'tags', json(r.mem_tags), 'tier', r.mem_tier, 'recency', r.mem_recency))
FROM "mem_archive_mem_blocks" r
UNION ALL
SELECT r.mem_event_id, r.mem_sweep_id, r.mem_at, r.mem_clock_hours, 'fact', r.mem_subject, r.mem_action, r.mem_reason,
       json_patch('{}', json_object('fact', json_object('id', CASE typeof(r."id") WHEN 'blob' THEN json_object('blob', hex(r."id"))
	    WHEN 'real' THEN CASE WHEN abs(r."id") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."id" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."id" END
	    ELSE r."id" END, 'segment', CASE typeof(r."segment") WHEN 'blob' THEN json_object('blob', hex(r."segment"))
	    WHEN 'real' THEN CASE WHEN abs(r."segment") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."segment" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."segment" END
	    ELSE r."segment" END, 'tier', CASE typeof(r."tier") WHEN 'blob' THEN json_object('blob', hex(r."tier"))
	    WHEN 'real' THEN CASE WHEN abs(r."tier") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."tier" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."tier" END
	    ELSE r."tier" END, 'importance', CASE typeof(r."importance") WHEN 'blob' THEN json_object('blob', hex(r."importance"))
	    WHEN 'real' THEN CASE WHEN abs(r."importance") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."importance" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."importance" END
	    ELSE r."importance" END, 'decay_rate', CASE typeof(r."decay_rate") WHEN 'blob' THEN json_object('blob', hex(r."decay_rate"))
	    WHEN 'real' THEN CASE WHEN abs(r."decay_rate") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."decay_rate" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."decay_rate" END
	    ELSE r."decay_rate" END, 'access_count', CASE typeof(r."access_count") WHEN 'blob' THEN json_object('blob', hex(r."access_count"))
	    WHEN 'real' THEN CASE WHEN abs(r."access_count") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."access_count" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."access_count" END
	    ELSE r."access_count" END, 'last_accessed_at', CASE typeof(r."last_accessed_at") WHEN 'blob' THEN json_object('blob', hex(r."last_accessed_at"))
	    WHEN 'real' THEN CASE WHEN abs(r."last_accessed_at") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."last_accessed_at" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."last_accessed_at" END
	    ELSE r."last_accessed_at" END, 'status', CASE typeof(r."status") WHEN 'blob' THEN json_object('blob', hex(r."status"))
	    WHEN 'real' THEN CASE WHEN abs(r."status") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."status" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."status" END
	    ELSE r."status" END, 'content', CASE typeof(r."content") WHEN 'blob' THEN json_object('blob', hex(r."content"))
	    WHEN 'real' THEN CASE WHEN abs(r."content") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."content" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."content" END
	    ELSE r."content" END, 'created_at', CASE typeof(r."created_at") WHEN 'blob' THEN json_object('blob', hex(r."created_at"))
	    WHEN 'real' THEN CASE WHEN abs(r."created_at") > 1.7976931348623157e308
	        THEN json_object('real', CASE WHEN r."created_at" > 0 THEN '9e999' ELSE '-9e999' END) ELSE r."created_at" END
	    ELSE r."created_at" END), 'score', r.mem_score, 'days_since_access', r.mem_days_since_access))
FROM "mem_archive_mem_facts" r;
CREATE TRIGGER mem_events_insert INSTEAD OF INSERT ON mem_events BEGIN
INSERT INTO mem_event_log (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
VALUES ((SELECT next FROM mem_event_ids), NEW.sweep_id, NEW.at, NEW.clock_hours, NEW.subject_kind, NEW.subject_id,
        NEW.action, NEW.reason, NEW.detail);
END;
