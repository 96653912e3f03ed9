-- The apply: the plan carried out in short transactions, one chunk of seq
-- numbers at a time, re-checking that each row is unchanged since it was
-- planned; every change with its event, in the same transaction.
-- A removal's event is a row of the archive of the table the row left
-- (archive.go): the row's own columns as they were, the event's, and the
-- numbers that decided it; its id from the one counter of events
-- (NEXT_EVENT_ID), which moves past the ids each insert took.
-- An archive has no index of subjects: the events an app's trigger undid
-- are found among this chunk's rows at the archive's end (CHUNK_EVENTS_*,
-- archive.go). (The unary + keeps SQLite off the index of the sweep's
-- every event.)

-- name: pick_blocks
-- One chunk of archivals: the blocks still as planned.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_blocks p CROSS JOIN @NODES b ON b.id = p.id
WHERE p.seq BETWEEN :lo AND :hi AND b.status = 'active' AND b.last_reinforced_hours IS p.last_reinforced_hours@AND_UNPINNED;

-- name: held_plan_blocks
-- The blocks an app's foreign key holds (refused.go: one of their edges
-- is referenced) stay, named as refused.
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'block', p.id, 'archive refused: ' || h.why, 1 FROM apply_held h CROSS JOIN plan_blocks p ON p.seq = h.seq;
DELETE FROM apply_rows WHERE seq IN (SELECT seq FROM apply_held);

-- name: apply_blocks
-- Their events (with tags), then they change status (which queues them
-- for a refresh of their state); a block whose status the app's trigger
-- kept as it was (RAISE(IGNORE)) stays, named, with no event. Then their
-- edges' events; the edges go in remove_edges, the tags in archive_blocks.
INSERT INTO @ARCHIVE_NODES (BLOCK_ARCHIVE_COLS, @BLOCK_ROW_COLS)
SELECT NEXT_EVENT_ID + row_number() OVER () - 1, :sweep, :wall, :now, b.id, 'archive', 'decayed', BLOCK_TAGS, p.tier, p.recency, @BLOCK_ROW
FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq JOIN @NODES b ON b.id = p.id;
BUMP_IDS_NODES;
UPDATE @NODES SET status = 'archived', archive_reason = 'decayed'
WHERE id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq);
DELETE FROM apply_held;
INSERT INTO apply_held (seq)
SELECT a.seq FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq CROSS JOIN @NODES b ON b.id = p.id
WHERE b.status IS NOT 'archived';
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'block', p.id, 'archive kept by app: its status stayed', 1 FROM apply_held h CROSS JOIN plan_blocks p ON p.seq = h.seq;
DELETE FROM @ARCHIVE_NODES WHERE CHUNK_EVENTS_NODES
  AND +mem_sweep_id = :sweep AND mem_subject IN (SELECT p.id FROM apply_held h CROSS JOIN plan_blocks p ON p.seq = h.seq);
DELETE FROM apply_rows WHERE seq IN (SELECT seq FROM apply_held);
DELETE FROM apply_block_ids;
INSERT INTO apply_block_ids (id) SELECT p.id FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq;
-- The app's rows that go with them (a mapping's dependents) are logged,
-- each a row of the log; they go in archive_blocks.
INSERT INTO main.mem_event_log (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT NEXT_EVENT_ID + row_number() OVER () - 1, :sweep, :wall, :now, 'block', d.block_id, 'remove_row', 'dependent:' || d.dep_table,
       json_object('table', d.dep_table, 'row', json(d.row))
FROM (SELECT DISTINCT block_id, dep_table, row FROM @DEPENDENTS WHERE block_id IN (SELECT id FROM apply_block_ids)) AS d;
-- An edge both of whose ends are archived is named after the end first in
-- the plan (whose chunk takes it, however the transactions are cut).
INSERT INTO @ARCHIVE_EDGES (EDGE_ARCHIVE_COLS, @EDGE_ROW_COLS)
SELECT NEXT_EVENT_ID + row_number() OVER () - 1, :sweep, :wall, :now, @SUBJECT_E, 'delete', 'block_archived',
       NULL, NULL, NULL,
       CASE WHEN e.@END_A IN (SELECT id FROM apply_block_ids)
                 AND coalesce((SELECT seq FROM plan_blocks WHERE id = e.@END_A)
                     <= (SELECT seq FROM plan_blocks WHERE id = e.@END_B AND id IN (SELECT id FROM apply_block_ids)), 1)
            THEN e.@END_A ELSE e.@END_B END, @EDGE_ROW
FROM valid_edges e
WHERE e.@END_A IN (SELECT id FROM apply_block_ids) OR e.@END_B IN (SELECT id FROM apply_block_ids);
BUMP_IDS_EDGES;
DELETE FROM apply_edge_keys;
INSERT INTO apply_edge_keys (from_id, to_id, @ENDS_COLSstrength)
SELECT e.from_id, e.to_id, @ENDS_EEDGE_STRENGTH FROM valid_edges e
WHERE e.@END_A IN (SELECT id FROM apply_block_ids) OR e.@END_B IN (SELECT id FROM apply_block_ids);

-- name: archive_blocks
-- After remove_edges: the archived blocks lose their tags and dependent rows.
DELETE FROM @TAGS WHERE block_id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq);
@DELETE_DEPENDENTS;

