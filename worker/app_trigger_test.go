package worker_test

// An app's trigger or constraint that refuses one of the sweep's changes
// stops only that change (docs/sweep.md: bad rows are skipped, counted and
// named; they never abort the sweep).

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// refusalFixture: at clock 1000, 60 edges a–eNN decay (0.9 e^-5), three
// of them noted 'keep'; the blocks obs and obs2 fade, with their light
// edges to a (obs's noted 'keep'); an 'exclude' policy flags the edge
// c1–c2 of relation 'cites', noted 'keep'.
func refusalFixture() string {
	var b strings.Builder
	b.WriteString(`UPDATE mem_config SET value = 1000 WHERE key = 'active_hours';
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('a', 'knowledge', 1000), ('obs', 'observation', 0),
			('obs2', 'observation', 0), ('c1', 'knowledge', 1000), ('c2', 'knowledge', 1000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, note) VALUES
			('a', 'obs', 0.3, 0, 'observed', 1000, 'keep'), ('a', 'obs2', 0.3, 0, 'observed', 1000, NULL);
		INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
			('cites', 'half_life', '{"half_life":"10h"}', 'active_hours', 0.10, 'exclude', 'keep');
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours, note) VALUES
			('c1', 'c2', 1.0, 0, 'cites', 'observed', 0, 'keep');
`)
	for i := range 60 {
		note := "NULL"
		if i == 3 || i == 31 || i == 59 {
			note = "'keep'"
		}
		fmt.Fprintf(&b, "INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('e%02d', 'knowledge', 1000);\n", i)
		fmt.Fprintf(&b, "INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, note) VALUES ('a', 'e%02d', 0.9, 0, 'similarity', 0, %s);\n", i, note)
	}
	return b.String()
}

// appTriggers refuse, for rows noted 'keep': an edge's delete, a block's
// archival, an edge's exclusion and a fact's delete.
const appTriggers = `
	CREATE TRIGGER keep BEFORE DELETE ON mem_edges WHEN OLD.note = 'keep' BEGIN SELECT RAISE(ABORT, 'kept by app'); END;
	CREATE TRIGGER keep_block BEFORE UPDATE OF status ON mem_blocks WHEN NEW.status = 'archived' AND OLD.id = 'obs2'
		BEGIN SELECT RAISE(ABORT, 'block kept by app'); END;
	CREATE TRIGGER keep_flag BEFORE UPDATE OF excluded ON mem_edges WHEN OLD.note = 'keep'
		BEGIN SELECT RAISE(FAIL, 'flag kept by app'); END;
	CREATE TRIGGER keep_fact BEFORE DELETE ON mem_facts WHEN OLD.content = 'keep' BEGIN SELECT RAISE(ABORT, 'fact kept by app'); END;`

// TestAppTriggerRefusals: with small chunks, every removal the app's
// triggers do not refuse is made with its event; each refused one is
// skipped, counted and named in the report's invalid rows, not counted as
// a removal nor as skipped for a concurrent change; the sweep succeeds.
// The next sweep names them again and does not fail. The chunks run
// without savepoints until the first refusal, under them after it.
func TestAppTriggerRefusals(t *testing.T) {
	db, _ := newMemory(t, refusalFixture()+appTriggers)
	for i := range 10 {
		content := fmt.Sprintf("'fact %d'", i)
		if i == 7 {
			content = "'keep'"
		}
		mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count, last_accessed_at, content)
			VALUES ('f%02d', 'context', 'short', 0.3, 0.5, 0, ?, %s)`, i, content), daysAgo(fixedWall, 400))
	}
	want := []worker.InvalidRow{
		{Kind: "block", ID: "obs", Problem: "archive refused: kept by app"},
		{Kind: "block", ID: "obs2", Problem: "archive refused: block kept by app"},
		{Kind: "edge", ID: `["a","e03"]`, Problem: "decay refused: kept by app"},
		{Kind: "edge", ID: `["a","e31"]`, Problem: "decay refused: kept by app"},
		{Kind: "edge", ID: `["a","e59"]`, Problem: "decay refused: kept by app"},
		{Kind: "edge", ID: `["c1","c2"]`, Problem: "exclude refused: flag kept by app"},
		{Kind: "fact", ID: "f07", Problem: "prune refused: fact kept by app"},
	}
	for i, now := range []float64{1000, 1000.5} {
		// A default sweep runs its chunks without savepoints until a
		// refusal rolls one back: then under savepoints, once.
		guarded := 0
		r := sweepChunked(t, db, now, fixedWall, worker.WithGuarded(worker.SweepOptions{ChunkSize: 8}, func() { guarded++ }))
		if guarded != 1 {
			t.Errorf("sweep %d: went on under savepoints %d times, want once, at the first refusal", i, guarded)
		}
		sample := slices.Clone(r.InvalidRows.Sample)
		slices.SortFunc(sample, func(a, b worker.InvalidRow) int { return strings.Compare(a.Kind+a.ID, b.Kind+b.ID) })
		if r.InvalidRows.Count != int64(len(want)) || !slices.Equal(sample, want) {
			t.Errorf("sweep %d: invalid rows %d %+v, want %+v", i, r.InvalidRows.Count, sample, want)
		}
		if r.Skipped != 0 {
			t.Errorf("sweep %d: %d skipped for concurrent changes, want 0 (refusals are invalid rows)", i, r.Skipped)
		}
		if !strings.Contains(r.Summary, "7 invalid rows skipped") {
			t.Errorf("sweep %d: summary %q", i, r.Summary)
		}
		if i == 0 && (r.EdgesDecayed != 57 || r.Archived != 0 || r.Facts.Pruned != 9 || policyCount(t, r, "cites").Excluded != 0) {
			t.Errorf("sweep %d: %s; facts %+v; want 57 decayed, none archived, 9 facts pruned, none excluded", i, r.Summary, r.Facts)
		}
		if i == 1 && (r.EdgesDecayed != 0 || r.Facts.Pruned != 0) {
			t.Errorf("sweep %d: %s; want nothing more removed", i, r.Summary)
		}
	}
	// What was refused is there as it was, with no event; the rest went
	// with theirs.
	keep := []string{"a-e03", "a-e31", "a-e59", "a-obs", "a-obs2", "c1-c2"}
	var gone []string
	for i := range 60 {
		if k := fmt.Sprintf("a-e%02d", i); !slices.Contains(keep, k) {
			gone = append(gone, k)
		}
	}
	expectEdges(t, db, keep, gone)
	expectStatus(t, db, "active", "obs", "obs2")
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE action IN ('prune', 'decay', 'delete', 'archive', 'exclude')
		AND (subject_id IN ('obs', 'obs2', 'f07') OR subject_id IN (json_array('a', 'e03'), json_array('a', 'e31'), json_array('a', 'e59'),
		     json_array('a', 'obs'), json_array('c1', 'c2')))`); n != 0 {
		t.Errorf("%d events for refused changes", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE action = 'decay' AND subject_kind = 'edge'`); n != 57 {
		t.Errorf("%d decay events, want 57", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_facts`); n != 1 {
		t.Errorf("%d facts left, want f07", n)
	}
	if n := scalar[int](t, db, `SELECT excluded FROM mem_edges WHERE from_id = 'c1'`); n != 0 {
		t.Errorf("c1-c2 excluded = %d, want 0 (refused)", n)
	}

	// The app lets go: the next sweep makes the changes.
	mustExec(t, db, `DROP TRIGGER keep; DROP TRIGGER keep_block; DROP TRIGGER keep_flag; DROP TRIGGER keep_fact`)
	guarded := false
	r := sweepChunked(t, db, 1001, fixedWall, worker.WithGuarded(worker.SweepOptions{ChunkSize: 8}, func() { guarded = true }))
	if guarded {
		t.Errorf("with nothing refused, the sweep went on under savepoints")
	}
	if r.InvalidRows.Count != 0 || r.EdgesDecayed != 3 || r.Archived != 2 || r.Facts.Pruned != 1 || policyCount(t, r, "cites").Excluded != 1 {
		t.Errorf("after the triggers went: %s; facts %+v; invalid %+v", r.Summary, r.Facts, r.InvalidRows)
	}
}

