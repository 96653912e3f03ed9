package worker_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestElfmemCurateAheadOfItsClock: elfmem curates mid-session and writes
// its last_curate_at ahead of its total_active_hours. A sweep at the
// hours it then reads is behind that curate: it reinforces nothing again
// and winds back neither elfmem's last_curate_at nor any block's
// last_reinforced_at.
func TestElfmemCurateAheadOfItsClock(t *testing.T) {
	s := elfmemShape
	db, _ := shapedMemory(t, s, restoreGraph(), s.base)
	sweepShape(t, s, db, s.base, worker.SweepOptions{})
	// elfmem's own curate, 30 hours ahead of the clock it reads next.
	ahead := s.base.after(30)
	mustExec(t, db, `UPDATE system_config SET value = ? WHERE key = 'last_curate_at'`, strconv.FormatFloat(ahead.hours, 'f', -1, 64))
	mustExec(t, db, `UPDATE blocks SET reinforcement_count = reinforcement_count + 1, last_reinforced_at = ? WHERE id IN ('0001', '0002')`, ahead.hours)
	before := dumpRows2(t, db, `SELECT id, reinforcement_count, last_reinforced_at, status FROM blocks ORDER BY id`)

	behind := s.base.after(10)
	s.setClock(t, db, behind)
	r := sweepShape(t, s, db, behind, worker.SweepOptions{})
	if r.Reinforced != 0 || r.ConstitutionalReinforced != 0 || r.Archived != 0 {
		t.Errorf("a sweep behind elfmem's own curate reinforced %d (%d constitutional) and archived %d: %s",
			r.Reinforced, r.ConstitutionalReinforced, r.Archived, r.Summary)
	}
	if got := scalar[string](t, db, `SELECT value FROM system_config WHERE key = 'last_curate_at'`); got != strconv.FormatFloat(ahead.hours, 'f', -1, 64) {
		t.Errorf("elfmem's last_curate_at is %s after the sweep, want %v", got, ahead.hours)
	}
	if after := dumpRows2(t, db, `SELECT id, reinforcement_count, last_reinforced_at, status FROM blocks ORDER BY id`); after != before {
		t.Errorf("the blocks changed:\n%s\nwere\n%s", after, before)
	}
}