-- name: pick_edges
-- One chunk of static prunes, temporal decays and policy removals, each
-- edge only if it is unchanged since it was planned (an app's refresh in
-- between wins).
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_edges p CROSS JOIN @EDGES e ON e.@KEY_A = p.from_id AND e.@KEY_B = p.to_id
WHERE p.seq BETWEEN :lo AND :hi AND p.phase IN REMOVAL_PHASES
  AND e.weight IS p.weight AND e.reinforcement_count IS p.reinforcement_count
  AND e.last_active_hours IS p.last_active_hours AND e.last_observed_at IS p.last_observed_at AND NOT e.pinned@ENDS_UNMOVED;

-- name: held_plan_edges
-- The edges an app's foreign key holds (refused.go) stay, named as
-- refused, and queued (their due row as below for an edge that stays).
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'edge', @SUBJECT, CASE phase WHEN 'static' THEN 'prune' ELSE 'decay' END || ' refused: ' || h.why, 1
FROM apply_held h CROSS JOIN plan_edges p ON p.seq = h.seq;
INSERT INTO main.mem_dirty_edges (from_id, to_id) SELECT p.from_id, p.to_id FROM apply_held h CROSS JOIN plan_edges p ON p.seq = h.seq;
DELETE FROM apply_rows WHERE seq IN (SELECT seq FROM apply_held);

-- name: pick_edges_planned
-- pick_edges where no planned edge can have changed since the plan read it
-- (sweep.standingPlan): the chunk's removals, as planned.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_edges p WHERE p.seq BETWEEN :lo AND :hi AND p.phase IN REMOVAL_PHASES;

-- name: apply_edges
-- Their events, then the blocks this chunk left orphaned.
-- (An event's detail names the elapsed time 'elapsed' under a relation
-- policy, 'elapsed_hours' else: archiveDetail.) Each row of apply_rows
-- has its edge (pick_edges found exactly one, in this transaction), so
-- their events take consecutive ids in plan order.
DELETE FROM apply_order;
INSERT INTO apply_order (seq) SELECT seq FROM apply_rows ORDER BY seq;
INSERT INTO @ARCHIVE_EDGES (EDGE_ARCHIVE_COLS, @EDGE_ROW_COLS)
SELECT NEXT_EVENT_ID + o.n - 1, :sweep, :wall, :now, @SUBJECT_E,
       CASE p.phase WHEN 'static' THEN 'prune' ELSE 'decay' END,
       CASE p.phase WHEN 'policy' THEN 'policy:' || p.relation_type ELSE p.phase END,
       p.effective, p.lambda, p.elapsed, NULL, @EDGE_ROW
