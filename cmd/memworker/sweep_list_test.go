package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listed is sweep --dry-run --list --json's list: each row as
// "kind subject action reason" (as the sweep's events name them), the
// reinforcements left out, sorted; and the rows themselves.
func listed(t *testing.T, r result) ([]string, []map[string]any) {
	t.Helper()
	m := decodeJSON(t, r)
	wantReport(t, m)
	planned, ok := m["planned"].([]any)
	if !ok {
		t.Fatalf("planned = %#v, want an array", m["planned"])
	}
	var names []string
	var rows []map[string]any
	for _, p := range planned {
		row := p.(map[string]any)
		wantKeys(t, "a planned row", row, "table", "kind", "key", "key_columns", "subject", "action", "reason")
		rows = append(rows, row)
		if row["action"] != "reinforce" {
			names = append(names, fmt.Sprintf("%v %v %v %v", row["kind"], row["subject"], row["action"], row["reason"]))
		}
	}
	slices.Sort(names)
	return names, rows
}

// sweptEvents names the events of the last sweep as listed names rows.
func sweptEvents(t *testing.T, path string) []string {
	t.Helper()
	return queryRows(t, path, `SELECT subject_kind || ' ' || subject_id || ' ' || action || ' ' || reason FROM mem_events
		WHERE sweep_id = (SELECT max(id) FROM mem_sweeps) AND action != 'remove_row' ORDER BY 1`)
}

// listLines are the lines of sweep --dry-run --list after the summary,
// but the invalid rows' (indented).
func listLines(r result) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")[1:] {
		if !strings.HasPrefix(l, "  ") {
			out = append(out, l)
		}
	}
	return out
}

func TestSweepListNeedsDryRun(t *testing.T) {
	path := demoDB(t)
	wantUsage(t, mw(t, "sweep", "--list", "--db", path), "--list", "--dry-run")
	wantUsage(t, mw(t, "sweep", "--list", "--json", "--db", path), "--list", "--dry-run")
}

// TestSweepListOwnTables: on the demo's memory, --list prints a line per
// row the sweep then changes, --json the same rows; the file is unchanged
// until the sweep, whose events are the rows listed.
func TestSweepListOwnTables(t *testing.T) {
	path := demoDB(t)
	clocks := []string{"--now", "900", "--wall-now", strconv.FormatInt(time.Now().Add(400*24*time.Hour).Unix(), 10), "--db", path}
	before := fileHash(t, path)
	text := ok(t, append([]string{"sweep", "--dry-run", "--list"}, clocks...)...)
	js := ok(t, append([]string{"sweep", "--dry-run", "--list", "--json"}, clocks...)...)
	if fileHash(t, path) != before {
		t.Fatal("sweep --dry-run --list changed the file")
	}
	names, rows := listed(t, js)
	lines := listLines(text)
	if !strings.HasPrefix(text.stdout, "[dry run] Curated: ") || len(lines) != len(rows) || len(rows) == 0 {
		t.Fatalf("%d lines for %d rows:\n%s", len(lines), len(rows), text.stdout)
	}
	for i, row := range rows {
		if want := fmt.Sprintf("%v %v ", row["action"], row["kind"]); !strings.HasPrefix(lines[i], want) ||
			!strings.Contains(lines[i], fmt.Sprintf("(%v) %v", row["table"], row["reason"])) {
			t.Errorf("line %q for %v", lines[i], row)
		}
	}
	for _, want := range []string{
		"archive block alex (mem_blocks) decayed tier=standard lambda=0.01 elapsed=430h recency=0.01357 threshold=0.05 degree=2",
		"delete edge alex — project-alpha (mem_edges) block_archived block=alex weight=1 count=0",
		"reinforce block core-values (mem_blocks) constitutional",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q in\n%s", want, strings.Join(lines, "\n"))
		}
	}
	ok(t, append([]string{"sweep"}, clocks...)...)
	if got := sweptEvents(t, path); !slices.Equal(got, names) {
		t.Errorf("listed\n%s\nthe sweep's events\n%s", strings.Join(names, "\n"), strings.Join(got, "\n"))
	}
	// Nothing is left at the clock swept: an empty list, still a list.
	_, rows = listed(t, ok(t, append([]string{"sweep", "--dry-run", "--list", "--json"}, clocks...)...))
	if len(rows) != 0 {
		t.Errorf("after the sweep, listed %v", rows)
	}
}

