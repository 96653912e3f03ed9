package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecayedGolden: what the demo's sweep removed, and the edges nearest
// their horizon.
func TestDecayedGolden(t *testing.T) {
	tr := newTranscript(t)
	path := goldenDB(t, tr.dir, "m.db")
	// The view reads wall-clock policies at the pinned wall clock.
	exec1(t, path, `UPDATE mem_config SET value = ? WHERE key = 'wall_clock'`, goldenWall.Unix())
	tr.run("decayed", "--limit", "50", "--db", path)
	tr.run("decayed", "--limit", "2", "--db", path)
	tr.run("decayed", "--invalid", "--db", path)
	tr.check("decayed")
}

func TestDecayed(t *testing.T) {
	path := demoDB(t)
	m := decodeJSON(t, ok(t, "decayed", "--json", "--db", path))
	events, _ := m["events"].([]any)
	closest, _ := m["closest_to_decay"].([]any)
	if len(events) == 0 || len(closest) == 0 {
		t.Fatalf("decayed --json: %v", m)
	}
	ev := events[0].(map[string]any)
	wantKeys(t, "event", ev, "id", "sweep_id", "clock_hours", "subject_kind", "subject_id", "action", "reason")
	first := closest[0].(map[string]any)
	wantKeys(t, "closest_to_decay[0]", first, "from", "to", "weight", "effective_weight", "hours_left")
	if first["from"] != "db-index" || first["to"] != "py-async" {
		t.Errorf("nearest horizon: %v, want db-index — py-async", first)
	}
	prev := -1.0
	for _, c := range closest {
		h := c.(map[string]any)["hours_left"].(float64)
		if h < prev {
			t.Errorf("closest_to_decay is not ordered by hours_left: %v", closest)
		}
		prev = h
	}

	m = decodeJSON(t, ok(t, "decayed", "--json", "--limit", "2", "--db", path))
	if n, k := len(m["events"].([]any)), len(m["closest_to_decay"].([]any)); n != 2 || k != 2 {
		t.Errorf("--limit 2 gave %d events, %d edges", n, k)
	}
}

// TestDecayedInvalid: a sweep names 10 invalid rows and says how to list
// them all; decayed --invalid lists every one (text and JSON) and changes
// no byte of the file.
func TestDecayedInvalid(t *testing.T) {
	path := demoDB(t) // its one invalid row: an edge whose weight is text
	for i := range 11 {
		exec1(t, path, `INSERT INTO mem_blocks (id, category, confidence, last_reinforced_hours) VALUES (?, 'knowledge', 'sure', 500)`,
			fmt.Sprintf("unsure-%02d", i))
	}
	out := ok(t, "sweep", "--dry-run", "--db", path).stdout
	if n := strings.Count(out, "  skipped invalid "); n != 10 {
		t.Errorf("sweep names %d invalid rows, want 10:\n%s", n, out)
	}
	for _, want := range []string{"12 invalid rows skipped (memworker decayed --invalid lists them).",
		"  skipped invalid block unsure-00: confidence is text\n",
		"  (showing 10 of 12; list them all with: memworker decayed --invalid)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, out)
		}
	}

	before := fileHash(t, path)
	out = ok(t, "decayed", "--invalid", "--db", path).stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 13 || lines[0] != "invalid rows: 12 (sweeps skip them and never change them)" ||
		lines[1] != "  mem_blocks unsure-00: confidence is text" ||
		lines[12] != `  mem_edges  ["db-wal","ds-pandas"]: weight is text` {
		t.Errorf("decayed --invalid:\n%s", out)
	}
	m := decodeJSON(t, ok(t, "decayed", "--invalid", "--json", "--db", path))
	rows, _ := m["invalid_rows"].([]any)
	if num(t, m, "count") != 12 || len(rows) != 12 {
		t.Fatalf("decayed --invalid --json: %v", m)
	}
	wantKeys(t, "invalid_rows[0]", rows[0].(map[string]any), "kind", "id", "problem")
	if fileHash(t, path) != before {
		t.Error("decayed --invalid changed the file")
	}
}