FROM apply_order o CROSS JOIN plan_edges p ON p.seq = o.seq
CROSS JOIN @EDGES e ON e.@KEY_A = p.from_id AND e.@KEY_B = p.to_id;
BUMP_IDS_EDGES;
-- The strength the stored degrees count for each planned edge is the
-- plan's, or 0 (:counted = 0) when a full sweep's sync already left the
-- plan's removals out of them (sync_collect).
DELETE FROM apply_edge_keys;
INSERT INTO apply_edge_keys (from_id, to_id, @ENDS_COLSstrength)
SELECT e.from_id, e.to_id, @ENDS_EEDGE_STRENGTH * :counted FROM apply_rows a CROSS JOIN plan_edges e ON e.seq = a.seq;
-- An edge an app changed since it was planned stays. When a full refresh
-- left it no due row, it gets one storing the strength the degrees counted
-- for it; the app's write queued it for the next refresh.
INSERT OR IGNORE INTO main.mem_edge_due (from_id, to_id, @ENDS_COLSstrength)
SELECT e.from_id, e.to_id, @ENDS_EEDGE_STRENGTH * :counted FROM plan_edges e
WHERE e.seq BETWEEN :lo AND :hi AND e.phase IN REMOVAL_PHASES AND e.seq NOT IN (SELECT seq FROM apply_rows);

-- name: remove_edges
-- The edges of apply_edge_keys go, settled in the same transaction: their
-- ends' degrees lose the fixed-point strength their due row stored (the
-- strength the plan read when a full refresh left none; nothing is logged
-- for a strength of 0), logged in mem_degree_log for fold_degrees, and
-- their due rows go (and their entries in the list of edges due soon), so
-- no sweep recounts them; the sweep_removing row keeps the delete trigger
-- from queueing them (it never outlives the statement list, let alone the
-- transaction). An edge the app's trigger kept (RAISE(IGNORE)) stays,
-- named, without its event: it keeps its due row (or gets one storing the
-- strength the degrees count for it) and is queued.
INSERT INTO main.mem_config (key, value) VALUES ('sweep_removing', 1);
@DELETE_EDGES;
DELETE FROM apply_kept_keys;
INSERT INTO apply_kept_keys (from_id, to_id)
SELECT k.from_id, k.to_id FROM apply_edge_keys k
WHERE @KEPT_EDGES_POSSIBLE AND EXISTS (SELECT 1 FROM @EDGES e WHERE e.@KEY_A = k.from_id AND e.@KEY_B = k.to_id);
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'edge', @SUBJECT, 'removal kept by app: its delete was ignored', :step = 'plan_edges' FROM apply_kept_keys;
-- (The chunk's edge events, of apply_blocks or apply_edges: as many at
-- most as apply_edge_keys.)
DELETE FROM @ARCHIVE_EDGES WHERE CHUNK_EVENTS_EDGES
  AND +mem_sweep_id = :sweep AND mem_subject IN (SELECT @SUBJECT FROM apply_kept_keys);
INSERT OR IGNORE INTO main.mem_edge_due (from_id, to_id, @ENDS_COLSstrength)
SELECT k.from_id, k.to_id, @ENDS_Kk.strength FROM apply_edge_keys k WHERE (k.from_id, k.to_id) IN (SELECT from_id, to_id FROM apply_kept_keys);
INSERT INTO main.mem_dirty_edges (from_id, to_id) SELECT from_id, to_id FROM apply_kept_keys;
DELETE FROM apply_edge_keys WHERE (from_id, to_id) IN (SELECT from_id, to_id FROM apply_kept_keys);
-- A full sweep's prunes and decays are settled already (PLANNED_SETTLED):
-- their due rows were never written, so no list entry either, and the
-- degrees count none of their strength; nothing is looked up for them.
WITH lost AS MATERIALIZED (
    SELECT k.from_id, k.to_id, @ENDS_Kcoalesce(d.strength, k.strength) AS strength
    FROM apply_edge_keys k LEFT JOIN main.mem_edge_due d ON d.from_id = k.from_id AND d.to_id = k.to_id
    WHERE coalesce(d.strength, k.strength) != 0 AND NOT PLANNED_SETTLED)