// TestSweepListMapped: through a mapping the list names the app's tables
// and keys; a link the app's foreign key holds is not listed, a link
// either side of the prune threshold is and is not; the sweep then does
// what the list says.
func TestSweepListMapped(t *testing.T) {
	db, file := appDBWithMapping(t, t.TempDir())
	ok(t, "map", "load", file, "--db", db)
	// Links 1 (2026-01-05) and 2 (2025) decay, 2 held by link_notes; 3 (0.09) is
	// pruned, 4 (0.11) kept; memory 4, faded long ago, is archived with
	// link 5.
	exec1(t, db, `CREATE TABLE link_notes (link_id INTEGER REFERENCES links (id) ON DELETE RESTRICT, body TEXT);
		UPDATE memories SET last_used_at = '2026-06-01T00:00:00Z' WHERE id = 1;
		UPDATE links SET touched_at = '2025-01-01T00:00:00Z' WHERE id = 2;
		INSERT INTO memories (body, kind, tags, last_used_at) VALUES ('c', 'note', '[]', '2026-06-01T00:00:00Z'),
			('d', 'note', '[]', '2025-01-01T00:00:00Z');
		INSERT INTO links (src, dst, kind, strength, touched_at) VALUES (3, 1, 'related', 0.09, '2026-06-01T00:00:00Z'),
			(3, 2, 'related', 0.11, '2026-06-01T00:00:00Z'), (4, 3, 'related', 0.8, '2025-01-01T00:00:00Z');
		INSERT INTO link_notes VALUES (2, 'keep');`)
	clocks := []string{"--wall-now", "2026-06-01T00:00:00Z", "--db", db}
	names, rows := listed(t, ok(t, append([]string{"sweep", "--dry-run", "--list", "--json"}, clocks...)...))
	byKey := map[string]map[string]any{}
	for _, row := range rows {
		key, _ := json.Marshal(row["key"])
		byKey[fmt.Sprintf("%v %s %v", row["table"], key, row["action"])] = row
	}
	for _, k := range []string{"links [2] decay", "links [4] prune", "links [4] decay"} {
		if byKey[k] != nil {
			t.Errorf("listed %s: %v", k, byKey[k])
		}
	}
	for k, want := range map[string]string{
		"links [3] prune":      "static 0.09 0.1",
		"links [1] decay":      "temporal 0.5 0.1",
		"links [5] delete":     "block_archived 0.8 <nil>",
		"memories [4] archive": "decayed <nil> 0.05",
	} {
		row := byKey[k]
		if got := fmt.Sprintf("%v %v %v", row["reason"], row["weight"], row["threshold"]); row == nil || got != want {
			t.Errorf("%s: %v, want %s", k, row, want)
		}
	}
	if kc := byKey["links [3] prune"]["key_columns"]; fmt.Sprint(kc) != "[id]" {
		t.Errorf("key_columns %v", kc)
	}
	text := ok(t, append([]string{"sweep", "--dry-run", "--list"}, clocks...)...)
	lines := listLines(text)
	if !slices.Contains(lines, "prune edge 3 (links) static from=3 to=1 weight=0.09 threshold=0.1 count=0") ||
		!slices.Contains(lines, "archive block 4 (memories) decayed tier=standard lambda=0.01 elapsed=12384h recency=1.648e-54 threshold=0.05 degree=0.8") {
		t.Errorf("lines:\n%s", text.stdout)
	}
	if !strings.Contains(text.stdout, "skipped invalid edge of links 2: decay refused: referenced by link_notes.link_id") {
		t.Errorf("the held link is not named:\n%s", text.stdout)
	}

	ok(t, append([]string{"sweep"}, clocks...)...)
	if got := sweptEvents(t, db); !slices.Equal(got, names) {
		t.Errorf("listed\n%s\nthe sweep's events\n%s", strings.Join(names, "\n"), strings.Join(got, "\n"))
	}
	if got := queryOne(t, db, `SELECT group_concat(id) FROM (SELECT id FROM links ORDER BY id)`); got != "2,4" {
		t.Errorf("links left %s, want 2,4", got)
	}
	if got := queryOne(t, db, `SELECT state FROM memories WHERE id = 4`); got != "archived" {
		t.Errorf("memory 4 is %s", got)
	}
}
