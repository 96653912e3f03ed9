package main

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// --wall-now takes the forms the wall-clock columns take, read by the same
// parser: unix seconds, RFC 3339, SQLite's datetime text (UTC).
func TestWallNowForms(t *testing.T) {
	want := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, s := range []string{"1767366245", "2026-01-02T15:04:05Z", "2026-01-02 15:04:05", "2026-01-02T17:04:05+02:00", "2026-01-02T15:04:05.000"} {
		got, err := parseWallTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseWallTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"2026-01-02 15:04:05.25", "1767366245.25"} {
		if got, err := parseWallTime(s); err != nil || math.Abs(got.Sub(want).Seconds()-0.25) > 1e-6 {
			t.Errorf("fractional seconds %q: %v, %v", s, got, err)
		}
	}
	path := demoDB(t)
	for _, bad := range []string{"yesterday", "2026-02-30 10:00:00", " 2026-01-02"} {
		r := mw(t, "sweep", "--dry-run", "--wall-now", bad, "--db", path)
		wantUsage(t, r, "--wall-now", "ISO-8601")
		if !strings.Contains(r.stderr, bad) {
			t.Errorf("the error for --wall-now %q does not name it: %s", bad, r.stderr)
		}
	}
	ok(t, "sweep", "--dry-run", "--wall-now", "2026-01-02 15:04:05", "--db", path)
}