INSERT INTO main.mem_degree_log (id, strength) SELECT @END_A, strength FROM lost UNION ALL SELECT @END_B, strength FROM lost;
DELETE FROM main.mem_edge_due WHERE (from_id, to_id) IN (SELECT from_id, to_id FROM apply_edge_keys) AND NOT PLANNED_SETTLED;
DELETE FROM main.mem_edge_soon WHERE (from_id, to_id) IN (SELECT from_id, to_id FROM apply_edge_keys) AND NOT PLANNED_SETTLED;
DELETE FROM main.mem_config WHERE key = 'sweep_removing';

-- name: quiet_triggers
-- The triggers remove_edges would skip if it ran with the connection's
-- triggers off: every trigger on the tables it writes but memworker's own
-- queue triggers on the edges (which would not fire: sweep_removing). SQLite
-- keeps a trigger's table name in the case the app wrote it in.
SELECT count(*) FROM main.sqlite_master WHERE type = 'trigger'
  AND tbl_name COLLATE NOCASE IN (@QUIET_EDGE_TABLE, 'mem_edge_due', 'mem_edge_soon', 'mem_degree_log', 'mem_config')
  AND name COLLATE NOCASE NOT IN (@QUIET_EDGE_TRIGGERS);

-- name: fold_degrees
-- The strengths the removals logged (remove_edges) leave the stored
-- degrees, each block state's leaf written once for all of a sweep's
-- transactions: after the apply, and first thing in a sweep, for one cut
-- off before it folded its own.
UPDATE OR FAIL main.mem_block_state SET degree = degree - l.strength
FROM (SELECT id, sum(strength) AS strength FROM main.mem_degree_log GROUP BY id) AS l
WHERE mem_block_state.id = l.id;
DELETE FROM main.mem_degree_log;

-- name: orphan_blocks
-- After remove_edges: the active ends of this chunk's removals that are
-- ends of a policy-deleted edge (orphans = 'delete') of the plan, and that
-- this chunk left with no edge at all, are archived: whichever chunk takes
-- a block's last edge, as plan_orphans foresees (and however a sweep's
-- transactions happen to be cut). A plan with no such deletion looks at
-- no end (ORPHANS_PLANNED: one look, in a partial index).
DELETE FROM apply_block_ids;
INSERT INTO apply_block_ids (id)
SELECT b.id FROM (SELECT p.@END_A AS id FROM apply_rows a CROSS JOIN plan_edges p ON p.seq = a.seq WHERE ORPHANS_PLANNED
                  UNION SELECT p.@END_B FROM apply_rows a CROSS JOIN plan_edges p ON p.seq = a.seq WHERE ORPHANS_PLANNED) AS o
CROSS JOIN @NODES b ON b.id = o.id
WHERE (EXISTS (SELECT 1 FROM plan_edges q WHERE q.@END_A = o.id AND q.phase = 'policy' AND q.orphans = 'delete')
       OR EXISTS (SELECT 1 FROM plan_edges q WHERE q.@END_B = o.id AND q.phase = 'policy' AND q.orphans = 'delete'))
  AND b.status = 'active'@AND_UNPINNED
  AND NOT EXISTS (SELECT 1 FROM @EDGES e WHERE e.@END_A = b.id)
  AND NOT EXISTS (SELECT 1 FROM @EDGES e WHERE e.@END_B = b.id);
INSERT INTO @ARCHIVE_NODES (BLOCK_ARCHIVE_COLS, @BLOCK_ROW_COLS)
SELECT NEXT_EVENT_ID + row_number() OVER () - 1, :sweep, :wall, :now, b.id, 'archive', 'orphaned', BLOCK_TAGS, NULL, NULL, @BLOCK_ROW
FROM apply_block_ids o JOIN @NODES b ON b.id = o.id;
BUMP_IDS_NODES;
UPDATE @NODES SET status = 'archived', archive_reason = 'orphaned' WHERE id IN (SELECT id FROM apply_block_ids);
-- An orphan whose status the app's trigger kept stays, named, with no event.
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'block', o.id, 'archive kept by app: its status stayed', 0 FROM apply_block_ids o CROSS JOIN @NODES b ON b.id = o.id
WHERE b.status IS NOT 'archived';
DELETE FROM @ARCHIVE_NODES WHERE CHUNK_EVENTS_ORPHANS
  AND +mem_sweep_id = :sweep AND mem_reason = 'orphaned' AND mem_subject IN (SELECT o.id FROM apply_block_ids o CROSS JOIN @NODES b ON b.id = o.id WHERE b.status IS NOT 'archived');
