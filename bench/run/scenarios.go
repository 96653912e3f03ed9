package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// AdvanceHours and ReinforceModulo shape the steady-state scenario: the
// clock moves on 40 active hours (curate_interval_hours' default) and one
// edge in ReinforceModulo is reinforced at the new clock.
const (
	AdvanceHours    = 40
	ReinforceModulo = 100
)

// steadyWrites are the app's writes between two sweeps, applied
// identically to every peer's copy. Edges are picked by their key, so the
// same edges are picked in every copy.
var steadyWrites = []string{
	fmt.Sprintf(`UPDATE mem_config SET value = value + %d WHERE key = 'active_hours'`, AdvanceHours),
	fmt.Sprintf(`UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1,
		last_active_hours = (SELECT value FROM mem_config WHERE key = 'active_hours')
	WHERE (CAST(substr(from_id, 2) AS INTEGER) * 7919 + CAST(substr(to_id, 2) AS INTEGER)) %% %d = 0`, ReinforceModulo),
}

// HourlyModulo shapes the hourly scenario: the clock moves on one active
// hour, and one block and one edge in HourlyModulo are used at the new
// clock (0.1 %), as an app between two hourly sweeps.
const HourlyModulo = 1000

// hourlyWrites are the app's writes between two hourly sweeps, picked by
// key as steadyWrites are.
var hourlyWrites = []string{
	`UPDATE mem_config SET value = value + 1 WHERE key = 'active_hours'`,
	fmt.Sprintf(`UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1,
		last_active_hours = (SELECT value FROM mem_config WHERE key = 'active_hours')
	WHERE (CAST(substr(from_id, 2) AS INTEGER) * 7919 + CAST(substr(to_id, 2) AS INTEGER)) %% %d = 0`, HourlyModulo),
	fmt.Sprintf(`UPDATE mem_blocks SET reinforcement_count = reinforcement_count + 1,
		last_reinforced_hours = (SELECT value FROM mem_config WHERE key = 'active_hours')
	WHERE status = 'active' AND CAST(substr(id, 2) AS INTEGER) * 7919 %% %d = 0`, HourlyModulo),
}

type bench struct {
	o     Options
	peers []Peer
	// rqlite runs the rqlite scenarios (rqlite.go), set up on demand.
	rqlite *rqliteRunner
	base   string
	work   string
	// state holds each peer's database after its first sweep, the
	// starting point of the later scenarios.
	state map[string]string
}

type scenario struct {
	key  string // for -scenarios
	name string
	// from gives the file a peer's run starts from.
	from func(p Peer) string
	// writes are the app's writes before the timed run (not timed): in
	// one transaction on a file copy, in one request through a cluster.
	writes []string
	// keep: the last run's result becomes the peer's state.
	keep bool
	// rqlite: the scenario runs memworker on a file and on an rqlite
	// cluster (rqlite.go) rather than the file benchmark's peers.
	rqlite bool
}

// scenarioKeys are the -scenarios keys, in the order they run, each with
// the key whose result it starts from.
var scenarioKeys = []struct{ key, needs string }{
	{"first", ""}, {"noop", "first"}, {"steady", "first"}, {"hourly", "first"},
	{"rqlite-first", ""}, {"rqlite-steady", "rqlite-first"},
}

// parseScenarios reads -scenarios: keys separated by commas ("none" for
// none), each known and with the scenario it starts from.
func parseScenarios(list string) (map[string]bool, error) {
	want := map[string]bool{}
	for _, k := range strings.Split(list, ",") {
		if k = strings.TrimSpace(k); k != "" && k != "none" {
			want[k] = true
		}
	}
	known := map[string]bool{}
	for _, s := range scenarioKeys {
		known[s.key] = true
		if want[s.key] && s.needs != "" && !want[s.needs] {
			return nil, fmt.Errorf("-scenarios: %s starts from %s's result; include %s", s.key, s.needs, s.needs)
		}
	}
	for k := range want {
		if !known[k] {
			return nil, fmt.Errorf("-scenarios: no scenario %q (want first, noop, steady, hourly, rqlite-first, rqlite-steady or none)", k)
		}
	}
	return want, nil
}

func (b *bench) scenarios() []scenario {
	fromState := func(p Peer) string { return b.state[p.Key] }
	steady := fmt.Sprintf("steady state (+%d h, %d %% reinforced)", AdvanceHours, 100/ReinforceModulo)
	return []scenario{
		{key: "first", name: "first sweep", from: func(Peer) string { return b.base }, keep: true},
		{key: "noop", name: "no-op sweep (same clock)", from: fromState},
		{key: "steady", name: steady, from: fromState, writes: steadyWrites},
		{key: "hourly", name: fmt.Sprintf("hourly (+1 h, %.1f %% of blocks and edges used)", 100.0/HourlyModulo), from: fromState, writes: hourlyWrites},
		{key: "rqlite-first", name: "first sweep", from: func(Peer) string { return b.base }, keep: true, rqlite: true},
		{key: "rqlite-steady", name: steady, from: fromState, writes: steadyWrites, rqlite: true},
	}
}

