package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/golden"
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

// mwAt runs memworker in-process with its wall clock stopped at now.
func mwAt(t *testing.T, now time.Time, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	app := newApp(&out, &errb, func() time.Time { return now })
	code := exitStatus(app.RunContext(context.Background(), append([]string{"memworker"}, args...)), &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// okAt is a runner of memworker in-process with its wall clock stopped at
// now, failing the test unless it exits 0.
func okAt(t *testing.T, now time.Time) func(args ...string) result {
	return func(args ...string) result {
		t.Helper()
		r := mwAt(t, now, args...)
		if r.code != exitOK {
			t.Fatalf("memworker %s: %v", strings.Join(args, " "), r)
		}
		return r
	}
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

// reportKeys are the keys docs/sweep.md, the report requires in a sweep report.
var reportKeys = []string{"sweep_id", "dry_run", "clock_hours", "archived", "edges_pruned", "edges_decayed",
	"edges_deferred", "total_edges_after", "reinforced", "constitutional_reinforced", "policies", "facts",
	"invalid_rows", "decayed_sample", "duration_ms", "summary"}

// wantReport checks a sweep report for every docs/sweep.md, the report key and shape.
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

// --- golden files ----------------------------------------------------------

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what the commands print")

// goldenWall is the wall clock of the golden tests.
var goldenWall = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// goldenDB runs the demo into dir/name, then moves its wall-clock times
// (whole days before the demo ran) to as many days before goldenWall, so
// fact scores, wall-clock policies and event ages read the same every run.
func goldenDB(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	ok(t, "demo", "--db", path)
	for _, col := range []struct{ table, column string }{
		{"mem_facts", "last_accessed_at"}, {"mem_facts", "created_at"}, {"mem_edges", "last_observed_at"}, {"mem_event_log", "at"},
		{"mem_archive_mem_edges", "mem_at"}, {"mem_archive_mem_blocks", "mem_at"}, {"mem_archive_mem_facts", "mem_at"},
	} {
		exec1(t, path, fmt.Sprintf("UPDATE %[1]s SET %[2]s = ? - CAST(round((? - %[2]s) / 86400.0) AS INTEGER) * 86400 WHERE %[2]s IS NOT NULL",
			col.table, col.column), goldenWall.Unix(), time.Now().Unix())
	}
	return path
}

// transcript records memworker commands and what they printed, for
// comparison with a golden file.
type transcript struct {
	t   *testing.T
	dir string // the test's files live here; the golden file says $DIR
	out strings.Builder
}

func newTranscript(t *testing.T) *transcript {
	return &transcript{t: t, dir: t.TempDir()}
}

// run runs memworker at goldenWall, wants exit 0 and records the command
// line, its stdout and any stderr.
func (tr *transcript) run(args ...string) result {
	tr.t.Helper()
	r := mwAt(tr.t, goldenWall, args...)
	if r.code != exitOK {
		tr.t.Fatalf("memworker %s: want exit 0, got %v", strings.Join(args, " "), r)
	}
	fmt.Fprintf(&tr.out, "$ memworker %s\n%s", strings.Join(args, " "), r.stdout)
	if r.stderr != "" {
		fmt.Fprintf(&tr.out, "[stderr]\n%s", r.stderr)
	}
	return r
}

// wallDates are the wall-clock dates a transcript prints (a demo sweeps
// at the machine's time).
var wallDates = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)

// normalise masks what differs from run to run: the temporary directory
// and the machine's date.
func (tr *transcript) normalise() string {
	return wallDates.ReplaceAllLiteralString(strings.ReplaceAll(tr.out.String(), tr.dir, "$DIR"), "$WALL")
}

// check compares the transcript with testdata/name.golden, or rewrites that
// file under -update.
func (tr *transcript) check(name string) {
	tr.t.Helper()
	golden.Check(tr.t, filepath.Join("testdata", name+".golden"), tr.normalise(), *update, true,
		"go test ./cmd/memworker -run Golden -update")
}
