package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker"
)

// The tests run memworker in-process through run(...) and, for what only a
// real process shows (os.Exit paths, the environment), through the built
// binary. They are not parallel: urfave/cli flags are package-level values.

var binDir string

func TestMain(m *testing.M) {
	os.Unsetenv("MEMWORKER_DB")
	dir, err := os.MkdirTemp("", "memworker-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one memworker invocation produced.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// mw runs memworker in-process with args.
func mw(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"memworker"}, args...), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// ok runs memworker in-process and fails the test unless it exits 0.
func ok(t *testing.T, args ...string) result {
	t.Helper()
	r := mw(t, args...)
	if r.code != exitOK {
		t.Fatalf("memworker %s: want exit 0, got %v", strings.Join(args, " "), r)
	}
	return r
}

// wantExit fails unless r exited with code and stderr holds every fragment.
func wantExit(t *testing.T, r result, code int, fragments ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d, got %v", code, r)
	}
	for _, f := range fragments {
		if !strings.Contains(r.stderr, f) {
			t.Errorf("stderr lacks %q:\n%s", f, r.stderr)
		}
	}
}

// wantUsage fails unless r is a usage error (exit 2) with a "Try:" hint.
func wantUsage(t *testing.T, r result, fragments ...string) {
	t.Helper()
	wantExit(t, r, exitUsage, append([]string{"Try: memworker"}, fragments...)...)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds memworker once (with the test binary's build tags) and
// returns its path.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = "/usr/local/go/bin/go"
		}
		args := []string{"build", "-o", filepath.Join(binDir, "memworker")}
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "-tags" && s.Value != "" {
					args = append(args, "-tags", s.Value)
				}
			}
		}
		cmd := exec.Command(goTool, append(args, ".")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = filepath.Join(binDir, "memworker")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// bin runs the built memworker binary with args (in the test's environment).
func bin(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running memworker %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// demoDB runs `memworker demo` into a fresh file and returns its path.
func demoDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	ok(t, "demo", "--db", path)
	return path
}

// fileHash is the sha256 of a file's bytes.
func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// withDB opens an existing SQLite file directly (never creating it), runs f
// and closes it again before the next memworker invocation.
func withDB(t *testing.T, path string, f func(db *sql.DB)) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=rw&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f(db)
}

func exec1(t *testing.T, path, query string, args ...any) {
	t.Helper()
	withDB(t, path, func(db *sql.DB) {
		if _, err := db.Exec(query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	})
}

// queryRows returns every row of a query, each row's columns joined by "|".
func queryRows(t *testing.T, path, query string, args ...any) []string {
	t.Helper()
	var out []string
	withDB(t, path, func(db *sql.DB) {
		rows, err := db.Query(query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = "NULL"
				if v.Valid {
					parts[i] = v.String
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

// queryOne returns the single value of a one-row, one-column query.
func queryOne(t *testing.T, path, query string, args ...any) string {
	t.Helper()
	rows := queryRows(t, path, query, args...)
	if len(rows) != 1 {
		t.Fatalf("%s: want one row, got %q", query, rows)
	}
	return rows[0]
}

// decodeJSON parses stdout as exactly one JSON object.
func decodeJSON(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	return m
}

func wantKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks key %q: %v", what, k, m)
		}
	}
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("%s = %#v, want a number", key, m[key])
	}
	return v
}

// reportKeys are the keys SPEC §4.5 requires in a sweep report.
var reportKeys = []string{"sweep_id", "dry_run", "clock_hours", "archived", "edges_pruned", "edges_decayed",
	"edges_deferred", "total_edges_after", "reinforced", "constitutional_reinforced", "policies", "facts",
	"invalid_rows", "decayed_sample", "duration_ms", "summary"}

// wantReport checks a sweep report for every SPEC §4.5 key and shape.
func wantReport(t *testing.T, m map[string]any) {
	t.Helper()
	wantKeys(t, "report", m, reportKeys...)
	facts, ok := m["facts"].(map[string]any)
	if !ok {
		t.Fatalf("facts = %#v, want an object", m["facts"])
	}
	wantKeys(t, "report.facts", facts, "processed", "archived", "pruned", "kept", "immune")
	if _, ok := m["policies"].([]any); !ok {
		t.Errorf("policies = %#v, want an array", m["policies"])
	}
	if _, ok := m["decayed_sample"].([]any); !ok {
		t.Errorf("decayed_sample = %#v, want an array", m["decayed_sample"])
	}
	if _, ok := m["invalid_rows"].(map[string]any); !ok {
		t.Errorf("invalid_rows = %#v, want an object", m["invalid_rows"])
	}
	if s, _ := m["summary"].(string); !strings.HasPrefix(s, "Curated:") {
		t.Errorf("summary = %q, want it to start with Curated:", m["summary"])
	}
}

// --- demo ---------------------------------------------------------------

func TestDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	r := ok(t, "demo", "--db", path)
	var summary string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "Curated:") {
			summary = line
		}
	}
	if summary == "" {
		t.Fatalf("demo printed no summary line starting with Curated:\n%s", r.stdout)
	}
	for _, want := range []string{"archived", "edges decayed", "reinforced"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary %q lacks %q", summary, want)
		}
	}
	if !strings.Contains(r.stdout, path) {
		t.Errorf("demo does not name the file it wrote:\n%s", r.stdout)
	}

	// The file is a valid, migrated memory database holding one sweep.
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	v := ok(t, "migrate", "version", "--db", path)
	if !strings.HasPrefix(v.stdout, fmt.Sprintf("version %d ", latest)) {
		t.Errorf("migrate version after demo: %q, want version %d", v.stdout, latest)
	}
	if got := queryOne(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Errorf("integrity_check: %s", got)
	}
	if got := queryOne(t, path, "SELECT count(*) FROM mem_sweeps WHERE status = 'done'"); got != "1" {
		t.Errorf("demo recorded %s finished sweeps, want 1", got)
	}
	if got := queryOne(t, path, "SELECT count(*) > 0 FROM mem_blocks"); got != "1" {
		t.Error("demo loaded no blocks")
	}
	ok(t, "status", "--db", path)
}

