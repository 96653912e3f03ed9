package worker_test

// A restore takes back only the row it names (docs/sweep.md): an event whose
// archived row is another row than its subject was edited, and is refused.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestRestoreRefusesEditedEvents: restore --edge p q, --block and --fact
// refuse an event whose archived row's ids are not its subject's, naming the
// event and both ids; nothing is written (no row from the snapshot, no
// restore event). The untouched events restore as usual.
func TestRestoreRefusesEditedEvents(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, restoreFixture+`
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('p', 'knowledge', 100), ('q', 'knowledge', 100),
			('x', 'knowledge', 100), ('y', 'knowledge', 100);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours) VALUES
			('p', 'q', 0.05, 0, 'observed', 100);`)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, last_accessed_at, content) VALUES
		('f1', 'context', 'short', 0.3, 0.5, ?, 'one')`, daysAgo(fixedWall, 400))
	r := sweepAtWall(t, db, 100, fixedWall)
	if r.EdgesPruned != 1 || r.Archived != 2 || r.Facts.Pruned != 1 {
		t.Fatalf("fixture: %s, facts %+v", r.Summary, r.Facts)
	}
	edits := []struct {
		name, where, set string
		restore          func() error
		want             string
	}{
		{"edge ids", `subject_kind = 'edge' AND subject_id = json_array('p', 'q')`,
			`from_id = 'x', to_id = 'y', weight = 99, pinned = 1`,
			func() error { _, err := worker.RestoreEdge(ctx, db, "p", "q", fixedWall); return err },
			`records the edge "x" — "y"`},
		{"edge end missing", `subject_kind = 'edge' AND subject_id = json_array('p', 'q')`,
			`to_id = NULL`,
			func() error { _, err := worker.RestoreEdge(ctx, db, "p", "q", fixedWall); return err },
			`records the edge "p" — (none)`},
		{"fact id", `subject_kind = 'fact' AND subject_id = 'f1'`,
			`id = 'other'`,
			func() error { _, err := worker.RestoreFact(ctx, db, "f1", fixedWall); return err },
			`records fact "other"`},
		{"block id", `subject_kind = 'block' AND subject_id = 'obs'`,
			`id = 'k1'`,
			func() error { _, err := worker.RestoreBlock(ctx, db, "obs", fixedWall); return err },
			`records block "k1"`},
		{"edge removed with a block", `subject_kind = 'edge' AND subject_id = json_array('k1', 'obs')`,
			`from_id = 'x', to_id = 'obs'`,
			func() error { _, err := worker.RestoreBlock(ctx, db, "obs", fixedWall); return err },
			`records the edge "x" — "obs"`},
	}
	state := func() string {
		return fmt.Sprint(memoryState(t, db), scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE action = 'restore'`))
	}
	for _, e := range edits {
		event := scalar[int64](t, db, `SELECT id FROM mem_events WHERE `+e.where)
		undo := editArchived(t, db, event, e.set)
		before := state()
		err := e.restore()
		if !errors.Is(err, worker.ErrEditedEvent) || !strings.Contains(err.Error(), fmt.Sprintf("event #%d %s", event, e.want)) {
			t.Errorf("%s: %v, want ErrEditedEvent naming event #%d and %s", e.name, err, event, e.want)
		}
		if after := state(); after != before {
			t.Errorf("%s: the refused restore changed the memory:\n%s", e.name, diffLines(before, after))
		}
		undo()
	}
	if scalar[int](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = 'x' AND to_id = 'y'`) != 0 {
		t.Error("an edge x — y came from the edited snapshot")
	}

	// Unedited again, every one restores.
	if _, err := worker.RestoreEdge(ctx, db, "q", "p", fixedWall); err != nil {
		t.Errorf("restore p — q: %v", err)
	}
	if got := edgeRow(t, db, "p", "q"); got == nil || got["weight"] != 0.05 || got["pinned"] != 0.0 {
		t.Errorf("restored p — q: %v", got)
	}
	if _, err := worker.RestoreFact(ctx, db, "f1", fixedWall); err != nil {
		t.Errorf("restore f1: %v", err)
	}
	if res, err := worker.RestoreBlock(ctx, db, "obs", fixedWall); err != nil || res.Edges != 2 {
		t.Errorf("restore obs: %+v, %v", res, err)
	}
}

// editArchived edits the archive row of an event with an UPDATE's SET
// clause, and returns what puts the row back as it was.
func editArchived(t *testing.T, db *worker.DB, event int64, set string) (undo func()) {
	t.Helper()
	table := scalar[string](t, db, `SELECT a.name FROM mem_archives a JOIN mem_events e ON e.id = ? AND e.subject_kind = a.kind
		WHERE a.source LIKE 'mem\_%' ESCAPE '\'`, event)
	q := `"` + table + `"`
	mustExec(t, db, `DROP TABLE IF EXISTS edited_row; CREATE TABLE edited_row AS SELECT * FROM `+q+` WHERE mem_event_id = ?`, event)
	mustExec(t, db, `UPDATE `+q+` SET `+set+` WHERE mem_event_id = ?`, event)
	return func() {
		mustExec(t, db, `DELETE FROM `+q+` WHERE mem_event_id = ?; INSERT INTO `+q+` SELECT * FROM edited_row; DROP TABLE edited_row`, event)
	}
}
