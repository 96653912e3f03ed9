package main

import (
	"testing"
)

// TestDecayedGolden: what the demo's sweep removed, and the edges nearest
// their horizon.
func TestDecayedGolden(t *testing.T) {
	tr := newTranscript(t)
	path := goldenDB(t, tr.dir, "m.db")
	tr.run("decayed", "--limit", "50", "--db", path)
	tr.run("decayed", "--limit", "2", "--db", path)
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
