package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSweepGolden: the human summary of a dry run, a sweep, a second sweep
// at the same clocks (it removes nothing) and a sweep of a glob.
func TestSweepGolden(t *testing.T) {
	tr := newTranscript(t)
	path := goldenDB(t, tr.dir, "m.db")
	clocks := []string{"--now", "900", "--wall-now", strconv.FormatInt(goldenWall.Add(400*24*time.Hour).Unix(), 10)}
	tr.run(append([]string{"sweep", "--dry-run", "--db", path}, clocks...)...)
	tr.run(append([]string{"sweep", "--db", path}, clocks...)...)
	tr.run(append([]string{"sweep", "--db", path}, clocks...)...)

	fleet := filepath.Join(tr.dir, "fleet")
	if err := os.Mkdir(fleet, 0o755); err != nil {
		t.Fatal(err)
	}
	goldenDB(t, fleet, "a.db")
	goldenDB(t, fleet, "b.db")
	tr.run(append([]string{"sweep", "--db", filepath.Join(fleet, "*.db")}, clocks...)...)
	tr.check("sweep")
}

func TestSweepJSON(t *testing.T) {
	path := demoDB(t)
	ok(t, "clock", "advance", "300", "--db", path)
	r := ok(t, "sweep", "--json", "--db", path)
	m := decodeJSON(t, r)
	wantReport(t, m)
	if m["dry_run"] != false {
		t.Errorf("dry_run = %v", m["dry_run"])
	}
	if id := num(t, m, "sweep_id"); id != 2 {
		t.Errorf("sweep_id = %v, want 2 (the demo's sweep was 1)", id)
	}
	if h := num(t, m, "clock_hours"); h != 800 {
		t.Errorf("clock_hours = %v, want 800 (500 + 300)", h)
	}
	// The report matches the database.
	after := queryOne(t, path, "SELECT count(*) FROM mem_edges")
	if got := strconv.FormatFloat(num(t, m, "total_edges_after"), 'f', -1, 64); got != after {
		t.Errorf("total_edges_after = %s, mem_edges holds %s", got, after)
	}
	if got := queryOne(t, path, "SELECT json_extract(result, '$.summary') FROM mem_sweeps WHERE id = 2"); got != m["summary"] {
		t.Errorf("mem_sweeps.result summary %q, report %q", got, m["summary"])
	}
}

func TestSweepDryRun(t *testing.T) {
	path := demoDB(t)
	wall := strconv.FormatInt(time.Now().Add(400*24*time.Hour).Unix(), 10)
	before := fileHash(t, path)

	ok(t, "sweep", "--dry-run", "--now", "900", "--wall-now", wall, "--db", path) // the golden file shows what it prints
	r := ok(t, "sweep", "--dry-run", "--json", "--now", "900", "--wall-now", wall, "--db", path)
	if fileHash(t, path) != before {
		t.Fatal("sweep --dry-run changed the file's bytes")
	}
	dry := decodeJSON(t, r)
	wantReport(t, dry)
	if dry["dry_run"] != true {
		t.Errorf("dry_run = %v", dry["dry_run"])
	}
	if num(t, dry, "archived") == 0 {
		t.Errorf("the fixture should have work at hour 900: %v", dry)
	}

	// The real sweep at the same clocks removes exactly what the dry run said.
	real := decodeJSON(t, ok(t, "sweep", "--json", "--now", "900", "--wall-now", wall, "--db", path))
	for _, k := range []string{"archived", "edges_pruned", "edges_decayed", "edges_deferred", "total_edges_after",
		"reinforced", "constitutional_reinforced"} {
		if dry[k] != real[k] {
			t.Errorf("%s: dry run %v, sweep %v", k, dry[k], real[k])
		}
	}
	df, rf := dry["facts"].(map[string]any), real["facts"].(map[string]any)
	for _, k := range []string{"processed", "archived", "pruned", "kept", "immune"} {
		if df[k] != rf[k] {
			t.Errorf("facts.%s: dry run %v, sweep %v", k, df[k], rf[k])
		}
	}
	if fileHash(t, path) == before {
		t.Error("the real sweep changed nothing")
	}
}