func TestDemoRefusesAnExistingMemory(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	r := mw(t, "demo", "--db", path)
	wantExit(t, r, exitFailure, "already holds", "fresh file")
	if fileHash(t, path) != before {
		t.Error("a refused demo changed the file")
	}
}

func TestDemoRefusesANonSQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("my notes, not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mw(t, "demo", "--db", path)
	wantExit(t, r, exitFailure, "not a SQLite database")
	if b, _ := os.ReadFile(path); string(b) != "my notes, not a database\n" {
		t.Errorf("demo changed a non-SQLite file: %q", b)
	}
}

// --- migrate ------------------------------------------------------------

func TestMigrateFreshFile(t *testing.T) {
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if latest < 2 {
		t.Fatalf("schema.Latest() = %d; this test steps down one version", latest)
	}
	path := filepath.Join(t.TempDir(), "fresh.db")

	// version on a file that does not exist yet is a failure, not a create.
	wantExit(t, mw(t, "migrate", "version", "--db", path), exitFailure, "no such database file")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("migrate version created %s", path)
	}

	steps := []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "up"}, fmt.Sprintf("schema at version %d\n", latest)},
		{[]string{"migrate", "version"}, fmt.Sprintf("version %d (this memworker knows up to %d)\n", latest, latest)},
		{[]string{"migrate", "up"}, fmt.Sprintf("schema at version %d\n", latest)}, // idempotent
		{[]string{"migrate", "down"}, fmt.Sprintf("schema at version %d\n", latest-1)},
		{[]string{"migrate", "version"}, fmt.Sprintf("version %d (this memworker knows up to %d)\n", latest-1, latest)},
		{[]string{"migrate", "up"}, fmt.Sprintf("schema at version %d\n", latest)},
		{[]string{"migrate", "down", "--all"}, "schema at version 0\n"},
		{[]string{"migrate", "version"}, fmt.Sprintf("version 0 (this memworker knows up to %d)\n", latest)},
	}
	for _, s := range steps {
		r := ok(t, append(s.args, "--db", path)...)
		if r.stdout != s.want {
			t.Errorf("memworker %s: stdout %q, want %q", strings.Join(s.args, " "), r.stdout, s.want)
		}
	}
	// down --all leaves no memory table but golang-migrate's own.
	left := queryRows(t, path, `SELECT name FROM sqlite_master WHERE name LIKE 'mem\_%' ESCAPE '\'
		AND name != 'mem_schema_migrations' ORDER BY name`)
	if len(left) > 0 {
		t.Errorf("migrate down --all left %v", left)
	}
	// A schema that is not installed is reported as such by the other commands.
	wantExit(t, mw(t, "status", "--db", path), exitFailure, "not installed", "migrate up")
}