// ScenarioResult is one row of the table.
type ScenarioResult struct {
	Name        string
	EdgesBefore int64
	Runs        map[string][]Outcome // by peer key
	Digest      string
	Trace       *rqliteTrace // an rqlite scenario's traced sweep (-rqlite-trace)
}

// scenario runs every peer Runs times, each run on a fresh copy, then
// checks that all peers left the same edges.
func (b *bench) scenario(ctx context.Context, sc scenario) (*ScenarioResult, error) {
	r := &ScenarioResult{Name: sc.name, Runs: map[string][]Outcome{}}
	peers := b.peers
	if sc.rqlite {
		peers = b.rqlite.peers
	}
	last := map[string]string{}
	for run := range b.o.Runs {
		// Rotate the order, so no peer always runs right after another's
		// copy was written.
		for i := range peers {
			p := peers[(i+run)%len(peers)]
			db := filepath.Join(b.work, fmt.Sprintf("%s.run%d.db", p.Key, run))
			if err := copyDB(sc.from(p), db); err != nil {
				return nil, err
			}
			if len(sc.writes) > 0 && p.runWith == nil {
				if err := execAll(ctx, db, sc.writes); err != nil {
					return nil, fmt.Errorf("preparing %s's copy: %w", p.Name, err)
				}
			}
			if p.prepare != nil {
				if err := p.prepare(ctx, db); err != nil {
					return nil, fmt.Errorf("preparing %s's copy: %w", p.Name, err)
				}
			}
			// Whatever the copy, its writes and the peer before left to
			// write back is written now, not during the timed run.
			syscall.Sync()
			if run == 0 && i == 0 {
				n, err := countEdges(ctx, db)
				if err != nil {
					return nil, err
				}
				r.EdgesBefore = n
			}
			var out Outcome
			var err error
			if p.runWith != nil {
				out, err = p.runWith(ctx, db, sc.writes)
			} else {
				out, err = p.Run(ctx, db)
			}
			if err != nil {
				return r, err
			}
			if p.Worker && (out.Archived != 0 || out.WithBlocks != 0) {
				return r, fmt.Errorf("%s archived %d blocks (%d edges with them): the generated graph must not age "+
					"blocks out, or the peers (which only prune and decay edges) cannot agree", p.Name, out.Archived, out.WithBlocks)
			}
			logf("  %-17s run %d: %7.2fs  rss %5.0f MB  wal %5.0f MB  file %.1f -> %.1f MB  pruned %d, decayed %d, %d left",
				p.Name, run+1, out.Seconds, float64(out.MaxRSSKiB)/1024, float64(out.MaxWAL)/(1<<20),
				float64(out.FileBefore)/(1<<20), float64(out.FileAfter)/(1<<20), out.Pruned, out.Decayed, out.After)
			if prev := r.Runs[p.Key]; out.Digest != "" && len(prev) > 0 && prev[0].Digest != out.Digest {
				return r, fmt.Errorf("THE RUNS DISAGREE: %s left sha256 %s in run 1 and %s in run %d", p.Name, prev[0].Digest, out.Digest, run+1)
			}
			r.Runs[p.Key] = append(r.Runs[p.Key], out)
			if prev := last[p.Key]; prev != "" {
				removeDB(prev)
			}
			last[p.Key] = db
		}
	}
	// Every peer's last run must leave the same edges, row for row.
	digests := map[string]string{}
	for _, p := range peers {
		d, n, err := edgeDigest(ctx, last[p.Key])
		if err != nil {
			return r, fmt.Errorf("digest of %s's copy: %w", p.Name, err)
		}
		digests[p.Key] = fmt.Sprintf("%d edges, sha256 %s", n, d)
		r.Digest = "sha256 " + d
	}
	for _, p := range peers[1:] {
		if digests[p.Key] != digests[peers[0].Key] {
			var lines []string
			for _, q := range peers {
				lines = append(lines, fmt.Sprintf("  %-17s %s", q.Name, digests[q.Key]))
			}
			return r, fmt.Errorf("THE PEERS DISAGREE: surviving edges differ\n%s", strings.Join(lines, "\n"))
		}
	}
	logf("  all peers agree: %s", digests[peers[0].Key])
	for _, p := range peers {
		if sc.keep {
			if b.state == nil {
				b.state = map[string]string{}
			}
			state := filepath.Join(b.work, p.Key+".state.db")
			if err := moveDB(last[p.Key], state); err != nil {
				return r, err
			}
			b.state[p.Key] = state
		} else {
			removeDB(last[p.Key])
		}
	}
	return r, nil
}