func TestSweepClocks(t *testing.T) {
	rfc := "2026-01-02T15:04:05Z"
	rfcTime, _ := time.Parse(time.RFC3339, rfc)
	offset := "2026-01-02T15:04:05+02:00"
	offsetTime, _ := time.Parse(time.RFC3339, offset)
	cases := []struct {
		name     string
		args     []string
		hours    float64
		wallTime int64
	}{
		{"now", []string{"--now", "612.5", "--wall-now", "1700000000"}, 612.5, 1700000000},
		{"unix", []string{"--wall-now", "1767366245"}, 500, 1767366245},
		{"rfc3339", []string{"--wall-now", rfc}, 500, rfcTime.Unix()},
		{"rfc3339 offset", []string{"--wall-now", offset, "--now", "0", "--force"}, 0, offsetTime.Unix()}, // behind the last sweep (500): forced
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := demoDB(t)
			m := decodeJSON(t, ok(t, append([]string{"sweep", "--json", "--db", path}, c.args...)...))
			if got := num(t, m, "clock_hours"); got != c.hours {
				t.Errorf("clock_hours = %v, want %v", got, c.hours)
			}
			if got := int64(num(t, m, "wall_time")); got != c.wallTime {
				t.Errorf("wall_time = %v, want %v", got, c.wallTime)
			}
			id := int64(num(t, m, "sweep_id"))
			if got := queryOne(t, path, "SELECT clock_hours FROM mem_sweeps WHERE id = ?", id); got != strconv.FormatFloat(c.hours, 'f', -1, 64) &&
				got != strconv.FormatFloat(c.hours, 'f', 1, 64) {
				t.Errorf("mem_sweeps.clock_hours = %s, want %v", got, c.hours)
			}
		})
	}

	// --wall-now drives the fact lifecycle: 400 days on, an unused long-tier
	// preference fades and is archived.
	path := demoDB(t)
	later := time.Now().Add(400 * 24 * time.Hour).Unix()
	m := decodeJSON(t, ok(t, "sweep", "--json", "--wall-now", strconv.FormatInt(later, 10), "--db", path))
	if facts := m["facts"].(map[string]any); facts["archived"].(float64) < 1 {
		t.Errorf("400 days later no fact was archived: %v", facts)
	}
	if got := queryOne(t, path, "SELECT status FROM mem_facts WHERE id = 'f-tabs'"); got != "archived" {
		t.Errorf("f-tabs after 400 days: %s, want archived", got)
	}
	events := queryRows(t, path, "SELECT DISTINCT at FROM mem_events WHERE sweep_id = ?", int64(num(t, m, "sweep_id")))
	if len(events) != 1 || events[0] != strconv.FormatInt(later, 10) {
		t.Errorf("the sweep's events are at %v, want [%d]", events, later)
	}
}

func TestSweepBadValues(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--now", "abc"}, "--now"},
		{[]string{"--now", "-3"}, "--now"},
		{[]string{"--now", "NaN"}, "--now"},
		{[]string{"--now", "Inf"}, "--now"},
		{[]string{"--wall-now", "yesterday"}, "--wall-now"},
		{[]string{"--wall-now", "2026-13-45"}, "--wall-now"},
		{[]string{"--chunk", "0"}, "--chunk"},
		{[]string{"--chunk", "-1"}, "--chunk"},
		{[]string{"--chunk", "many"}, "chunk"},
		{[]string{"--solo-chunk", "0"}, "--solo-chunk"},
		{[]string{"--solo-hold", "0s"}, "--solo-hold"},
		{[]string{"--solo-hold", "soon"}, "solo-hold"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--bogus"}, "bogus"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := mw(t, append([]string{"sweep", "--db", path}, c.args...)...)
			wantUsage(t, r, c.msg, "sweep --help")
			if r.stdout != "" {
				t.Errorf("a usage error printed to stdout: %q", r.stdout)
			}
		})
	}
	if fileHash(t, path) != before {
		t.Error("a rejected sweep changed the file")
	}
}

func TestSweepRefusesANonSQLiteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.db")
	content := "SQLite? no: these are my notes\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sweep"}, {"sweep", "--dry-run"}, {"migrate", "up"}, {"status"}, {"clock", "advance", "1"}} {
		r := mw(t, append(args, "--db", path)...)
		wantExit(t, r, exitFailure, "not a SQLite database")
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("the non-SQLite file changed: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files appeared beside it: %v", entries)
	}
}

func TestSweepMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.db")
	for _, args := range [][]string{{"sweep"}, {"sweep", "--dry-run"}, {"status"}, {"clock", "show"}, {"config", "get"}} {
		r := mw(t, append(args, "--db", path)...)
		wantExit(t, r, exitFailure, "no such database file")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a command created %s", path)
	}
}