// appDB makes an app's own database: a table with rows, an index and a view.
func appDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=rwc")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, score REAL)`,
		`CREATE INDEX notes_title ON notes(title)`,
		`CREATE VIEW note_titles AS SELECT title FROM notes`,
		`INSERT INTO notes (title, body, score) VALUES ('groceries', 'eggs, milk', 1.5), ('todo', NULL, -2),
			('ideas', 'memory decay inside SQLite', 0.25)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// appDump is the app's schema objects and rows.
func appDump(t *testing.T, path string) string {
	t.Helper()
	objects := queryRows(t, path, `SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ('notes', 'note_titles') ORDER BY name`)
	rows := queryRows(t, path, `SELECT id, title, body, quote(score) FROM notes ORDER BY id`)
	return strings.Join(objects, "\n") + "\n--\n" + strings.Join(rows, "\n")
}

func TestMigrateLeavesTheAppAlone(t *testing.T) {
	path := appDB(t)
	before := appDump(t, path)
	if !strings.Contains(before, "groceries|eggs, milk|1.5") {
		t.Fatalf("fixture dump looks wrong:\n%s", before)
	}

	ok(t, "migrate", "up", "--db", path)
	if got := appDump(t, path); got != before {
		t.Errorf("migrate up changed the app's table:\n%s\nwant:\n%s", got, before)
	}
	tables := queryRows(t, path, `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'mem\_%' ESCAPE '\' ORDER BY name`)
	for _, want := range []string{"mem_blocks", "mem_edges", "mem_config", "mem_events", "mem_facts", "mem_schema_migrations", "mem_sweeps"} {
		if !strings.Contains(strings.Join(tables, " "), want) {
			t.Errorf("migrate up did not install %s (have %v)", want, tables)
		}
	}
	// The memory schema is usable in the app's file.
	ok(t, "clock", "advance", "5", "--db", path)
	ok(t, "sweep", "--db", path)

	ok(t, "migrate", "down", "--all", "--db", path)
	if got := appDump(t, path); got != before {
		t.Errorf("migrate down --all changed the app's table:\n%s\nwant:\n%s", got, before)
	}
	left := queryRows(t, path, `SELECT name FROM sqlite_master WHERE name LIKE 'mem\_%' ESCAPE '\'
		AND name != 'mem_schema_migrations'`)
	if len(left) > 0 {
		t.Errorf("migrate down --all left %v", left)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := demoDB(t)
	exec1(t, path, "UPDATE mem_schema_migrations SET version = 999")
	for _, args := range [][]string{
		{"migrate", "up"},
		{"migrate", "down"},
		{"sweep"},
		{"sweep", "--dry-run"},
		{"status"},
	} {
		before := fileHash(t, path)
		r := mw(t, append(args, "--db", path)...)
		wantExit(t, r, exitFailure, "newer", "999")
		if fileHash(t, path) != before {
			t.Errorf("memworker %s on a newer schema changed the file", strings.Join(args, " "))
		}
	}
	// version still reads it, and says how far this binary goes.
	r := ok(t, "migrate", "version", "--db", path)
	if !strings.HasPrefix(r.stdout, "version 999 ") {
		t.Errorf("migrate version: %q", r.stdout)
	}
}

// --- sweep --------------------------------------------------------------

func TestSweepHuman(t *testing.T) {
	path := demoDB(t)
	r := ok(t, "sweep", "--now", "900", "--db", path)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "Curated: ") || !strings.Contains(lines[0], "archived") {
		t.Errorf("sweep printed %q, want one summary line with archives", r.stdout)
	}
	// A second sweep at the same clock removes nothing.
	r = ok(t, "sweep", "--now", "900", "--db", path)
	for _, word := range []string{" archived", "pruned", "decayed"} {
		if strings.Contains(r.stdout, word) {
			t.Errorf("second sweep at the same clock reports %q: %s", word, r.stdout)
		}
	}
	if !strings.HasPrefix(r.stdout, "Curated: ") {
		t.Errorf("second sweep: %q", r.stdout)
	}
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

	r := ok(t, "sweep", "--dry-run", "--now", "900", "--wall-now", wall, "--db", path)
	if !strings.HasPrefix(r.stdout, "[dry run] Curated: ") {
		t.Errorf("dry run printed %q", r.stdout)
	}
	r = ok(t, "sweep", "--dry-run", "--json", "--now", "900", "--wall-now", wall, "--db", path)
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
		{"rfc3339 offset", []string{"--wall-now", offset, "--now", "0"}, 0, offsetTime.Unix()},
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

