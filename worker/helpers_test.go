package worker_test

// Helpers every test file of the package uses: making, opening and
// sweeping memory files, reading and checking their rows, hashing files.
// They only read and write rows; no decay formula lives here. The other
// helper files, by subject: helpers_events_test.go (events and reports),
// helpers_fixtures_test.go (fixed clocks, hand-made fixtures, the fact
// formula) and helpers_generated_test.go (big and random memories).

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

// createMemory creates a migrated memory database at path, runs the
// fixture SQL in it and returns it open for writing; the caller closes it.
func createMemory(t *testing.T, path, fixture string) *worker.DB {
	t.Helper()
	db, err := worker.Open(path, worker.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Up(db.SQL); err != nil {
		db.Close()
		t.Fatal(err)
	}
	if fixture != "" {
		if _, err := db.SQL.Exec(fixture); err != nil {
			db.Close()
			t.Fatalf("fixture: %v", err)
		}
	}
	return db
}

// newMemory creates a migrated memory database in a temp dir, runs the
// fixture SQL in it and returns it open for writing, closed at cleanup.
func newMemory(t *testing.T, fixture string) (*worker.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	db := createMemory(t, path, fixture)
	t.Cleanup(func() { db.Close() })
	return db, path
}

// memoryIn creates a migrated memory at path with the fixture loaded and
// closes it.
func memoryIn(t *testing.T, path, fixture string) {
	t.Helper()
	if err := createMemory(t, path, fixture).Close(); err != nil {
		t.Fatal(err)
	}
}

// openAsWorker opens a memory the way the worker does, closed at cleanup.
func openAsWorker(t *testing.T, path string) *worker.DB {
	t.Helper()
	db, err := worker.OpenMemory(path, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openAsApp opens a file the way an app does: plain database/sql, WAL, a
// busy timeout, one connection.
func openAsApp(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// copyMemory copies a closed memory file into a fresh temp dir.
func copyMemory(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "memory.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// sweepAt sweeps at active-hours clock now.
func sweepAt(t *testing.T, db *worker.DB, now float64) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now})
	if err != nil {
		t.Fatalf("sweep at %v: %v", now, err)
	}
	expectEdgesAfter(t, db, r)
	return r
}

// expectEdgesAfter checks a sweep's edges after against the file's own
// edges (not through a mapping), for a sweep no app wrote beside: counted,
// or kept from the sweep before it (edges_kept), they are the same.
func expectEdgesAfter(t *testing.T, db *worker.DB, r *worker.Report) {
	t.Helper()
	if r.DryRun {
		return
	}
	var edges, mapped int64
	if err := db.SQL.QueryRow(`SELECT (SELECT count(*) FROM mem_edges), (SELECT count(*) FROM mem_mapping)`).Scan(&edges, &mapped); err != nil {
		t.Fatal(err)
	}
	if mapped == 0 && r.TotalEdgesAfter != edges {
		t.Errorf("sweep %d: total_edges_after %d, the file holds %d edges", r.SweepID, r.TotalEdgesAfter, edges)
	}
}

// sweepAtWall sweeps at active-hours clock now and wall clock wall.
func sweepAtWall(t *testing.T, db *worker.DB, now float64, wall time.Time) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &wall})
	if err != nil {
		t.Fatalf("sweep at %v / %s: %v", now, wall.Format(time.RFC3339), err)
	}
	expectEdgesAfter(t, db, r)
	return r
}

// sweepWith sweeps with the options as given.
func sweepWith(t *testing.T, db *worker.DB, opt worker.SweepOptions) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, opt)
	if err != nil {
		t.Fatalf("sweep %+v: %v", opt, err)
	}
	return r
}

// dryRunAt plans a sweep at active-hours clock now without applying it.
func dryRunAt(t *testing.T, db *worker.DB, now float64) *worker.Report {
	t.Helper()
	return sweepWith(t, db, worker.SweepOptions{Now: &now, DryRun: true})
}

// sweepChunked sweeps at clock and wall, in chunks of 20 rows unless opt
// sets ChunkSize.
func sweepChunked(t *testing.T, db *worker.DB, clock float64, wall time.Time, opt worker.SweepOptions) *worker.Report {
	t.Helper()
	opt.Now, opt.WallNow = &clock, &wall
	opt.ChunkSize = cmp.Or(opt.ChunkSize, 20)
	r, err := worker.Sweep(context.Background(), db, opt)
	if err != nil {
		t.Fatalf("sweep at %v: %v", clock, err)
	}
	return r
}