// TestElfmemArchivedBlockTakesItsTags: a block the sweep archives loses
// its tag rows, as memworker's own do (its archive row keeps them), and
// restore puts them back with it.
func TestElfmemArchivedBlockTakesItsTags(t *testing.T) {
	s := elfmemShape
	db, _ := shapedMemory(t, s, restoreGraph(), s.base)
	later := s.base.after(200) // the observations (5, 6) fade
	s.setClock(t, db, later)
	r := sweepShape(t, s, db, later, worker.SweepOptions{})
	if r.Archived == 0 || scalar[string](t, db, `SELECT status FROM blocks WHERE id = '0005'`) != "archived" {
		t.Fatalf("block 0005 was not archived: %s", r.Summary)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM block_tags WHERE block_id = '0005'`); n != 0 {
		t.Errorf("archived block 0005 kept %d tag rows", n)
	}
	if got := scalar[string](t, db, `SELECT mem_tags FROM mem_archive_blocks WHERE mem_subject = '0005'`); got != `["meeting","standup"]` {
		t.Errorf("the archive keeps tags %s for 0005", got)
	}
	if _, err := worker.RestoreBlock(context.Background(), db, "0005", mappedWall); err != nil {
		t.Fatalf("restoring 0005: %v", err)
	}
	if got := scalar[string](t, db, `SELECT group_concat(tag, ',') FROM (SELECT tag FROM block_tags WHERE block_id = '0005' ORDER BY tag)`); got != "meeting,standup" {
		t.Errorf("restored block 0005 has tags %q", got)
	}
}

// TestElfmemArchivedBlockTakesItsContradictions: a block the sweep
// archives loses its contradictions rows, as elfmem's own curate deletes
// them, each kept in the event log; restore puts back those whose other
// block is active, and the rest come back with that block.
func TestElfmemArchivedBlockTakesItsContradictions(t *testing.T) {
	db, _ := contradictionsMemory(t)
	contradictionsGoAndComeBack(t, db)
}

// TestRqliteElfmemArchivedBlockTakesItsContradictions: the same on an
// rqlite cluster that enforces foreign keys.
func TestRqliteElfmemArchivedBlockTakesItsContradictions(t *testing.T) {
	file, path := contradictionsMemory(t)
	file.Close()
	cl := startClusterWith(t, 1, path, "-fk")
	contradictionsGoAndComeBack(t, openNode(t, cl.Nodes()[0]))
}

// contradictionsMemory is elfmem's database holding restoreGraph and
// three contradictions: 0005 with 0001 and with 0006 (the two blocks that
// fade 200 hours on), and 0002 with 0003.
func contradictionsMemory(t *testing.T) (*worker.DB, string) {
	s := elfmemShape
	db, path := shapedMemory(t, s, restoreGraph(), s.base)
	mustExec(t, db, `INSERT INTO contradictions (block_a_id, block_b_id, score, resolved, created_at) VALUES
		('0005', '0001', 0.9, 0, '2026-01-01'), ('0006', '0005', 0.8, 1, '2026-01-02'), ('0002', '0003', 0.7, 0, '2026-01-03')`)
	return db, path
}

// contradictionsGoAndComeBack sweeps contradictionsMemory's db 200 hours
// on, then restores 0005 and 0006.
func contradictionsGoAndComeBack(t *testing.T, db *worker.DB) {
	s := elfmemShape
	later := s.base.after(200)
	s.setClock(t, db, later)
	r := sweepShape(t, s, db, later, worker.SweepOptions{})
	archived := scalar[string](t, db, `SELECT group_concat(id, ',') FROM (SELECT id FROM blocks WHERE status = 'archived' ORDER BY id)`)
	if archived != "0005,0006" || r.Archived+r.OrphansArchived != 2 {
		t.Fatalf("archived %s: %s", archived, r.Summary)
	}
	contradictions := func() string {
		return scalar[string](t, db, `SELECT coalesce(group_concat(c, ' '), '') FROM (SELECT block_a_id || '-' || block_b_id || ':' || score || ':' || resolved || ':' || created_at AS c
			FROM contradictions ORDER BY 1)`)
	}
	if got := contradictions(); got != "0002-0003:0.7:0:2026-01-03" {
		t.Errorf("contradictions left %s", got)
	}
	if got := scalar[string](t, db, `SELECT group_concat(subject_id || ' ' || reason, ', ') FROM (SELECT subject_id, reason FROM mem_events
		WHERE action = 'remove_row' ORDER BY subject_id)`); got != "0005 dependent:contradictions, 0005 dependent:contradictions, 0006 dependent:contradictions" {
		t.Errorf("events of the removed rows: %s", got)
	}
	back, err := worker.RestoreBlock(context.Background(), db, "0005", mappedWall)
	if err != nil {
		t.Fatalf("restoring 0005: %v", err)
	}
	if back.Dependents != 1 || back.DependentsSkipped != 1 {
		t.Errorf("restoring 0005 put back %d rows, %d wait; want 1 and 1", back.Dependents, back.DependentsSkipped)
	}
	if got := contradictions(); got != "0002-0003:0.7:0:2026-01-03 0005-0001:0.9:0:2026-01-01" {
		t.Errorf("after restoring 0005: %s", got)
	}
	back, err = worker.RestoreBlock(context.Background(), db, "0006", mappedWall)
	if err != nil {
		t.Fatalf("restoring 0006: %v", err)
	}
	if back.Dependents != 1 || back.DependentsSkipped != 0 {
		t.Errorf("restoring 0006 put back %d rows, %d wait; want 1 and 0", back.Dependents, back.DependentsSkipped)
	}
	if got := contradictions(); got != "0002-0003:0.7:0:2026-01-03 0005-0001:0.9:0:2026-01-01 0006-0005:0.8:1:2026-01-02" {
		t.Errorf("after restoring 0006: %s", got)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d foreign key violations", n)
	}
}