func TestNoDatabase(t *testing.T) {
	for _, args := range [][]string{
		{"sweep"}, {"status"}, {"clock", "show"}, {"clock", "advance", "1"}, {"config", "get"},
		{"decayed"}, {"migrate", "up"}, {"migrate", "version"}, {"explain", "--fact", "f"},
		{"restore", "--fact", "f"}, {"fact", "recall", "f"},
	} {
		r := mw(t, args...)
		wantUsage(t, r, "--db", "MEMWORKER_DB")
	}
}

// --- status, clock, config ----------------------------------------------

func TestStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	ok(t, "migrate", "up", "--db", path)
	m := decodeJSON(t, ok(t, "status", "--json", "--db", path))
	wantKeys(t, "status", m, "hours_since_curate", "curate_due", "blocks", "edges", "facts", "events", "last_sweep",
		"active_hours", "schema_version")
	if m["hours_since_curate"] != nil || m["last_sweep"] != nil || m["curate_due"] != true {
		t.Errorf("never swept: %v", m)
	}
	r := ok(t, "status", "--db", path)
	if !strings.Contains(r.stdout, "last sweep at never") || !strings.Contains(r.stdout, "a sweep is due") {
		t.Errorf("status of a fresh memory:\n%s", r.stdout)
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
	r = ok(t, "status", "--db", path)
	for _, want := range []string{"540.00 active hours", "(40.00 h ago)", "a sweep is due", "sweep 1", "Curated:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestClock(t *testing.T) {
	path := demoDB(t)
	if r := ok(t, "clock", "show", "--db", path); r.stdout != "500\n" {
		t.Errorf("clock show: %q", r.stdout)
	}
	if r := ok(t, "clock", "advance", "--db", path, "40"); r.stdout != "540\n" {
		t.Errorf("clock advance --db X 40: %q", r.stdout)
	}
	if r := ok(t, "clock", "advance", "40", "--db", path); r.stdout != "580\n" {
		t.Errorf("clock advance 40 --db X: %q", r.stdout)
	}
	if r := ok(t, "clock", "advance", "0.5", "--db="+path); r.stdout != "580.5\n" {
		t.Errorf("clock advance 0.5 --db=X: %q", r.stdout)
	}
	before := fileHash(t, path)
	for _, args := range [][]string{
		{"clock", "advance", "-5", "--db", path},
		{"clock", "advance", "--db", path, "-5"},
		{"clock", "advance", "abc", "--db", path},
		{"clock", "advance", "Inf", "--db", path},
		{"clock", "advance", "--db", path},
		{"clock", "advance", "1", "2", "--db", path},
	} {
		wantUsage(t, mw(t, args...), "clock advance")
	}
	// Flags written after the argument are checked too.
	wantUsage(t, mw(t, "clock", "advance", "1", "--db"), "--db needs a value")
	wantUsage(t, mw(t, "clock", "advance", "1", "--bogus", "x"), "unknown flag --bogus")
	if fileHash(t, path) != before {
		t.Error("a rejected clock advance changed the file")
	}
	if r := ok(t, "clock", "show", "--db", path); r.stdout != "580.5\n" {
		t.Errorf("clock after rejected advances: %q", r.stdout)
	}
}

// specConfigKeys are the mem_config keys SPEC §3 names.
var specConfigKeys = []string{"active_hours", "edge_prune_threshold", "edge_decay_threshold",
	"established_edge_threshold", "block_prune_threshold", "curate_interval_hours", "reinforce_top_n",
	"max_decay_fraction", "block_archival", "last_curate_at", "edges_decayed_total", "event_retention_days"}

func TestConfig(t *testing.T) {
	path := demoDB(t)
	r := ok(t, "config", "get", "--db", path)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	listed := map[string]bool{}
	for _, l := range lines {
		listed[strings.Fields(l)[0]] = true
	}
	for _, k := range specConfigKeys {
		if !listed[k] {
			t.Errorf("config get does not list %s:\n%s", k, r.stdout)
		}
	}
	for _, k := range worker.ConfigKeys {
		if !listed[k.Name()] {
			t.Errorf("config get does not list %s", k.Name())
		}
	}
	all := decodeJSON(t, ok(t, "config", "get", "--json", "--db", path))
	wantKeys(t, "config get --json", all, specConfigKeys...)

	if r := ok(t, "config", "get", "max_decay_fraction", "--db", path); strings.TrimSpace(r.stdout) != "1" && strings.TrimSpace(r.stdout) != "1.0" {
		t.Errorf("default max_decay_fraction: %q", r.stdout)
	}
	if r := ok(t, "config", "get", "block_archival", "--db", path); r.stdout != "auto\n" {
		t.Errorf("block_archival: %q", r.stdout)
	}
	if r := ok(t, "config", "set", "max_decay_fraction", "0.5", "--db", path); !strings.Contains(r.stdout, "max_decay_fraction = 0.5") {
		t.Errorf("config set: %q", r.stdout)
	}
	if r := ok(t, "config", "get", "max_decay_fraction", "--db", path); r.stdout != "0.5\n" {
		t.Errorf("max_decay_fraction after set: %q", r.stdout)
	}
	ok(t, "config", "set", "--db", path, "block_archival", "off")
	if r := ok(t, "config", "get", "block_archival", "--db", path); r.stdout != "off\n" {
		t.Errorf("block_archival after set: %q", r.stdout)
	}

	before := fileHash(t, path)
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "2", "--db", path), "max_decay_fraction", "[0, 1]")
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "-0.1", "--db", path), "[0, 1]")
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "half", "--db", path), "not a number")
	wantUsage(t, mw(t, "config", "set", "block_archival", "sometimes", "--db", path), "auto, off")
	wantUsage(t, mw(t, "config", "set", "no_such_key", "1", "--db", path), "unknown key", "max_decay_fraction")
	wantUsage(t, mw(t, "config", "get", "no_such_key", "--db", path), "unknown key")
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "--db", path), "KEY VALUE")
	wantUsage(t, mw(t, "config", "get", "a", "b", "--db", path), "config get")
	if fileHash(t, path) != before {
		t.Error("a rejected config set changed the file")
	}
	if r := ok(t, "config", "get", "max_decay_fraction", "--db", path); r.stdout != "0.5\n" {
		t.Errorf("max_decay_fraction after rejected sets: %q", r.stdout)
	}
}