DELETE FROM @TAGS WHERE block_id IN (SELECT o.id FROM apply_block_ids o CROSS JOIN @NODES b ON b.id = o.id WHERE b.status = 'archived');
INSERT INTO main.mem_event_log (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT NEXT_EVENT_ID + row_number() OVER () - 1, :sweep, :wall, :now, 'block', d.block_id, 'remove_row', 'dependent:' || d.dep_table,
       json_object('table', d.dep_table, 'row', json(d.row))
FROM (SELECT DISTINCT block_id, dep_table, row FROM @DEPENDENTS WHERE block_id IN (SELECT o.id FROM apply_block_ids o CROSS JOIN @NODES b ON b.id = o.id WHERE b.status = 'archived')) AS d;
@DELETE_DEPENDENTS;

-- name: apply_flags
-- One chunk of soft exclusions and readmissions under 'exclude' policies.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_flags p CROSS JOIN @EDGES e ON e.@KEY_A = p.from_id AND e.@KEY_B = p.to_id
WHERE p.seq BETWEEN :lo AND :hi AND e.weight IS p.weight AND e.last_active_hours IS p.last_active_hours
  AND e.last_observed_at IS p.last_observed_at AND (e.excluded != 0) != p.excluded_to AND NOT e.pinned;
-- Not removals: their events are rows of the log.
INSERT INTO main.mem_event_log (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT NEXT_EVENT_ID + row_number() OVER () - 1, :sweep, :wall, :now, 'edge', @SUBJECT_E,
       CASE WHEN p.excluded_to THEN 'exclude' ELSE 'readmit' END,
       CASE WHEN p.excluded_to THEN 'below_minimum' ELSE 'reobserved' END || ':' || p.relation_type,
       json_patch('{}', json_object('edge', EDGE_SNAPSHOT, 'effective_weight', p.effective, 'threshold', p.threshold, 'elapsed', p.elapsed))
FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq
JOIN @EDGES e ON e.@KEY_A = p.from_id AND e.@KEY_B = p.to_id;
-- Their due time changes with the flag: queue them for the next refresh.
INSERT INTO main.mem_dirty_edges (from_id, to_id)
SELECT p.from_id, p.to_id FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq;
UPDATE @EDGES SET excluded = p.excluded_to
FROM (SELECT p.from_id, p.to_id, p.excluded_to FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq) AS p
WHERE @EDGES_NAME.@KEY_A = p.from_id AND @EDGES_NAME.@KEY_B = p.to_id;
-- An edge whose flag the app's trigger kept as it was (RAISE(IGNORE))
-- is named, and its event goes.
DELETE FROM apply_held;
INSERT INTO apply_held (seq)
SELECT a.seq FROM apply_rows a CROSS JOIN plan_flags p ON p.seq = a.seq CROSS JOIN @EDGES e ON e.@KEY_A = p.from_id AND e.@KEY_B = p.to_id
WHERE (e.excluded != 0) != p.excluded_to;
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'edge', @SUBJECT, CASE WHEN excluded_to THEN 'exclude' ELSE 'readmit' END || ' kept by app: its flag stayed', 1
FROM apply_held h CROSS JOIN plan_flags p ON p.seq = h.seq;
DELETE FROM main.mem_event_log WHERE +sweep_id = :sweep AND subject_kind = 'edge' AND action IN ('exclude', 'readmit')
  AND subject_id IN (SELECT @SUBJECT FROM apply_held h CROSS JOIN plan_flags p ON p.seq = h.seq);

-- name: pick_facts
-- One chunk of fact archivals and prunes, each fact only if it is
-- unchanged since it was planned.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq)
SELECT p.seq FROM plan_facts p CROSS JOIN @FACTS f ON f.id = p.id
WHERE p.seq BETWEEN :lo AND :hi AND p.action IN ('archive', 'prune') AND f.status = 'active'
  AND f.importance IS p.importance AND f.access_count IS p.access_count AND f.last_accessed_at IS p.last_accessed_at;

-- name: apply_facts
-- Their events, then the changes; a pruned fact lives on as its row in
-- the archive.
INSERT INTO @ARCHIVE_FACTS (FACT_ARCHIVE_COLS, @FACT_ROW_COLS)
SELECT NEXT_EVENT_ID + row_number() OVER () - 1, :sweep, :wall, :now, f.id, p.action, 'faded', p.score, p.days, @FACT_ROW
FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq JOIN @FACTS f ON f.id = p.id;
BUMP_IDS_FACTS;
DELETE FROM @FACTS WHERE id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq WHERE p.action = 'prune');
UPDATE @FACTS SET status = 'archived'
WHERE id IN (SELECT p.id FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq WHERE p.action = 'archive');
-- A fact the app's trigger kept as it was (RAISE(IGNORE)) stays, named,
-- with no event.
DELETE FROM apply_held;
INSERT INTO apply_held (seq)
SELECT a.seq FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq CROSS JOIN @FACTS f ON f.id = p.id
WHERE p.action = 'prune' OR f.status IS NOT 'archived';
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'fact', p.id, p.action || ' kept by app: ' || CASE p.action WHEN 'prune' THEN 'its delete was ignored' ELSE 'its status stayed' END, 1
FROM apply_held h CROSS JOIN plan_facts p ON p.seq = h.seq;
DELETE FROM @ARCHIVE_FACTS WHERE CHUNK_EVENTS_FACTS
  AND +mem_sweep_id = :sweep AND mem_subject IN (SELECT p.id FROM apply_held h CROSS JOIN plan_facts p ON p.seq = h.seq);