// TestAppTriggerRefusesEverything: a trigger that refuses every delete
// leaves every edge and names each; the sweep still succeeds.
func TestAppTriggerRefusesEverything(t *testing.T) {
	db, _ := newMemory(t, refusalFixture()+`
		CREATE TRIGGER no_deletes BEFORE DELETE ON mem_edges BEGIN SELECT RAISE(ABORT, 'append-only'); END;`)
	before := len(edgeSet(t, db))
	r := sweepChunked(t, db, 1000, fixedWall, worker.SweepOptions{ChunkSize: 16})
	if r.EdgesDecayed != 0 || r.Archived != 0 || r.InvalidRows.Count != 62 || r.Skipped != 0 {
		t.Errorf("%s; invalid %d, skipped %d", r.Summary, r.InvalidRows.Count, r.Skipped)
	}
	if after := len(edgeSet(t, db)); after != before {
		t.Errorf("%d edges, want %d", after, before)
	}
}

// TestAppTriggerRefusalInGrownTransaction: a step's first transaction
// grows past its first chunk while it holds the lock (alone, in an
// hour's hold); an app's trigger that refuses a change only in the part
// it grew by rolls back the whole transaction, which runs again under
// savepoints: that change alone is skipped and named, every other one is
// made once, with its event.
func TestAppTriggerRefusalInGrownTransaction(t *testing.T) {
	db, _ := newMemory(t, refusalFixture()+`
		CREATE TRIGGER keep31 BEFORE DELETE ON mem_edges WHEN OLD.to_id = 'e31' BEGIN SELECT RAISE(ABORT, 'kept by app'); END;`)
	var dones []int64
	guarded := 0
	opt := worker.WithChunk(worker.SweepOptions{ChunkSize: 8, SoloChunkSize: 1000, SoloHold: time.Hour}, func(step string, done, total int64) {
		if step == "plan_edges" {
			dones = append(dones, done)
		}
	})
	r := sweepChunked(t, db, 1000, fixedWall, worker.WithGuarded(opt, func() { guarded++ }))
	if len(dones) < 2 || dones[1] <= 31 {
		t.Fatalf("the edges' first transaction ended at row %v, want past row 32 (a-e31) in one transaction", dones)
	}
	if guarded != 1 {
		t.Errorf("went on under savepoints %d times, want once", guarded)
	}
	want := []worker.InvalidRow{{Kind: "edge", ID: `["a","e31"]`, Problem: "decay refused: kept by app"}}
	if r.InvalidRows.Count != 1 || !slices.Equal(r.InvalidRows.Sample, want) {
		t.Errorf("invalid rows %d %+v, want %+v", r.InvalidRows.Count, r.InvalidRows.Sample, want)
	}
	var gone []string
	for i := range 60 {
		if i != 31 {
			gone = append(gone, fmt.Sprintf("a-e%02d", i))
		}
	}
	expectEdges(t, db, []string{"a-e31"}, gone)
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE action = 'decay' AND subject_kind = 'edge'`); n != 59 || r.EdgesDecayed != 59 {
		t.Errorf("%d decay events, %d decayed in the report; want 59 of each", n, r.EdgesDecayed)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_id = json_array('a', 'e31')`); n != 0 {
		t.Errorf("%d events for the refused edge", n)
	}
	integrityOK(t, db.SQL)
}