// --- decayed, explain ---------------------------------------------------

func TestDecayed(t *testing.T) {
	path := demoDB(t)
	r := ok(t, "decayed", "--limit", "50", "--db", path)
	removals, soon, found := strings.Cut(r.stdout, "closest to decay:")
	if !found || !strings.HasPrefix(removals, "recent removals:") {
		t.Fatalf("decayed output:\n%s", r.stdout)
	}
	for _, want := range []string{`decay edge ["py-async","py-gil"]`, `prune edge ["db-index","ds-plots"]`,
		"archive block obs-standup", "prune fact f-parking"} {
		if !strings.Contains(removals, want) {
			t.Errorf("recent removals lack %q:\n%s", want, removals)
		}
	}
	if !strings.Contains(soon, "db-index — py-async") {
		t.Errorf("closest to decay lacks db-index — py-async:\n%s", soon)
	}

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

func TestExplainEdge(t *testing.T) {
	path := demoDB(t)
	cases := []struct {
		a, b    string
		verdict string
	}{
		{"core-values", "obs-pinned", "pinned: no sweep removes it"},
		{"goal-ship", "py-async", "agent-asserted"},
		{"ds-pandas", "ds-plots", "no session anchor"},
		{"db-wal", "ds-pandas", "invalid row"},
		{"db-index", "py-async", "survives now"},
		{"alex", "project-alpha", `follows its half_life policy`},
	}
	for _, c := range cases {
		t.Run(c.a+" "+c.b, func(t *testing.T) {
			ab := ok(t, "explain", "--edge", c.a, c.b, "--db", path)
			ba := ok(t, "explain", "--db", path, "--edge", c.b, c.a)
			if ab.stdout != ba.stdout {
				t.Errorf("the order of the ends matters:\n%s\nvs\n%s", ab.stdout, ba.stdout)
			}
			if !strings.HasPrefix(ab.stdout, "edge "+c.a+" — "+c.b) {
				t.Errorf("explain does not name the edge:\n%s", ab.stdout)
			}
			var verdict string
			for _, l := range strings.Split(ab.stdout, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "verdict"); ok {
					verdict = strings.TrimSpace(v)
				}
			}
			if !strings.Contains(verdict, c.verdict) {
				t.Errorf("verdict %q, want %q\n%s", verdict, c.verdict, ab.stdout)
			}
		})
	}

	m := decodeJSON(t, ok(t, "explain", "--edge", "py-async", "db-index", "--json", "--db", path))
	wantKeys(t, "explain --json", m, "from", "to", "tier_from", "tier_to", "weight", "lambda", "elapsed_hours",
		"effective_weight", "decay_threshold", "decays_at_hours", "verdict")
	if m["from"] != "db-index" || m["to"] != "py-async" || m["established"] != true {
		t.Errorf("explain --json: %v", m)
	}
	// Its horizon is where the next sweep takes it: just before, it survives;
	// just after, explain says it goes, and the sweep removes it.
	horizon := num(t, m, "decays_at_hours")
	if horizon <= 500 {
		t.Fatalf("decays_at_hours = %v", horizon)
	}
	ok(t, "clock", "advance", strconv.FormatFloat(horizon-500+1, 'f', 3, 64), "--db", path)
	r := ok(t, "explain", "--edge", "db-index", "py-async", "--db", path)
	if !strings.Contains(r.stdout, "decays at the next sweep") {
		t.Errorf("past its horizon:\n%s", r.stdout)
	}
	ok(t, "sweep", "--db", path)
	wantExit(t, mw(t, "explain", "--edge", "db-index", "py-async", "--db", path), exitFailure, "no edge")

	wantExit(t, mw(t, "explain", "--edge", "no-such", "block", "--db", path), exitFailure, "no edge", "memworker decayed")
}

