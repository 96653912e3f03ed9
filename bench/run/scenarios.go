package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

type bench struct {
	o     Options
	peers []Peer
	base  string
	work  string
	// state holds each peer's database after its first sweep, the
	// starting point of the later scenarios.
	state map[string]string
}

type scenario struct {
	key  string // for -scenarios
	name string
	// from gives the file a peer's run starts from.
	from func(p Peer) string
	// prepare changes the copy before the timed run (not timed).
	prepare func(ctx context.Context, db string) error
	// keep: the last run's result becomes the peer's state.
	keep bool
}

func (b *bench) scenarios() []scenario {
	fromState := func(p Peer) string { return b.state[p.Key] }
	return []scenario{
		{key: "first", name: "first sweep", from: func(Peer) string { return b.base }, keep: true},
		{key: "noop", name: "no-op sweep (same clock)", from: fromState},
		{key: "steady", name: fmt.Sprintf("steady state (+%d h, %d %% reinforced)", AdvanceHours, 100/ReinforceModulo), from: fromState,
			prepare: func(ctx context.Context, db string) error { return execAll(ctx, db, steadyWrites) }},
	}
}

// ScenarioResult is one row of the table.
type ScenarioResult struct {
	Name        string
	EdgesBefore int64
	Runs        map[string][]Outcome // by peer key
	Digest      string
}

// scenario runs every peer Runs times, each run on a fresh copy, then
// checks that all peers left the same edges.
func (b *bench) scenario(ctx context.Context, sc scenario) (*ScenarioResult, error) {
	r := &ScenarioResult{Name: sc.name, Runs: map[string][]Outcome{}}
	last := map[string]string{}
	for run := range b.o.Runs {
		// Rotate the order, so no peer always runs right after another's
		// copy was written.
		for i := range b.peers {
			p := b.peers[(i+run)%len(b.peers)]
			db := filepath.Join(b.work, fmt.Sprintf("%s.run%d.db", p.Key, run))
			if err := copyDB(sc.from(p), db); err != nil {
				return nil, err
			}
			if sc.prepare != nil {
				if err := sc.prepare(ctx, db); err != nil {
					return nil, fmt.Errorf("preparing %s's copy: %w", p.Name, err)
				}
			}
			if p.prepare != nil {
				if err := p.prepare(ctx, db); err != nil {
					return nil, fmt.Errorf("preparing %s's copy: %w", p.Name, err)
				}
			}
			if run == 0 && i == 0 {
				n, err := countEdges(ctx, db)
				if err != nil {
					return nil, err
				}
				r.EdgesBefore = n
			}
			out, err := p.Run(ctx, db)
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
			r.Runs[p.Key] = append(r.Runs[p.Key], out)
			if prev := last[p.Key]; prev != "" {
				removeDB(prev)
			}
			last[p.Key] = db
		}
	}
	// Every peer's last run must leave the same edges, row for row.
	digests := map[string]string{}
	for _, p := range b.peers {
		d, n, err := edgeDigest(ctx, last[p.Key])
		if err != nil {
			return r, fmt.Errorf("digest of %s's copy: %w", p.Name, err)
		}
		digests[p.Key] = fmt.Sprintf("%d edges, sha256 %s", n, d)
		r.Digest = "sha256 " + d
	}
	for _, p := range b.peers[1:] {
		if digests[p.Key] != digests[b.peers[0].Key] {
			var lines []string
			for _, q := range b.peers {
				lines = append(lines, fmt.Sprintf("  %-17s %s", q.Name, digests[q.Key]))
			}
			return r, fmt.Errorf("THE PEERS DISAGREE: surviving edges differ\n%s", strings.Join(lines, "\n"))
		}
	}
	logf("  all peers agree: %s", digests[b.peers[0].Key])
	for _, p := range b.peers {
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
	var n int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM mem_edges").Scan(&n)
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
	rows, err := db.QueryContext(ctx, `SELECT from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned
		FROM mem_edges ORDER BY from_id, to_id`)
	if err != nil {
		return "", 0, err
	}
	defer rows.Close()
	h := sha256.New()
	var n int64
	buf := make([]byte, 0, 128)
	for rows.Next() {
		var from, to, origin string
		var weight float64
		var count, pinned int64
		var anchor sql.NullFloat64
		if err := rows.Scan(&from, &to, &weight, &count, &origin, &anchor, &pinned); err != nil {
			return "", 0, err
		}
		buf = buf[:0]
		buf = append(buf, from...)
		buf = append(buf, '|')
		buf = append(buf, to...)
		buf = append(buf, '|')
		buf = strconv.AppendFloat(buf, weight, 'g', -1, 64)
		buf = append(buf, '|')
		buf = strconv.AppendInt(buf, count, 10)
		buf = append(buf, '|')
		buf = append(buf, origin...)
		buf = append(buf, '|')
		if anchor.Valid {
			buf = strconv.AppendFloat(buf, anchor.Float64, 'g', -1, 64)
		} else {
			buf = append(buf, "NULL"...)
		}
		buf = append(buf, '|')
		buf = strconv.AppendInt(buf, pinned, 10)
		buf = append(buf, '\n')
		h.Write(buf)
		n++
	}
	if err := rows.Err(); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], n, nil
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