-- name: held_plan_facts
-- The facts an app's foreign key holds (refused.go) stay, named as refused.
INSERT INTO sweep_invalid (kind, id, problem, planned)
SELECT 'fact', p.id, p.action || ' refused: ' || h.why, 1 FROM apply_held h CROSS JOIN plan_facts p ON p.seq = h.seq;
DELETE FROM apply_rows WHERE seq IN (SELECT seq FROM apply_held);

-- name: dry_pick_plan_blocks
-- A dry run finds the rows the app's foreign keys hold in its whole plan
-- at once (refused.go: planHolds), then takes them out of it as the
-- sweep will, named alike.
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq) SELECT seq FROM plan_blocks;

-- name: dry_held_plan_blocks
-- Held blocks keep their edges, but those another archived block takes.
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'block', p.id, 'archive refused: ' || h.why FROM apply_held h CROSS JOIN plan_blocks p ON p.seq = h.seq;
DELETE FROM plan_blocks WHERE seq IN (SELECT seq FROM apply_held);
DELETE FROM plan_edges WHERE phase = 'block_archived'
  AND @END_A NOT IN (SELECT id FROM plan_blocks) AND @END_B NOT IN (SELECT id FROM plan_blocks);

-- name: dry_pick_plan_edges
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq) SELECT seq FROM plan_edges WHERE phase IN REMOVAL_PHASES;

-- name: dry_held_plan_edges
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'edge', @SUBJECT, CASE phase WHEN 'static' THEN 'prune' ELSE 'decay' END || ' refused: ' || h.why
FROM apply_held h CROSS JOIN plan_edges p ON p.seq = h.seq;
DELETE FROM plan_edges WHERE seq IN (SELECT seq FROM apply_held);

-- name: dry_pick_plan_facts
DELETE FROM apply_rows;
INSERT INTO apply_rows (seq) SELECT seq FROM plan_facts WHERE action IN ('archive', 'prune');

-- name: dry_held_plan_facts
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'fact', p.id, p.action || ' refused: ' || h.why FROM apply_held h CROSS JOIN plan_facts p ON p.seq = h.seq;
DELETE FROM plan_facts WHERE seq IN (SELECT seq FROM apply_held);

-- name: refused_plan_blocks
-- A plan row an app's trigger or constraint refused (refused.go), named as
-- an invalid row: what was refused and the database's message, :reason.
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'block', id, 'archive refused: ' || :reason FROM plan_blocks WHERE seq = :seq;