func TestExplainStaticPrune(t *testing.T) {
	path := demoDB(t)
	ok(t, "restore", "--edge", "db-index", "ds-plots", "--db", path)
	r := ok(t, "explain", "--edge", "db-index", "ds-plots", "--db", path)
	if !strings.Contains(r.stdout, "static prune at the next sweep") {
		t.Errorf("a weak, never reinforced edge:\n%s", r.stdout)
	}
}

func TestExplainFact(t *testing.T) {
	path := demoDB(t)
	cases := []struct {
		id, want string
	}{
		{"f-tabs", "long tier"},
		{"f-name", "permanent"},
		{"f-rule", "confirmed"},
		{"f-old-lib", "archived: out of recall"},
		{"f-meeting", "short tier"},
	}
	for _, c := range cases {
		r := ok(t, "explain", "--fact", c.id, "--db", path)
		if !strings.HasPrefix(r.stdout, "fact "+c.id+" ") || !strings.Contains(r.stdout, c.want) || !strings.Contains(r.stdout, "verdict") {
			t.Errorf("explain --fact %s (want %q):\n%s", c.id, c.want, r.stdout)
		}
	}
	m := decodeJSON(t, ok(t, "explain", "--fact", "f-tabs", "--json", "--db", path))
	wantKeys(t, "explain --fact --json", m, "id", "segment", "tier", "status", "score", "action", "archive_in_days", "verdict")
	if m["action"] != "keep" || num(t, m, "archive_in_days") <= 0 {
		t.Errorf("f-tabs: %v", m)
	}
	wantExit(t, mw(t, "explain", "--fact", "f-parking", "--db", path), exitFailure, "no such fact", "restore --fact f-parking")
}

func TestExplainUsage(t *testing.T) {
	path := demoDB(t)
	for _, args := range [][]string{
		{"explain"},
		{"explain", "--edge", "a"},
		{"explain", "--edge", "a", "b", "c"},
		{"explain", "a", "b"},
		{"explain", "--fact", "f-tabs", "extra"},
		{"explain", "--edge", "a", "b", "--fact", "f-tabs"},
	} {
		wantUsage(t, mw(t, append(args, "--db", path)...), "explain")
	}
}

// --- restore, fact ------------------------------------------------------

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
		r := ok(t, "restore", "--block", c.id, "--db", path)
		if !strings.HasPrefix(r.stdout, "restored block "+c.id+" (from event #") || !strings.Contains(r.stdout, "with 1 edges") {
			t.Errorf("restore --block %s: %q", c.id, r.stdout)
		}
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
	r := ok(t, "restore", "--edge", "meme-of-day", "goal-ship", "--db", path)
	if !strings.HasPrefix(r.stdout, "restored edge goal-ship meme-of-day") {
		t.Errorf("restore --edge: %q", r.stdout)
	}
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

	r := ok(t, "restore", "--edge", "py-gil", "py-async", "--db", path)
	if !strings.HasPrefix(r.stdout, "restored edge py-async py-gil (from event #") {
		t.Errorf("restore --edge (reversed ends): %q", r.stdout)
	}
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

	r := ok(t, "restore", "--fact", "f-old-lib", "--db", path)
	if !strings.HasPrefix(r.stdout, "restored fact f-old-lib (from event #") {
		t.Errorf("restore --fact f-old-lib: %q", r.stdout)
	}
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

