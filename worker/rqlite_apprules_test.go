package worker_test

// On rqlite as on a file, a change an app's trigger or constraint refuses
// is skipped and named, never a reason to stop (SPEC §3): the same sweep
// through a cluster names the same rows with the same words, makes the
// same changes, and is recorded done.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// rqliteRefusals are apps whose rules refuse one of the sweep's changes to
// rulesApp's rows, each with the invalid row the sweep names (a prefix).
var rqliteRefusals = []struct {
	name, schema, named string
}{
	{"trigger refuses an archive", rulesApp + `CREATE TRIGGER keep7 BEFORE UPDATE OF state ON notes WHEN OLD.id = 7 AND NEW.state != OLD.state
		BEGIN SELECT RAISE(ABORT, 'note 7 stays'); END;`,
		"block 7: archive refused: note 7 stays"},
	{"check refuses an archive", strings.Replace(rulesApp, "state TEXT DEFAULT 'active'", "state TEXT DEFAULT 'active' CHECK (state IN ('active', 'done'))", 1),
		"block 7: archive refused: CHECK constraint failed: state IN ('active', 'done')"},
	{"foreign key refuses an archive", `CREATE TABLE states (name TEXT PRIMARY KEY);
		INSERT INTO states VALUES ('active');` +
		strings.Replace(rulesApp, "state TEXT DEFAULT 'active'", "state TEXT DEFAULT 'active' REFERENCES states (name)", 1),
		"block 7: archive refused: FOREIGN KEY constraint failed"},
	{"trigger refuses a removal", rulesApp + `CREATE TRIGGER keep3 BEFORE DELETE ON links WHEN OLD.id = 3 BEGIN SELECT RAISE(ABORT, 'link 3 stays'); END;`,
		"edge 3: prune refused: link 3 stays"},
	{"check refuses a removal", rulesApp + `CREATE TABLE link_log (link_id INTEGER CHECK (link_id != 3));
		CREATE TRIGGER log_link AFTER DELETE ON links BEGIN INSERT INTO link_log VALUES (OLD.id); END;`,
		"edge 3: prune refused: CHECK constraint failed: link_id != 3"},
	{"trigger refuses a reinforcement", rulesApp + `CREATE TRIGGER frozen BEFORE UPDATE OF hits ON notes WHEN OLD.id = 1
		BEGIN SELECT RAISE(ABORT, 'note 1 is frozen'); END;`,
		"block 1: reinforce refused: note 1 is frozen"},
	{"check refuses a reinforcement", strings.Replace(rulesApp, "hits INTEGER DEFAULT 0", "hits INTEGER DEFAULT 0 CHECK (id != 1 OR hits = 0)", 1),
		"block 1: reinforce refused: CHECK constraint failed: id != 1 OR hits = 0"},
}