// setConfig validates and stores one mem_config setting.
func setConfig(t *testing.T, db *worker.DB, key, value string) {
	t.Helper()
	if err := worker.SetConfig(context.Background(), db.SQL, key, value); err != nil {
		t.Fatal(err)
	}
}

// loadConfig reads mem_config.
func loadConfig(t *testing.T, db *worker.DB) worker.Config {
	t.Helper()
	c, err := worker.LoadConfig(context.Background(), db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustExec runs a statement, failing the test on error.
func mustExec(t *testing.T, db *worker.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.SQL.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// scalar reads the single value a query returns.
func scalar[T any](t *testing.T, db *worker.DB, query string, args ...any) T {
	t.Helper()
	var v T
	if err := db.SQL.QueryRow(query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

// viewSet lists the edges ("from-to") of a table or view.
func viewSet(t *testing.T, db *worker.DB, view string) map[string]bool {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT from_id || '-' || to_id FROM ` + view)
	if err != nil {
		t.Fatalf("%s: %v", view, err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		set[k] = true
	}
	return set
}

// edgeSet lists the remaining edges as "from-to".
func edgeSet(t *testing.T, db *worker.DB) map[string]bool {
	t.Helper()
	return viewSet(t, db, "mem_edges")
}

// expectEdges checks that every edge in keep ("from-to") is present and
// every edge in gone is absent.
func expectEdges(t *testing.T, db *worker.DB, keep, gone []string) {
	t.Helper()
	got := edgeSet(t, db)
	for _, k := range keep {
		if !got[k] {
			t.Errorf("edge %s was removed, want it kept", k)
		}
	}
	for _, k := range gone {
		if got[k] {
			t.Errorf("edge %s is still there, want it removed", k)
		}
	}
}

// blockState is what the sweep changes in a block row.
type blockState struct {
	Status         string
	Reason         sql.NullString
	Count          int64
	LastReinforced sql.NullFloat64
	Tags           int
}

// blockOf reads a block's state, failing the test when it does not exist.
func blockOf(t *testing.T, db *worker.DB, id string) blockState {
	t.Helper()
	var b blockState
	err := db.SQL.QueryRow(`SELECT status, archive_reason, reinforcement_count, last_reinforced_hours,
		(SELECT count(*) FROM mem_block_tags WHERE block_id = b.id) FROM mem_blocks b WHERE id = ?`, id).
		Scan(&b.Status, &b.Reason, &b.Count, &b.LastReinforced, &b.Tags)
	if err != nil {
		t.Fatalf("block %s: %v", id, err)
	}
	return b
}

// expectStatus checks each block's status.
func expectStatus(t *testing.T, db *worker.DB, status string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if got := blockOf(t, db, id).Status; got != status {
			t.Errorf("block %s status = %s, want %s", id, got, status)
		}
	}
}

// blockTags lists a block's tags, sorted.
func blockTags(t *testing.T, db *worker.DB, id string) []string {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT tag FROM mem_block_tags WHERE block_id = ? ORDER BY tag`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tags := []string{}
	for rows.Next() {
		var tag string
		if err := rows.Scan(&tag); err != nil {
			t.Fatal(err)
		}
		tags = append(tags, tag)
	}
	return tags
}

// edgeRow reads an edge as column → value (JSON-like: numbers as float64),
// nil when there is no such edge.
func edgeRow(t *testing.T, db *worker.DB, from, to string) map[string]any {
	t.Helper()
	var text *string
	if err := db.SQL.QueryRow(`SELECT json_object('from_id', from_id, 'to_id', to_id, 'weight', weight,
		'reinforcement_count', reinforcement_count, 'relation_type', relation_type, 'origin', origin,
		'last_active_hours', last_active_hours, 'last_observed_at', last_observed_at, 'pinned', pinned,
		'note', note, 'created_at', created_at) FROM mem_edges WHERE from_id = ? AND to_id = ?`, from, to).Scan(&text); err != nil {
		return nil
	}
	m := map[string]any{}
	if err := json.Unmarshal([]byte(*text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// factRow reads a fact row as column → value (numbers as JSON reads them
// back), nil when there is no such fact.
func factRow(t *testing.T, db *worker.DB, id string) map[string]any {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT id, segment, tier, importance, decay_rate, access_count, last_accessed_at, status,
		content, created_at FROM mem_facts WHERE id = ?`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil
	}
	m := rowMap(t, rows)
	for c, v := range m {
		if i, ok := v.(int64); ok {
			m[c] = float64(i) // as JSON reads it back
		}
	}
	return m
}

// rowMap scans the row rows is at as column → value, BLOB and TEXT as
// strings.
func rowMap(t *testing.T, rows *sql.Rows) map[string]any {
	t.Helper()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	for i, v := range rowValues(t, rows, len(cols)) {
		m[cols[i]] = v
	}
	return m
}

// rowValues scans the row rows is at, n columns, BLOB and TEXT as strings.
func rowValues(t *testing.T, rows *sql.Rows, n int) []any {
	t.Helper()
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			vals[i] = string(b)
		}
	}
	return vals
}

// excludedFlag is an edge's excluded column.
func excludedFlag(t *testing.T, db *worker.DB, from, to string) int {
	t.Helper()
	return scalar[int](t, db, `SELECT excluded FROM mem_edges WHERE from_id = ? AND to_id = ?`, from, to)
}

// viewEffective reads mem_edges_effective's effective weight for one edge
// at clock now (the view reads the clock from mem_config).
func viewEffective(t *testing.T, db *worker.DB, now float64, from, to string) float64 {
	t.Helper()
	mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'active_hours'`, now)
	return scalar[float64](t, db, `SELECT effective_weight FROM mem_edges_effective WHERE from_id = ? AND to_id = ?`, from, to)
}

// dumpTables renders every table a sweep may change except the sweep's own
// record: mem_sweeps, and mem_config's edges_counted, which names the
// newest sweep (edges_kept). For "nothing changed" comparisons.
func dumpTables(t *testing.T, db *worker.DB) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"mem_config", "mem_blocks", "mem_block_tags", "mem_edges", "mem_edge_policies", "mem_facts", "mem_events"} {
		order, where := "rowid", ""
		switch table {
		case "mem_config":
			where = "WHERE key != 'edges_counted' "
		case "mem_edges":
			order = "from_id, to_id" // no rowid
		case "mem_events":
			order = "id" // a view
		}
		cols, body := dumpRows(t, db, `SELECT * FROM `+table+` `+where+`ORDER BY `+order)
		fmt.Fprintf(&b, "%s %v\n%s", table, cols, body)
	}
	return b.String()
}

// dumpRows renders every row of a query, one per line, with its columns.
func dumpRows(t *testing.T, db *worker.DB, query string) (cols []string, body string) {
	t.Helper()
	rows, err := db.SQL.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ = rows.Columns()
	var b strings.Builder
	for rows.Next() {
		fmt.Fprintf(&b, "  %v\n", rowValues(t, rows, len(cols)))
	}
	return cols, b.String()
}

// integrityOK fails the test unless PRAGMA integrity_check says ok.
func integrityOK(t *testing.T, db *sql.DB) {
	t.Helper()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q, %v", res, err)
	}
}

// fileHash is the sha256 of a file, "absent" when it does not exist.
func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// emptyHash is the sha256 of an empty file.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// fileHashes hashes a database file and its WAL.
func fileHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	return map[string]string{path: fileHash(t, path), path + "-wal": fileHash(t, path+"-wal")}
}

// sameFiles fails unless no file changed. A read-only open may leave an
// empty WAL where there was none: no content, so not a change of the data.
func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	for f, h := range before {
		got := after[f]
		if got == h || (h == "absent" && got == emptyHash) {
			continue
		}
		t.Errorf("%s changed: %s -> %s", filepath.Base(f), h, got)
	}
}

// buildMemworker builds cmd/memworker (with this test binary's build tags)
// into the test's temp dir.
func buildMemworker(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "/usr/local/go/bin/go"
	}
	out := filepath.Join(t.TempDir(), "memworker")
	args := []string{"build", "-o", out}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-tags" && s.Value != "" {
				args = append(args, "-tags", s.Value)
			}
		}
	}
	cmd := exec.Command(goTool, append(args, "github.com/memdecay/memdecay/cmd/memworker")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// near reports whether got is within tol of want.
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// fmtPtr prints a nullable number as SQL shows it.
func fmtPtr(p *float64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}
