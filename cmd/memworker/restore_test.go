package main

import (
	"strings"
	"testing"
)

// TestRestoreGolden: blocks with their edges, an edge whose end came back,
// an edge named in either order, an archived and a pruned fact.
func TestRestoreGolden(t *testing.T) {
	tr := newTranscript(t)
	path := goldenDB(t, tr.dir, "m.db")
	tr.run("restore", "--block", "obs-standup", "--db", path)
	tr.run("restore", "--block", "obs-lunch", "--db", path)
	tr.run("restore", "--block", "meme-of-day", "--db", path)
	tr.run("restore", "--edge", "meme-of-day", "goal-ship", "--db", path)
	tr.run("restore", "--edge", "py-gil", "py-async", "--db", path)
	tr.run("restore", "--edge", "db-wal", "py-gil", "--db", path)
	tr.run("restore", "--fact", "f-old-lib", "--db", path)
	tr.run("restore", "--fact", "f-parking", "--db", path)
	tr.check("restore")
}

func TestRestoreBlocks(t *testing.T) {
	path := demoDB(t)
	// What the demo's sweep archived, from its own log.
	archived := queryRows(t, path, "SELECT subject_id FROM mem_events WHERE subject_kind = 'block' AND action = 'archive' ORDER BY subject_id")
	if strings.Join(archived, " ") != "meme-of-day obs-lunch obs-standup" {
		t.Fatalf("the demo archived %v; this test expects meme-of-day, obs-lunch and obs-standup", archived)
	}

	for _, c := range []struct{ id, edge string }{
		{"obs-standup", "obs-standup|py-gil"},
		{"obs-lunch", "ds-pandas|obs-lunch"},
	} {
		ok(t, "restore", "--block", c.id, "--db", path)
		if got := queryOne(t, path, "SELECT status FROM mem_blocks WHERE id = ?", c.id); got != "active" {
			t.Errorf("%s is %s after restore", c.id, got)
		}
		from, to, _ := strings.Cut(c.edge, "|")
		if got := queryOne(t, path, "SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ?", from, to); got != "1" {
			t.Errorf("the edge %s came not back with its block", c.edge)
		}
		wantExit(t, mw(t, "restore", "--block", c.id, "--db", path), exitFailure, c.id)
	}

	// An edge whose end is archived waits for the block.
	wantExit(t, mw(t, "restore", "--edge", "meme-of-day", "goal-ship", "--db", path), exitFailure, "restore the block first")
	m := decodeJSON(t, ok(t, "restore", "--block", "meme-of-day", "--json", "--db", path))
	if m["kind"] != "block" || m["id"] != "meme-of-day" {
		t.Errorf("restore --json: %v", m)
	}
	ok(t, "restore", "--edge", "meme-of-day", "goal-ship", "--db", path)
	wantExit(t, mw(t, "restore", "--block", "never-archived", "--db", path), exitFailure, "nothing to restore")
	if got := queryOne(t, path, "SELECT count(*) FROM mem_events WHERE action = 'restore'"); got == "0" {
		t.Error("restores left no event")
	}
}

func TestRestoreEdge(t *testing.T) {
	path := demoDB(t)
	decayed := queryRows(t, path, "SELECT subject_id FROM mem_events WHERE subject_kind = 'edge' AND action = 'decay' AND reason = 'temporal'")
	if !strings.Contains(strings.Join(decayed, " "), `["py-async","py-gil"]`) {
		t.Fatalf("the demo decayed %v; this test expects py-async — py-gil", decayed)
	}
	snapshot := queryOne(t, path, "SELECT weight || '|' || reinforcement_count FROM (SELECT json_extract(detail, '$.edge.weight') AS weight, json_extract(detail, '$.edge.reinforcement_count') AS reinforcement_count FROM mem_events WHERE subject_id = ? AND action = 'decay')", `["py-async","py-gil"]`)

	ok(t, "restore", "--edge", "py-gil", "py-async", "--db", path)
	got := queryOne(t, path, "SELECT weight || '|' || reinforcement_count FROM mem_edges WHERE from_id = 'py-async' AND to_id = 'py-gil'")
	if got != snapshot {
		t.Errorf("restored edge %s, the snapshot had %s", got, snapshot)
	}
	// The restored edge is anchored at now, so the next sweep keeps it.
	if got := queryOne(t, path, "SELECT last_active_hours FROM mem_edges WHERE from_id = 'py-async' AND to_id = 'py-gil'"); got != "500" && got != "500.0" {
		t.Errorf("restored edge anchored at %s, want 500", got)
	}
	ok(t, "sweep", "--db", path)
	if got := queryOne(t, path, "SELECT count(*) FROM mem_edges WHERE from_id = 'py-async' AND to_id = 'py-gil'"); got != "1" {
		t.Error("the next sweep removed the restored edge again")
	}

	wantExit(t, mw(t, "restore", "--edge", "py-async", "py-gil", "--db", path), exitFailure, "exists already")
	wantExit(t, mw(t, "restore", "--edge", "db-index", "db-wal", "--db", path), exitFailure, "nothing to restore")
	m := decodeJSON(t, ok(t, "restore", "--edge", "db-wal", "py-gil", "--json", "--db", path))
	wantKeys(t, "restore --json", m, "kind", "id", "from_event", "edges_restored")
	if m["kind"] != "edge" || m["id"] != "db-wal py-gil" {
		t.Errorf("restore --json: %v", m)
	}
}

func TestRestoreFacts(t *testing.T) {
	path := demoDB(t)
	if got := queryOne(t, path, "SELECT status FROM mem_facts WHERE id = 'f-old-lib'"); got != "archived" {
		t.Fatalf("the demo left f-old-lib %s; this test expects it archived", got)
	}
	if got := queryOne(t, path, "SELECT count(*) FROM mem_facts WHERE id = 'f-parking'"); got != "0" {
		t.Fatalf("the demo did not prune f-parking")
	}

	ok(t, "restore", "--fact", "f-old-lib", "--db", path)
	if got := queryOne(t, path, "SELECT status FROM mem_facts WHERE id = 'f-old-lib'"); got != "active" {
		t.Errorf("f-old-lib is %s after restore", got)
	}

	ok(t, "restore", "--fact", "f-parking", "--db", path)
	if got := queryOne(t, path, "SELECT segment || '|' || status || '|' || content FROM mem_facts WHERE id = 'f-parking'"); got != "context|active|Parked on level 3." {
		t.Errorf("pruned fact restored as %q", got)
	}

	wantExit(t, mw(t, "restore", "--fact", "f-parking", "--db", path), exitFailure, "nothing to restore")
	wantExit(t, mw(t, "restore", "--fact", "f-tabs", "--db", path), exitFailure, "nothing to restore")
	wantExit(t, mw(t, "restore", "--fact", "no-such-fact", "--db", path), exitFailure, "nothing to restore")
}

func TestRestoreUsage(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	for _, args := range [][]string{
		{"restore"},
		{"restore", "--edge", "A"},
		{"restore", "--edge", "A", "B", "C"},
		{"restore", "A", "B"},
		{"restore", "--block", "X", "--fact", "Y"},
		{"restore", "--edge", "A", "B", "--block", "X"},
		{"restore", "--block", "X", "extra"},
	} {
		wantUsage(t, mw(t, append(args, "--db", path)...), "exactly one of", "restore --help")
	}
	if fileHash(t, path) != before {
		t.Error("a rejected restore changed the file")
	}
}
