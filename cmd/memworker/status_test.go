package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	ok(t, "migrate", "up", "--db", path)
	m := decodeJSON(t, ok(t, "status", "--json", "--db", path))
	wantKeys(t, "status", m, "hours_since_curate", "curate_due", "blocks", "edges", "facts", "events", "last_sweep",
		"active_hours", "schema_version")
	if m["hours_since_curate"] != nil || m["last_sweep"] != nil || m["curate_due"] != true {
		t.Errorf("never swept: %v", m)
	}

	path = demoDB(t)
	m = decodeJSON(t, ok(t, "status", "--json", "--db", path))
	if num(t, m, "hours_since_curate") != 0 || m["curate_due"] != false || num(t, m, "active_hours") != 500 {
		t.Errorf("right after the demo's sweep: %v", m)
	}
	blocks := m["blocks"].(map[string]any)
	wantBlocks := queryRows(t, path, "SELECT status, count(*) FROM mem_blocks GROUP BY status ORDER BY status")
	for _, row := range wantBlocks {
		status, n, _ := strings.Cut(row, "|")
		if got := fmt.Sprint(blocks[status]); got != n {
			t.Errorf("blocks[%s] = %s, want %s", status, got, n)
		}
	}
	if got := fmt.Sprint(m["edges"]); got != queryOne(t, path, "SELECT count(*) FROM mem_edges") {
		t.Errorf("edges = %s", got)
	}
	ls, _ := m["last_sweep"].(map[string]any)
	if ls == nil || ls["id"] != 1.0 || ls["status"] != "done" || !strings.HasPrefix(fmt.Sprint(ls["summary"]), "Curated:") {
		t.Errorf("last_sweep = %v", m["last_sweep"])
	}

	ok(t, "clock", "advance", "39", "--db", path)
	m = decodeJSON(t, ok(t, "status", "--json", "--db", path))
	if num(t, m, "hours_since_curate") != 39 || m["curate_due"] != false {
		t.Errorf("39 h after a sweep (interval 40): %v", m)
	}
	ok(t, "clock", "advance", "1", "--db", path)
	m = decodeJSON(t, ok(t, "status", "--json", "--db", path))
	if num(t, m, "hours_since_curate") != 40 || m["curate_due"] != true {
		t.Errorf("40 h after a sweep (interval 40): %v", m)
	}
}

// TestStatusGolden: a memory never swept, then one swept at hour 500, 39
// and 40 active hours later (the interval is 40).
func TestStatusGolden(t *testing.T) {
	tr := newTranscript(t)
	fresh := filepath.Join(tr.dir, "fresh.db")
	tr.run("migrate", "up", "--db", fresh)
	tr.run("status", "--db", fresh)
	path := goldenDB(t, tr.dir, "m.db")
	tr.run("status", "--db", path)
	tr.run("clock", "advance", "39", "--db", path)
	tr.run("status", "--db", path)
	tr.run("clock", "advance", "1", "--db", path)
	tr.run("status", "--db", path)
	tr.check("status")
}
