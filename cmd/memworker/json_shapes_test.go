package main

import (
	"testing"
)

// JSON a program reads: every status count, zeros included; an edge's
// subject as the array of its two block ids.
func TestJSONShapes(t *testing.T) {
	path := demoDB(t)
	st := decodeJSON(t, ok(t, "status", "--json", "--db", path))
	for group, keys := range map[string][]string{"blocks": {"inbox", "active", "archived"}, "facts": {"active", "confirmed", "archived"}} {
		m, isMap := st[group].(map[string]any)
		if !isMap {
			t.Fatalf("status --json %s: %v", group, st[group])
		}
		for _, k := range keys {
			if _, has := m[k]; !has {
				t.Errorf("status --json %s lacks %q (a zero count is still a count): %v", group, k, m)
			}
		}
	}
	d := decodeJSON(t, ok(t, "decayed", "--json", "--db", path))
	events, _ := d["events"].([]any)
	edges := 0
	for _, e := range events {
		ev := e.(map[string]any)
		switch id := ev["subject_id"].(type) {
		case []any:
			if ev["subject_kind"] != "edge" || len(id) != 2 {
				t.Errorf("subject_id %v of a %v", id, ev["subject_kind"])
			}
			edges++
		case string:
			if ev["subject_kind"] == "edge" {
				t.Errorf("an edge's subject_id is the string %q, want an array", id)
			}
		default:
			t.Errorf("subject_id %v (%T)", id, id)
		}
	}
	if edges == 0 {
		t.Errorf("the demo's event log shows no edge: %v", events)
	}
}