// Every chunked step a sweep reports has a label, numbered in order: a
// full sweep of the demo and a resumed one reach them all.
func TestStepLabels(t *testing.T) {
	path := demoDB(t)
	ok(t, "clock", "advance", "2000", "--db", path)
	db, err := worker.OpenMemory(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := map[string]bool{}
	_, err = worker.Sweep(context.Background(), db, worker.SweepOptions{Full: true, ChunkSize: 1,
		Progress: func(step string, done, total int64) { seen[step] = true }})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 4 {
		t.Errorf("a full sweep reported only the steps %v", seen)
	}
	if !seen["sweep_edges"] {
		t.Errorf("a full sweep reported no sweep_edges step (storing due times): %v", seen)
	}
	for step := range seen {
		label := stepLabel(step)
		if label == step || !strings.HasPrefix(label, "step ") || strings.Contains(label, "_") {
			t.Errorf("step %s has no label (%q)", step, label)
		}
	}
}

// sweep --verbose prints the detail block under the summary, as the demo
// does; without it, only the summary and the invalid-row sample.
func TestSweepVerbose(t *testing.T) {
	path := demoDB(t)
	ok(t, "clock", "advance", "400", "--db", path)
	plain := ok(t, "sweep", "--dry-run", "--db", path).stdout
	verbose := ok(t, "sweep", "--dry-run", "--verbose", "--db", path).stdout
	if !strings.HasPrefix(verbose, strings.SplitN(plain, "\n", 2)[0]+"\n") {
		t.Errorf("--verbose changed the summary line:\n%s\nvs\n%s", verbose, plain)
	}
	for _, want := range []string{"  clock                      900.00 active hours (h), wall ", "  edges pruned (static)", "  edges decayed (temporal)",
		"  policy works_on ", "  facts                      "} {
		if !strings.Contains(verbose, want) {
			t.Errorf("sweep --verbose lacks %q:\n%s", want, verbose)
		}
		if strings.Contains(plain, want) {
			t.Errorf("sweep without --verbose prints %q", want)
		}
	}
}

// One duration grammar: flags take 30m, 4h, 2d (and Go's 100ms, 1h30m),
// as policies do; duration settings store the number in their unit.
func TestDurationGrammar(t *testing.T) {
	for in, want := range map[string]time.Duration{"2d": 48 * time.Hour, "1.5d": 36 * time.Hour, "4h": 4 * time.Hour, "30m": 30 * time.Minute,
		"100ms": 100 * time.Millisecond, "1h30m": 90 * time.Minute} {
		var d duration
		if err := d.Set(in); err != nil || d.d != want {
			t.Errorf("duration %q = %v, %v; want %v", in, d.d, err, want)
		}
	}
	for _, bad := range []string{"2x", "d", "-1d", "1e9d", ""} {
		var d duration
		if err := d.Set(bad); err == nil {
			t.Errorf("duration %q accepted as %v", bad, d.d)
		}
	}
	wantUsage(t, mw(t, "run", "--every", "2x", "--db", "x.db"), `"2x" is not a duration`)
	wantUsage(t, mw(t, "run", "--every=-1h", "--db", "x.db"), `"-1h" is not a duration of 0 or more`)
	wantUsage(t, mw(t, "run", "--when-due", "--poll", "1ms", "--db", "x.db"), "--poll 1ms is under 100ms")

	path := demoDB(t)
	for _, c := range []struct{ key, in, want string }{
		{"curate_interval_hours", "2d", "48.0"}, {"curate_interval_hours", "90m", "1.5"}, {"curate_interval_hours", "12", "12.0"},
		{"event_retention_days", "12h", "0.5"}, {"event_retention_days", "90d", "90.0"},
	} {
		if r := ok(t, "config", "set", c.key, c.in, "--db", path); r.stdout != c.key+" = "+c.want+"\n" {
			t.Errorf("config set %s %s printed %q, want it to store %s", c.key, c.in, r.stdout, c.want)
		}
	}
	wantUsage(t, mw(t, "config", "set", "event_retention_days", "5x", "--db", path), "event_retention_days")
	wantUsage(t, mw(t, "config", "set", "edge_prune_threshold", "2d", "--db", path), "edge_prune_threshold")
}

// explain --wall-now explains memworker's own edges and facts at that wall
// clock, over a pinned wall_clock: a fact's age and an edge's wall-clock
// policy are read at it.
func TestExplainWallNow(t *testing.T) {
	path := demoDB(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	exec1(t, path, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('f1', 'context', ?);
		UPDATE mem_config SET value = ? WHERE key = 'wall_clock';
		INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action) VALUES ('similar', 'half_life', '{"half_life":"10d"}', 'wall', 0.5, 'delete');
		UPDATE mem_edges SET last_observed_at = ? WHERE (from_id, to_id) = (SELECT from_id, to_id FROM mem_edges WHERE relation_type = 'similar' AND NOT pinned ORDER BY 1, 2 LIMIT 1)`,
		base.Unix(), base.Unix(), base.Unix())
	from := queryOne(t, path, `SELECT from_id || ' ' || to_id FROM mem_edges WHERE relation_type = 'similar' AND last_observed_at = ?`, base.Unix())
	ends := strings.Fields(from)
	for _, days := range []int{2, 30} {
		wall := base.Add(time.Duration(days) * 24 * time.Hour)
		fact := decodeJSON(t, ok(t, "explain", "--fact", "f1", "--json", "--wall-now", wall.Format(time.RFC3339), "--db", path))
		if got := num(t, fact, "wall_time"); got != float64(wall.Unix()) {
			t.Errorf("explain --fact --wall-now +%dd: wall_time %v, want %d", days, got, wall.Unix())
		}
		edge := decodeJSON(t, ok(t, "explain", "--edge", ends[0], ends[1], "--json", "--wall-now", wall.Format(time.RFC3339), "--db", path))
		want := map[int]string{2: "live", 30: "decayed"}[days]
		if edge["state"] != want || num(t, edge, "wall_time") != float64(wall.Unix()) {
			t.Errorf("explain --edge --wall-now +%dd: state %v at %v, want %s", days, edge["state"], edge["wall_time"], want)
		}
	}
	// Without it, the pinned wall_clock.
	if fact := decodeJSON(t, ok(t, "explain", "--fact", "f1", "--json", "--db", path)); num(t, fact, "wall_time") != float64(base.Unix()) {
		t.Errorf("explain --fact without --wall-now: wall_time %v, want the pinned %d", fact["wall_time"], base.Unix())
	}
}