// TestRqliteAppRulesRefusals: on rqlite with -fk, each change an app's
// trigger (RAISE(ABORT)), CHECK or foreign key on a written column
// refuses (an archive, an edge's removal, a reinforcement) is skipped and
// named as on a file, in the same words; the sweep's other changes are
// those the same sweep makes on a file; the sweep is recorded done, and
// the next one does as the next one on the file does.
func TestRqliteAppRulesRefusals(t *testing.T) {
	for _, c := range rqliteRefusals {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			file, path := reviewDBAt(t, c.schema+rulesRows(), rulesMapping)
			cl := startClusterWith(t, 1, path, "-fk")
			node := openNode(t, cl.Nodes()[0])
			onFile := mustReviewSweep(t, file, reviewWall)
			w := reviewWall
			r, err := worker.Sweep(context.Background(), node, worker.SweepOptions{WallNow: &w})
			if err != nil {
				t.Fatalf("sweep on rqlite: %v", err)
			}
			expectNamed(t, r, c.named)
			expectNamed(t, onFile, c.named)
			if got, want := mappedCounts(r), mappedCounts(onFile); got != want || r.Skipped != onFile.Skipped {
				t.Errorf("rqlite %s, skipped %d\nfile   %s, skipped %d", got, r.Skipped, want, onFile.Skipped)
			}
			if got, want := appRows(t, node), appRows(t, file); got != want {
				t.Errorf("rqlite left\n%s\nfile left\n%s", got, want)
			}
			if n := scalar[int](t, node, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`); n != 1 {
				t.Errorf("%d sweeps recorded done", n)
			}
			later := reviewWall.Add(time.Minute)
			againOnFile := mustReviewSweep(t, file, later)
			again, err := worker.Sweep(context.Background(), node, worker.SweepOptions{WallNow: &later})
			if err != nil {
				t.Fatalf("second sweep on rqlite: %v", err)
			}
			if got, want := invalidNamed(again), invalidNamed(againOnFile); !slices.Equal(got, want) || mappedCounts(again) != mappedCounts(againOnFile) {
				t.Errorf("second sweep: rqlite %s %q\nfile %s %q", mappedCounts(again), got, mappedCounts(againOnFile), want)
			}
		})
	}
}

// appRows lists the app's rows and what the sweep recorded of them: notes,
// links, events and the sweep's invalid rows.
func appRows(t *testing.T, db *worker.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT 'note ' || id || ' ' || state || ' ' || hits FROM notes ORDER BY id`,
		`SELECT 'link ' || id || ' ' || quote(w) FROM links ORDER BY id`,
		`SELECT 'event ' || subject_kind || ' ' || subject_id || ' ' || action || ' ' || coalesce(reason, '') FROM mem_events ORDER BY 1`,
	} {
		rows, err := db.SQL.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			b.WriteString(line + "\n")
		}
		rows.Close()
	}
	return b.String()
}

// TestRqliteAppTriggerRefusals: on a 3-node cluster, with small chunks,
// the app's triggers on memworker's own tables refuse a block's archival,
// an edge's decay, an edge's exclusion (RAISE(FAIL)) and a fact's prune:
// each is skipped and named as on a file, every other change is made with
// its event, every node holds what the same sweep leaves in a file, and
// the next sweep names them again without failing.
func TestRqliteAppTriggerRefusals(t *testing.T) {
	fixture := refusalFixture() + appTriggers
	for i := range 10 {
		content := fmt.Sprintf("fact %d", i)
		if i == 7 {
			content = "keep"
		}
		fixture += fmt.Sprintf(`INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count, last_accessed_at, content)
			VALUES ('f%02d', 'context', 'short', 0.3, 0.5, 0, %d, '%s');`, i, daysAgo(fixedWall, 400), content)
	}
	file, path := newMemory(t, fixture)
	cl := startCluster(t, 3, path)
	followers, err := cl.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	node := openNode(t, followers[0])
	want := []string{
		"block obs2: archive refused: block kept by app",
		"block obs: archive refused: kept by app",
		`edge ["a","e03"]: decay refused: kept by app`,
		`edge ["a","e31"]: decay refused: kept by app`,
		`edge ["a","e59"]: decay refused: kept by app`,
		`edge ["c1","c2"]: exclude refused: flag kept by app`,
		"fact f07: prune refused: fact kept by app",
	}
	for i, now := range []float64{1000, 1000.5} {
		onFile := sweepChunked(t, file, now, fixedWall, worker.SweepOptions{ChunkSize: 8})
		r := sweepChunked(t, node, now, fixedWall, worker.SweepOptions{ChunkSize: 8})
		if got := invalidNamed(r); !slices.Equal(got, want) || r.InvalidRows.Count != int64(len(want)) {
			t.Errorf("sweep %d: invalid rows %d %q, want %q", i, r.InvalidRows.Count, got, want)
		}
		if got, want := mappedCounts(r), mappedCounts(onFile); got != want || r.Skipped != onFile.Skipped {
			t.Errorf("sweep %d:\nrqlite %s, skipped %d\nfile   %s, skipped %d", i, got, r.Skipped, want, onFile.Skipped)
		}
		if i == 0 && (r.EdgesDecayed != 57 || r.Archived != 0 || r.Facts.Pruned != 9 || policyCount(t, r, "cites").Excluded != 0) {
			t.Errorf("%s; facts %+v; want 57 decayed, none archived, 9 facts pruned, none excluded", r.Summary, r.Facts)
		}
		expectEveryNode(t, cl, memoryState(t, file))
	}
}

