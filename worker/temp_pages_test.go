package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestTempPagesFollowTheSweep: a sweep that copies every row into its temp
// tables (a first sweep, default or bulk; --full; a dry run; one after a
// threshold changed) makes them with big pages, and an incremental one
// with SQLite's default: its dozens of temp tables hold a few rows each. Each sweep runs on a handle of its
// own with one connection, so its temp tables are still there to look at.
func TestTempPagesFollowTheSweep(t *testing.T) {
	orig := bigMemory(t, 7, 60, 600)
	later := bigClock + 50
	for _, c := range []struct {
		name  string
		first bool // sweep the copy once before (so the case is not a first sweep)
		bulk  bool
		set   string // a threshold changed after that sweep
		opt   worker.SweepOptions
		big   bool
	}{
		{name: "first", big: true},
		{name: "first bulk", bulk: true, big: true},
		{name: "incremental", first: true, big: false},
		{name: "incremental full", first: true, opt: worker.SweepOptions{Full: true}, big: true},
		{name: "incremental dry run", first: true, opt: worker.SweepOptions{DryRun: true}, big: true},
		{name: "after a threshold changed", first: true, set: "0.06", big: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := copyMemory(t, orig)
			clock, wall := bigClock, bigWall
			if c.first {
				sweepChunked(t, openAsWorker(t, path), bigClock, bigWall, worker.SweepOptions{})
				clock, wall = later, bigWall.Add(50*time.Hour)
			}
			db := openAsWorker(t, path)
			if c.set != "" {
				setConfig(t, db, "edge_prune_threshold", c.set)
			}
			db.SQL.SetMaxOpenConns(1)
			told, big := false, false
			opt := worker.WithTempPages(c.opt, func(b bool) { told, big = true, b })
			var err error
			if c.bulk {
				_, err = bulkSweep(context.Background(), db, clock, wall, opt)
			} else {
				opt.Now, opt.WallNow = &clock, &wall
				_, err = worker.Sweep(context.Background(), db, opt)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !told || big != c.big {
				t.Errorf("told %v, big pages %v, want %v", told, big, c.big)
			}
			want := 4096
			if c.big {
				want = 64 << 10
			}
			if size := scalar[int](t, db, `PRAGMA temp.page_size`); size != want {
				t.Errorf("temp.page_size %d after the sweep, want %d", size, want)
			}
		})
	}
}
