package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// WriteInterval is how often the app beside the sweep writes.
const WriteInterval = 5 * time.Millisecond

// In the bursts scenario the app writes for BurstLength, then stays quiet
// for BurstQuiet: longer than the 2 s after which a sweep goes back to its
// bigger transactions, so each burst's first write meets one.
const (
	BurstLength = time.Second
	BurstQuiet  = 3 * time.Second
)

// WriterResult is the writer-beside-a-sweep scenario's outcome.
type WriterResult struct {
	Edges            int64
	SweepSeconds     float64
	SweepRSSKiB      int64
	MaxWAL           int64
	Writes, Failed   int
	FirstError       string
	P50, P99, Worst  time.Duration
	Inserts, Updates int
	// Bursts mode: how many bursts, and the worst of their first writes.
	Bursts     int
	FirstWorst time.Duration
}

// slowWrite is the write latency worth logging as it happens, to match it
// with what the sweep was doing (MEMWORKER_TRACE=1h prints its phases).
const slowWrite = 250 * time.Millisecond

// writerBesideSweep runs memworker's sweep on a fresh copy while an app,
// on its own connection (WAL, busy_timeout 5000), writes one edge every
// WriteInterval: alternately a new edge (or a reinforcement if the pair
// exists) and a reinforcement of an existing edge. With bursts, it writes
// only for BurstLength after each BurstQuiet. Every write must succeed;
// its latency is what the app feels of the sweep.
func (b *bench) writerBesideSweep(ctx context.Context, bursts bool) (*WriterResult, error) {
	db := filepath.Join(b.work, "writer.db")
	if err := copyDB(b.base, db); err != nil {
		return nil, err
	}
	defer removeDB(db)
	app, err := openDB(db, url.Values{"_journal_mode": {"WAL"}, "_synchronous": {"NORMAL"}})
	if err != nil {
		return nil, err
	}
	defer app.Close()
	var clock float64
	var blocks int
	if err := app.QueryRowContext(ctx, `SELECT (SELECT value FROM mem_config WHERE key = 'active_hours'),
		(SELECT count(*) FROM mem_blocks)`).Scan(&clock, &blocks); err != nil {
		return nil, err
	}
	type pair struct{ from, to string }
	var existing []pair
	rows, err := app.QueryContext(ctx, `SELECT from_id, to_id FROM (
		SELECT from_id, to_id, row_number() OVER (ORDER BY from_id, to_id) AS n FROM mem_edges) WHERE n % 97 = 0 LIMIT 20000`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p pair
		if err := rows.Scan(&p.from, &p.to); err != nil {
			rows.Close()
			return nil, err
		}
		existing = append(existing, p)
	}
	rows.Close()
	if len(existing) == 0 || blocks < 2 {
		return nil, errors.New("writer: the graph is too small")
	}
	edges, err := countEdges(ctx, db)
	if err != nil {
		return nil, err
	}
	res := &WriterResult{Edges: edges}

	var worker Peer
	for _, p := range b.peers {
		if p.Key == "worker" {
			worker = p
		}
	}
	cmd, err := worker.cmd(ctx, db)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	began := time.Now()
	stop := make(chan struct{})
	done := make(chan []time.Duration)
	go func() {
		rng := rand.New(rand.NewPCG(b.o.Seed, 5))
		var lat []time.Duration
		tick := time.NewTicker(WriteInterval)
		defer tick.Stop()
		burstEnd := time.Now() // bursts: when the current burst ends
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- lat
				return
			case <-tick.C:
			}
			first := false
			if bursts {
				now := time.Now()
				if now.After(burstEnd.Add(BurstQuiet)) {
					burstEnd, first = now.Add(BurstLength), true
					res.Bursts++
				} else if now.After(burstEnd) {
					continue
				}
			}
			start := time.Now()
			var err error
			if i%2 == 0 {
				x, y := rng.IntN(blocks), rng.IntN(blocks)
				if x == y {
					y = (y + 1) % blocks
				}
				_, err = app.ExecContext(ctx, `INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours)
					VALUES (?, ?, ?, ?) ON CONFLICT (from_id, to_id) DO UPDATE
					SET reinforcement_count = reinforcement_count + 1, last_active_hours = excluded.last_active_hours`,
					fmt.Sprintf("b%07d", min(x, y)), fmt.Sprintf("b%07d", max(x, y)), 0.2+0.8*rng.Float64(), clock)
				res.Inserts++
			} else {
				p := existing[rng.IntN(len(existing))]
				_, err = app.ExecContext(ctx, `UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1,
					last_active_hours = ? WHERE from_id = ? AND to_id = ?`, clock, p.from, p.to)
				res.Updates++
			}
			took := time.Since(start)
			lat = append(lat, took)
			if first {
				res.FirstWorst = max(res.FirstWorst, took)
			}
			if took > slowWrite {
				logf("  slow write: %s at %.1fs into the run", took.Round(time.Millisecond), start.Sub(began).Seconds())
			}
			res.Writes++
			if err != nil {
				res.Failed++
				if res.FirstError == "" {
					res.FirstError = err.Error()
				}
			}
		}
	}()
	// Let the writer get going, so the sweep starts under load.
	time.Sleep(100 * time.Millisecond)
	m, runErr := measure(cmd, db)
	res.SweepSeconds, res.SweepRSSKiB, res.MaxWAL = m.Seconds, m.PeakRSSKiB, m.MaxWAL
	time.Sleep(100 * time.Millisecond)
	close(stop)
	lat := <-done
	if runErr != nil {
		return res, fmt.Errorf("%s: %w\n%s%s", worker.Name, runErr, stdout.Bytes(), stderr.Bytes())
	}
	if os.Getenv("MEMWORKER_TRACE") != "" {
		os.Stderr.Write(stderr.Bytes()) // the sweep's phases, to set beside the slow writes
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		res.P50 = lat[n/2]
		res.P99 = lat[min(n-1, n*99/100)]
		res.Worst = lat[n-1]
	}
	logf("  sweep %.2fs beside %d writes (%d inserts, %d updates): %d failed, p50 %s, p99 %s, worst %s",
		res.SweepSeconds, res.Writes, res.Inserts, res.Updates, res.Failed, res.P50, res.P99, res.Worst)
	if bursts {
		logf("  %d bursts: first writes at most %s", res.Bursts, res.FirstWorst)
	}
	return res, nil
}