-- name: refused_plan_edges
-- A refused edge stays due: when a full refresh left it no due row, it
-- gets one storing the strength the degrees counted for it (as in
-- apply_edges), and it is queued, so this sweep's settle gives it its due
-- time again and the next sweep tries it again.
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'edge', @SUBJECT, CASE phase WHEN 'static' THEN 'prune' ELSE 'decay' END || ' refused: ' || :reason
FROM plan_edges WHERE seq = :seq;
INSERT OR IGNORE INTO main.mem_edge_due (from_id, to_id, @ENDS_COLSstrength)
SELECT e.from_id, e.to_id, @ENDS_EEDGE_STRENGTH * :counted FROM plan_edges e WHERE e.seq = :seq;
INSERT INTO main.mem_dirty_edges (from_id, to_id) SELECT from_id, to_id FROM plan_edges WHERE seq = :seq;

-- name: refused_plan_flags
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'edge', @SUBJECT, CASE WHEN excluded_to THEN 'exclude' ELSE 'readmit' END || ' refused: ' || :reason
FROM plan_flags WHERE seq = :seq;

-- name: refused_plan_facts
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'fact', id, action || ' refused: ' || :reason FROM plan_facts WHERE seq = :seq;

-- name: apply_reinforce
-- The reinforcements of plan_reinforce's rows :lo to :hi (by rowid: a
-- block an app's rule refuses is isolated as a refused plan row is). A
-- block whose update an app's trigger ignored (RAISE(IGNORE)) kept its
-- count: it is named, and finish.go takes it off the reinforced.
DELETE FROM apply_reinforce_before;
INSERT INTO apply_reinforce_before (id, count, last)
SELECT n.id, n.reinforcement_count, n.last_reinforced_hours FROM @NODES n
WHERE n.id IN (SELECT id FROM plan_reinforce WHERE rowid BETWEEN :lo AND :hi) AND +n.status = 'active';
-- The sweep_reinforcing row tells a mapping's change capture that these
-- writes of last_used are the sweep's, not the app's reads (it never
-- outlives the statement list).
INSERT OR REPLACE INTO main.mem_config (key, value) VALUES ('sweep_reinforcing', 1);
-- OR FAIL: a refusal rolls back the savepoint or the whole transaction
-- (refused.go), so SQLite need not copy the pages it changes aside first.
UPDATE OR FAIL @NODES
SET reinforcement_count = reinforcement_count
      + (SELECT count(*) FROM plan_reinforce r WHERE r.id = @NODES_NAME.id AND r.rowid BETWEEN :lo AND :hi),
    last_reinforced_hours = :now
-- (found by key: the unary + keeps SQLite off the index of every active block)
WHERE id IN (SELECT id FROM plan_reinforce WHERE rowid BETWEEN :lo AND :hi) AND +status = 'active';
DELETE FROM main.mem_config WHERE key = 'sweep_reinforcing';
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'block', b.id, REINFORCE_KEPT_PROBLEM
FROM @NODES n JOIN apply_reinforce_before b ON b.id = n.id
WHERE n.id IN (SELECT id FROM apply_reinforce_before) AND @REINFORCE_KEPT;

-- name: refused_plan_reinforce
INSERT INTO sweep_invalid (kind, id, problem)
SELECT 'block', id, 'reinforce refused: ' || :reason FROM plan_reinforce WHERE rowid = :seq;

-- name: forget_saved
-- The chunk's rows of the saved plan: applied now, so a resumed sweep
-- needs them no more.
DELETE FROM main.mem_sweep_plans WHERE sweep_id = :sweep AND step = :step AND seq BETWEEN :lo AND :hi;

-- name: apply_rank_bounds
-- Each block the plan scored keeps its bound, in the scales' epoch (rank.go);
-- not one it reinforces, whose refresh forgets it (its count went up).
UPDATE OR FAIL main.mem_block_state SET rank_bound = r.bound - 2 * :epoch
FROM plan_rank r WHERE r.seq BETWEEN :lo AND :hi AND mem_block_state.id = r.id
  AND r.id NOT IN (SELECT id FROM plan_reinforce);