func TestFactFeedbackAndRecall(t *testing.T) {
	path := demoDB(t)
	row := func() (importance float64, count int64, last int64) {
		t.Helper()
		parts := strings.Split(queryOne(t, path, "SELECT importance, access_count, last_accessed_at FROM mem_facts WHERE id = 'f-tabs'"), "|")
		importance, _ = strconv.ParseFloat(parts[0], 64)
		count, _ = strconv.ParseInt(parts[1], 10, 64)
		last, _ = strconv.ParseInt(parts[2], 10, 64)
		return
	}
	imp0, count0, last0 := row()
	if time.Now().Unix()-last0 < 86400 {
		t.Fatalf("fixture: f-tabs was accessed %d s ago; want days", time.Now().Unix()-last0)
	}

	r := ok(t, "fact", "feedback", "f-tabs", "up", "--db", path)
	if !strings.HasPrefix(r.stdout, "fact f-tabs: up;") || !strings.Contains(r.stdout, "decay clock reset") {
		t.Errorf("feedback up: %q", r.stdout)
	}
	imp1, count1, last1 := row()
	if diff := imp1 - imp0; diff < 0.0499 || diff > 0.0501 || count1 != count0+1 || time.Now().Unix()-last1 > 60 {
		t.Errorf("after up: importance %v→%v, count %d→%d, last access %d→%d", imp0, imp1, count0, count1, last0, last1)
	}

	m := decodeJSON(t, ok(t, "fact", "feedback", "f-tabs", "down", "--json", "--db", path))
	wantKeys(t, "feedback --json", m, "id", "importance_before", "importance_after", "access_count_after", "clock_reset")
	imp2, count2, last2 := row()
	if diff := imp1 - imp2; diff < 0.0999 || diff > 0.1001 || count2 != count1 || last2 != last1 || m["clock_reset"] != false {
		t.Errorf("after down: importance %v→%v, count %d→%d, last access %d→%d, %v", imp1, imp2, count1, count2, last1, last2, m)
	}

	r = ok(t, "fact", "recall", "f-tabs", "--db", path)
	if !strings.HasPrefix(r.stdout, "fact f-tabs: recall;") {
		t.Errorf("recall: %q", r.stdout)
	}
	imp3, count3, _ := row()
	if imp3 != imp2 || count3 != count2+1 {
		t.Errorf("after recall: importance %v→%v, count %d→%d", imp2, imp3, count2, count3)
	}
	events := queryOne(t, path, "SELECT count(*) FROM mem_events WHERE subject_kind = 'fact' AND subject_id = 'f-tabs' AND action IN ('feedback', 'recall')")
	if events != "3" {
		t.Errorf("%s feedback/recall events, want 3", events)
	}

	before := fileHash(t, path)
	for _, args := range [][]string{{"fact", "recall", "--auto", "f-tabs"}, {"fact", "recall", "f-tabs", "--auto"}} {
		r = ok(t, append(args, "--db", path)...)
		if !strings.Contains(r.stdout, "passive: nothing changed") {
			t.Errorf("auto-recall: %q", r.stdout)
		}
	}
	if fileHash(t, path) != before {
		t.Error("fact recall --auto changed the file")
	}
	if _, count4, _ := row(); count4 != count3 {
		t.Errorf("auto-recall bumped the access count %d→%d", count3, count4)
	}

	for _, args := range [][]string{
		{"fact", "feedback", "f-tabs", "sideways"},
		{"fact", "feedback", "f-tabs"},
		{"fact", "feedback", "f-tabs", "up", "extra"},
		{"fact", "recall"},
		{"fact", "recall", "a", "b"},
	} {
		wantUsage(t, mw(t, append(args, "--db", path)...), "memworker "+strings.Join(args[:2], " ")+" --help")
	}
	if fileHash(t, path) != before {
		t.Error("a rejected fact command changed the file")
	}
	wantExit(t, mw(t, "fact", "feedback", "no-such-fact", "up", "--db", path), exitFailure, "no such fact")
	wantExit(t, mw(t, "fact", "recall", "no-such-fact", "--db", path), exitFailure, "no such fact")
	wantExit(t, mw(t, "fact", "recall", "--auto", "no-such-fact", "--db", path), exitFailure, "no such fact")
	wantExit(t, mw(t, "fact", "recall", "f-typo", "--db", path), exitFailure, "archived", "restore --fact f-typo")
}

// --- help, version, unknown commands --------------------------------------