// TestRqliteSweepStoresRankScaleAsFile: the same memory swept on a file
// and through rqlite, a full sweep then an incremental one, leaves the
// same mem_config (rank_scale under its own key: a replica renames its
// working tables in the SQL, never in a string literal) and the same
// mem_block_state, rank bounds included.
func TestRqliteSweepStoresRankScaleAsFile(t *testing.T) {
	orig := bigMemory(t, 5, 80, 900)
	cl := startCluster(t, 1, orig)
	file := openAsWorker(t, copyMemory(t, orig))
	node := openNode(t, cl.Nodes()[0])
	wall := time.Unix(1_800_000_000, 0)
	for _, now := range []float64{500, 520} {
		opt := worker.SweepOptions{Now: &now, WallNow: &wall, ChunkSize: 50}
		if _, err := worker.Sweep(context.Background(), file, opt); err != nil {
			t.Fatal(err)
		}
		if _, err := worker.Sweep(context.Background(), node, opt); err != nil {
			t.Fatal(err)
		}
		if scale := scalar[string](t, node, `SELECT coalesce(max(value), '') FROM mem_config WHERE key = 'rank_scale'`); scale == "" {
			t.Errorf("at %v: no rank_scale on rqlite", now)
		}
		got, want := configAndBlockState(t, node), configAndBlockState(t, file)
		if got != want {
			t.Errorf("at %v: rqlite and file differ\nfile only:\n%s\nrqlite only:\n%s", now, diffLines(want, got), diffLines(got, want))
		}
	}
}

// configAndBlockState lists mem_config and mem_block_state, every column;
// not the edges a sweep on a file keeps (edges_counted), which a replica
// counts each time.
func configAndBlockState(t *testing.T, db *worker.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT key, quote(value) FROM mem_config WHERE key != 'edges_counted' ORDER BY key`,
		`SELECT * FROM mem_block_state ORDER BY id`,
	} {
		rows, err := db.SQL.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			fmt.Fprintf(&b, "%v\n", rowValues(t, rows, len(cols)))
		}
		rows.Close()
	}
	return b.String()
}

// TestRqliteAppRulesIgnored: on rqlite as on a file, a change an app's
// trigger silently skips (RAISE(IGNORE)) is named as kept by the app, is
// not counted as a change nor as skipped for a concurrent one, and has no
// event.
func TestRqliteAppRulesIgnored(t *testing.T) {
	for _, c := range []struct{ name, trigger, named string }{
		{"delete", `CREATE TRIGGER keep3 BEFORE DELETE ON links WHEN OLD.id = 3 BEGIN SELECT RAISE(IGNORE); END;`,
			"edge 3: removal kept by app"},
		{"archive", `CREATE TRIGGER keep7 BEFORE UPDATE OF state ON notes WHEN OLD.id = 7 AND NEW.state != OLD.state BEGIN SELECT RAISE(IGNORE); END;`,
			"block 7: archive kept by app"},
		{"reinforce", `CREATE TRIGGER keep_hits BEFORE UPDATE OF hits ON notes WHEN OLD.id = 2 BEGIN SELECT RAISE(IGNORE); END;`,
			"block 2: reinforce kept by app"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, path := rulesDB(t, c.trigger)
			cl := startClusterWith(t, 1, path, "-fk")
			node := openNode(t, cl.Nodes()[0])
			onFile := mustReviewSweep(t, file, reviewWall)
			w := reviewWall
			r, err := worker.Sweep(context.Background(), node, worker.SweepOptions{WallNow: &w})
			if err != nil {
				t.Fatalf("sweep on rqlite: %v", err)
			}
			expectNamed(t, r, c.named)
			if got, want := mappedCounts(r), mappedCounts(onFile); got != want || r.Skipped != onFile.Skipped || r.Skipped != 0 {
				t.Errorf("rqlite %s, skipped %d\nfile   %s, skipped %d", got, r.Skipped, want, onFile.Skipped)
			}
			if got, want := appRows(t, node), appRows(t, file); got != want {
				t.Errorf("rqlite left\n%s\nfile left\n%s", got, want)
			}
		})
	}
}