// openDB opens a database file with mattn's driver (no memdecay functions:
// what an app without the extension has).
func openDB(path string, extra url.Values) (*sql.DB, error) {
	q := url.Values{"_busy_timeout": {"5000"}}
	for k, v := range extra {
		q[k] = v
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, db.Ping()
}

func execAll(ctx context.Context, path string, stmts []string) error {
	db, err := openDB(path, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.Close()
}

func countEdges(ctx context.Context, path string) (int64, error) {
	db, err := openDB(path, nil)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	table, err := edgeTable(ctx, db)
	if err != nil {
		return 0, err
	}
	var n int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	return n, err
}

// edgeDigest hashes every surviving edge with the columns the rules read,
// in key order.
func edgeDigest(ctx context.Context, path string) (string, int64, error) {
	db, err := openDB(path, nil)
	if err != nil {
		return "", 0, err
	}
	defer db.Close()
	table, err := edgeTable(ctx, db)
	if err != nil {
		return "", 0, err
	}
	rows, err := db.QueryContext(ctx, `SELECT from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned
		FROM `+table+` ORDER BY from_id, to_id`)
	if err != nil {
		return "", 0, err
	}
	defer rows.Close()
	var h edgeHasher
	for rows.Next() {
		var e edgeRow
		if err := rows.Scan(&e.from, &e.to, &e.weight, &e.count, &e.origin, &e.anchor, &e.pinned); err != nil {
			return "", 0, err
		}
		h.add(e)
	}
	if err := rows.Err(); err != nil {
		return "", 0, err
	}
	return h.sum(), h.n, nil
}

// edgeRow is what the digest covers of an edge.
type edgeRow struct {
	from, to, origin string
	weight           float64
	count, pinned    int64
	anchor           sql.NullFloat64
}

// edgeHasher is the ordered SHA-256 of edges fed to it one at a time.
type edgeHasher struct {
	h   hash.Hash
	n   int64
	buf []byte
}

func (d *edgeHasher) add(e edgeRow) {
	if d.h == nil {
		d.h = sha256.New()
	}
	buf := d.buf[:0]
	buf = append(buf, e.from...)
	buf = append(buf, '|')
	buf = append(buf, e.to...)
	buf = append(buf, '|')
	buf = strconv.AppendFloat(buf, e.weight, 'g', -1, 64)
	buf = append(buf, '|')
	buf = strconv.AppendInt(buf, e.count, 10)
	buf = append(buf, '|')
	buf = append(buf, e.origin...)
	buf = append(buf, '|')
	if e.anchor.Valid {
		buf = strconv.AppendFloat(buf, e.anchor.Float64, 'g', -1, 64)
	} else {
		buf = append(buf, "NULL"...)
	}
	buf = append(buf, '|')
	buf = strconv.AppendInt(buf, e.pinned, 10)
	buf = append(buf, '\n')
	d.h.Write(buf)
	d.buf = buf
	d.n++
}

// addValues adds a row of decoded JSON values (from_id, to_id, weight,
// reinforcement_count, origin, last_active_hours, pinned), as a node
// answers: numbers as int64 or float64, NULL as nil.
func (d *edgeHasher) addValues(row []any) error {
	if len(row) != 7 {
		return fmt.Errorf("an edge row of %d columns, want 7", len(row))
	}
	var e edgeRow
	var ok [7]bool
	e.from, ok[0] = row[0].(string)
	e.to, ok[1] = row[1].(string)
	e.weight, ok[2] = number(row[2])
	var count, pinned float64
	count, ok[3] = number(row[3])
	e.origin, ok[4] = row[4].(string)
	if ok[5] = row[5] == nil; !ok[5] {
		e.anchor.Float64, ok[5] = number(row[5])
		e.anchor.Valid = true
	}
	pinned, ok[6] = number(row[6])
	for i, good := range ok {
		if !good {
			return fmt.Errorf("an edge row's column %d is %T %v", i+1, row[i], row[i])
		}
	}
	e.count, e.pinned = int64(count), int64(pinned)
	d.add(e)
	return nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func (d *edgeHasher) sum() string {
	if d.h == nil {
		d.h = sha256.New()
	}
	return hex.EncodeToString(d.h.Sum(nil))[:16]
}

var dbSuffixes = []string{"", "-wal", "-shm", "-journal"}

// copyDB copies a database file (and its WAL, when one was left) and syncs
// the copy, so the timed run does not share the disk with its write-back.
func copyDB(src, dst string) error {
	removeDB(dst)
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(src+suffix, dst+suffix); err != nil {
			if suffix != "" && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func moveDB(src, dst string) error {
	removeDB(dst)
	for _, suffix := range dbSuffixes {
		if err := os.Rename(src+suffix, dst+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func removeDB(path string) {
	for _, suffix := range dbSuffixes {
		os.Remove(path + suffix)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