func TestHelp(t *testing.T) {
	r := ok(t, "--help")
	for _, cmd := range []string{"migrate", "sweep", "status", "clock", "config", "decayed", "explain", "restore", "fact", "demo"} {
		if !strings.Contains(r.stdout, cmd) {
			t.Errorf("top-level help lacks %s", cmd)
		}
	}
	ok(t, "help")
	for _, cmd := range [][]string{
		{"migrate"}, {"migrate", "up"}, {"migrate", "down"}, {"migrate", "version"},
		{"sweep"}, {"status"}, {"clock"}, {"clock", "show"}, {"clock", "advance"},
		{"config"}, {"config", "get"}, {"config", "set"}, {"decayed"}, {"explain"}, {"restore"},
		{"fact"}, {"fact", "feedback"}, {"fact", "recall"}, {"demo"},
	} {
		for _, h := range []string{"--help", "-h"} {
			r := mw(t, append(cmd, h)...)
			if r.code != exitOK {
				t.Errorf("memworker %s %s: %v", strings.Join(cmd, " "), h, r)
				continue
			}
			if !strings.Contains(r.stdout, "memworker "+strings.Join(cmd, " ")) || !strings.Contains(r.stdout, "--db") {
				t.Errorf("memworker %s %s printed:\n%s", strings.Join(cmd, " "), h, r.stdout)
			}
		}
	}
	r = ok(t, "sweep", "--help")
	for _, flag := range []string{"--dry-run", "--now", "--wall-now", "--json", "--chunk", "--solo-chunk", "--solo-hold"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("sweep --help lacks %s", flag)
		}
	}
}

func TestVersion(t *testing.T) {
	r := ok(t, "--version")
	if !strings.Contains(r.stdout, sqlfuncs.Version) || !strings.HasPrefix(r.stdout, "memworker version ") {
		t.Errorf("--version: %q, want the version %s", r.stdout, sqlfuncs.Version)
	}
}

func TestUnknownFlag(t *testing.T) {
	wantUsage(t, mw(t, "--bogus"), "bogus")
	wantUsage(t, mw(t, "status", "--bogus"), "bogus", "status --help")
}

// --- the built binary -----------------------------------------------------

func TestBinaryEndToEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	r := bin(t, "demo", "--db", path)
	if r.code != 0 || !strings.Contains(r.stdout, "\nCurated: ") {
		t.Fatalf("demo: %v", r)
	}
	r = bin(t, "sweep", "--json", "--now", "900", "--db", path)
	if r.code != 0 {
		t.Fatalf("sweep --json: %v", r)
	}
	wantReport(t, decodeJSON(t, r))

	r = bin(t, "--version")
	if r.code != 0 || !strings.Contains(r.stdout, sqlfuncs.Version) {
		t.Errorf("--version: %v", r)
	}
	r = bin(t, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "sweep") {
		t.Errorf("--help: %v", r)
	}
	r = bin(t, "no-such-command")
	wantUsage(t, r, "unknown command", "no-such-command", "memworker --help")
	r = bin(t, "sweep", "--now", "abc", "--db", path)
	wantUsage(t, r, "sweep --help")
	r = bin(t, "sweep", "--db", filepath.Join(t.TempDir(), "missing.db"))
	wantExit(t, r, exitFailure, "no such database file")
}

func TestBinaryEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	if r := bin(t, "demo", "--db", path); r.code != 0 {
		t.Fatalf("demo: %v", r)
	}
	t.Setenv("MEMWORKER_DB", path)
	r := bin(t, "status")
	if r.code != 0 || !strings.Contains(r.stdout, path) {
		t.Fatalf("status with MEMWORKER_DB: %v", r)
	}
	r = bin(t, "clock", "advance", "10")
	if r.code != 0 || r.stdout != "510\n" {
		t.Errorf("clock advance with MEMWORKER_DB: %v", r)
	}
	r = bin(t, "sweep", "--json")
	if r.code != 0 || num(t, decodeJSON(t, r), "clock_hours") != 510 {
		t.Errorf("sweep with MEMWORKER_DB: %v", r)
	}
	// --db wins over the environment.
	t.Setenv("MEMWORKER_DB", filepath.Join(t.TempDir(), "missing.db"))
	r = bin(t, "clock", "show", "--db", path)
	if r.code != 0 || r.stdout != "510\n" {
		t.Errorf("--db over MEMWORKER_DB: %v", r)
	}
	r = bin(t, "clock", "show")
	wantExit(t, r, exitFailure, "no such database file")
	// An empty MEMWORKER_DB is no database.
	t.Setenv("MEMWORKER_DB", "")
	wantUsage(t, bin(t, "status"), "MEMWORKER_DB")
}
