package worker_test

// The daemon (Run): schedules, failing rounds and backoff, stopping. None
// of these tests waits with a sleep: the daemon runs on the test goroutine
// and is steered from its AfterRound hook, its log and, mid-sweep, the
// sweep's Chunk signal.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// logRecords parses JSON log lines.
func logRecords(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("log is not JSON lines: %v\n%s", err, b)
		}
		out = append(out, m)
	}
}

func countMsg(records []map[string]any, msg string) int {
	n := 0
	for _, r := range records {
		if r["msg"] == msg {
			n++
		}
	}
	return n
}

// hookHandler calls hook with every record before logging it: the test's
// signal for what the daemon does between rounds.
type hookHandler struct {
	slog.Handler
	hook func(slog.Record)
}

func (h hookHandler) Handle(ctx context.Context, r slog.Record) error {
	h.hook(r)
	return h.Handler.Handle(ctx, r)
}

// TestRunEvery: the daemon sweeps at once and then every interval; rounds
// at an unchanged clock remove nothing; cancelling stops it with nil.
func TestRunEvery(t *testing.T) {
	db, path := newMemory(t, richFixture)
	setConfig(t, db, "active_hours", "500")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const want = 4
	var logs bytes.Buffer
	var reports []*worker.Report
	err := worker.Run(ctx, path, worker.RunOptions{
		Every:  2 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		AfterRound: func(results []worker.FleetResult) {
			if len(results) != 1 || results[0].Report == nil {
				t.Errorf("round %d: %+v", len(reports)+1, results)
				cancel()
				return
			}
			reports = append(reports, results[0].Report)
			if len(reports) == want {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(reports) != want {
		t.Fatalf("%d rounds, want %d", len(reports), want)
	}
	if r := reports[0]; r.ClockHours != 500 || r.EdgesDecayed != 2 || r.Archived != 2 {
		t.Errorf("first round: clock %v, decayed %d, archived %d; want 500, 2, 2", r.ClockHours, r.EdgesDecayed, r.Archived)
	}
	for i, r := range reports[1:] {
		if r.Archived+r.EdgesPruned+r.EdgesDecayed != 0 {
			t.Errorf("round %d at the same clock removed something: %s", i+2, r.Summary)
		}
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`); n != want {
		t.Errorf("%d sweeps done, want %d", n, want)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status != 'done'`); n != 0 {
		t.Errorf("%d sweeps not done", n)
	}
	recs := logRecords(t, &logs)
	for msg, n := range map[string]int{"memworker running": 1, "swept": want, "memworker stopping": 1} {
		if got := countMsg(recs, msg); got != n {
			t.Errorf("%d %q log lines, want %d\n%s", got, msg, n, logs.String())
		}
	}
}

// TestRunWhenDue: with --when-due the daemon sweeps a file only once
// active_hours − last_curate_at reaches curate_interval_hours (a file never
// swept is due at once), polling in between.
func TestRunWhenDue(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	memoryIn(t, a, richFixture)
	memoryIn(t, b, richFixture)
	dbA := openAsWorker(t, a)
	setConfig(t, dbA, "active_hours", "500")
	sweepWith(t, dbA, worker.SweepOptions{}) // last_curate_at = 500
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type step struct {
		advance float64  // active hours added to a.db after the round
		swept   []string // files swept in the round
	}
	script := []step{
		{swept: []string{b}, advance: 39.5}, // b was never swept; a is 0 h past its sweep
		{advance: 0.25},                     // a at 39.5 h
		{advance: 0.25},                     // a at 39.75 h
		{swept: []string{a}},                // a at 40 h: due
		{},                                  // nothing due
	}
	round := 0
	var logs bytes.Buffer
	err := worker.Run(ctx, filepath.Join(dir, "*.db"), worker.RunOptions{
		WhenDue: true,
		Poll:    time.Millisecond,
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		AfterRound: func(results []worker.FleetResult) {
			s := script[round]
			var swept []string
			for _, r := range results {
				if r.Report == nil {
					t.Errorf("round %d: %s failed: %s", round+1, r.Path, r.Error)
				}
				swept = append(swept, r.Path)
			}
			if !slices.Equal(swept, s.swept) {
				t.Errorf("round %d swept %v, want %v", round+1, swept, s.swept)
			}
			if s.advance > 0 {
				if _, err := worker.AdvanceClock(ctx, dbA, s.advance); err != nil {
					t.Error(err)
				}
			}
			if round++; round == len(script) || t.Failed() {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if round != len(script) {
		t.Fatalf("%d rounds, want %d", round, len(script))
	}
	// The log says when the next round is and why a round did nothing.
	// A polling round logs "next round" at debug level only.
	for _, want := range []string{`level=DEBUG msg="next round"`, `msg="not due"`, `why="39.5 of 40 active hours since the last sweep"`,
		`why="39.75 of 40 active hours since the last sweep"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the daemon's log lacks %s:\n%s", want, logs.String())
		}
	}
	// "not due" is said once per clock value, not at every poll.
	if n := strings.Count(logs.String(), `why="39.5 of 40 active hours`); n != 1 {
		t.Errorf("the same reason logged %d times", n)
	}
	if got := scalar[string](t, dbA, `SELECT group_concat(clock_hours, ',') FROM (SELECT clock_hours FROM mem_sweeps ORDER BY id)`); got != "500.0,540.0" {
		t.Errorf("a.db swept at %s, want 500 then 540", got)
	}
	if got := loadConfig(t, dbA).LastCurateAt; got == nil || *got != 540 {
		t.Errorf("a.db last_curate_at %v, want 540", fmtPtr(got))
	}
}

// TestRunFailingRound: a file that is not SQLite among good ones fails its
// round; the daemon logs it, still sweeps the others, backs off (doubling
// from BackoffMin to BackoffMax) and goes on until the file is fixed.
func TestRunFailingRound(t *testing.T) {
	dir := t.TempDir()
	good1, bad, good2 := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	memoryIn(t, good1, richFixture)
	memoryIn(t, good2, richFixture)
	if err := os.WriteFile(bad, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard, not a wait
	defer cancel()
	var logs bytes.Buffer
	rounds := 0
	err := worker.Run(ctx, filepath.Join(dir, "*.db"), worker.RunOptions{
		Every:      time.Hour, // only the backoff brings the next round soon
		BackoffMin: time.Millisecond,
		BackoffMax: 4 * time.Millisecond,
		Logger:     slog.New(slog.NewJSONHandler(&logs, nil)),
		AfterRound: func(results []worker.FleetResult) {
			rounds++
			if len(results) != 3 {
				t.Errorf("round %d: %d results, want 3", rounds, len(results))
				cancel()
				return
			}
			for _, r := range results {
				failed := r.Report == nil
				if wantFail := r.Path == bad && rounds < 5; failed != wantFail {
					t.Errorf("round %d: %s failed %v (%s), want %v", rounds, r.Path, failed, r.Error, wantFail)
				}
				if failed && !strings.Contains(r.Error, "not a SQLite database") {
					t.Errorf("round %d: error %q", rounds, r.Error)
				}
			}
			switch rounds {
			case 4: // the operator replaces the stray file with a memory
				os.Remove(bad)
				memoryIn(t, bad, richFixture)
			case 5:
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rounds != 5 {
		t.Fatalf("%d rounds, want 5 (the daemon did not retry after a failed round)", rounds)
	}
	recs := logRecords(t, &logs)
	var retries []string
	for _, r := range recs {
		switch r["msg"] {
		case "round failed; backing off":
			retries = append(retries, fmt.Sprint(r["retry_in"]))
		case "sweep failed":
			if r["db"] != bad || r["level"] != "ERROR" {
				t.Errorf("sweep failed line %v", r)
			}
		}
	}
	if want := []string{"1ms", "2ms", "4ms", "4ms"}; !slices.Equal(retries, want) {
		t.Errorf("backoffs %v, want %v", retries, want)
	}
	if n := countMsg(recs, "sweep failed"); n != 4 {
		t.Errorf("%d sweep failed lines, want 4", n)
	}
	if n := countMsg(recs, "round done"); n != 5 {
		t.Errorf("%d round done lines, want 5", n)
	}
	for _, p := range []string{good1, good2} {
		db := openAsWorker(t, p)
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`); n != 5 {
			t.Errorf("%s: %d sweeps, want 5 (one per round)", p, n)
		}
	}
}

// TestRunPatternMatchesNothing: a glob with no match fails the round, is
// logged and backed off; once a file appears the daemon sweeps it. The test
// steps by the daemon's own log lines (AfterRound does not see a round whose
// pattern matched nothing).
func TestRunPatternMatchesNothing(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard, not a wait
	defer cancel()
	var logs bytes.Buffer
	failures, rounds := 0, 0
	var errs []string
	log := slog.New(hookHandler{slog.NewJSONHandler(&logs, nil), func(r slog.Record) {
		switch r.Message {
		case "round":
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "err" {
					errs = append(errs, a.Value.String())
				}
				return true
			})
		case "round failed; backing off":
			if failures++; failures == 3 {
				memoryIn(t, filepath.Join(dir, "late.db"), richFixture)
			}
		}
	}})
	err := worker.Run(ctx, filepath.Join(dir, "*.db"), worker.RunOptions{
		Every: time.Hour, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond, Logger: log,
		AfterRound: func(results []worker.FleetResult) {
			if len(results) == 0 {
				return // a round that found no file, should the daemon report those
			}
			rounds++
			if len(results) != 1 || results[0].Report == nil {
				t.Errorf("round after the file appeared: %+v", results)
			}
			cancel()
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if failures != 3 || rounds != 1 {
		t.Fatalf("%d failed rounds and %d swept, want 3 and 1\n%s", failures, rounds, logs.String())
	}
	for _, e := range errs {
		if !strings.Contains(e, "matches no file") {
			t.Errorf("round error %q", e)
		}
	}
}

// TestRunStopsMidSweep: cancelling while a sweep is in flight stops it
// after its current chunk, records it as interrupted and returns nil.
func TestRunStopsMidSweep(t *testing.T) {
	orig := bigMemory(t, 3, 60, 400)
	path := copyMemory(t, orig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	var logs bytes.Buffer
	rounds := 0
	err := worker.Run(ctx, path, worker.RunOptions{
		Every:  time.Hour,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Sweep: worker.WithChunk(worker.SweepOptions{ChunkSize: 5}, func(string, int64, int64) {
			if calls.Add(1) == 10 {
				cancel()
			}
		}),

		AfterRound: func([]worker.FleetResult) { rounds++ },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rounds != 1 {
		t.Errorf("%d rounds, want 1", rounds)
	}
	db := openAsWorker(t, path)
	if got := scalar[string](t, db, `SELECT group_concat(status) FROM mem_sweeps`); got != "interrupted" {
		t.Errorf("sweeps %q, want one interrupted", got)
	}
	recs := logRecords(t, &logs)
	if countMsg(recs, "sweep interrupted") != 1 || countMsg(recs, "memworker stopping") != 1 || countMsg(recs, "sweep failed") != 0 {
		t.Errorf("log:\n%s", logs.String())
	}
	integrityOK(t, db.SQL)
	checkRemovalsLogged(t, db.SQL, orig, 0)
}

// TestRunValidate: exactly one trigger, and the cron expression parses;
// Run refuses a bad configuration before touching any file.
func TestRunValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  worker.RunOptions
		ok   bool
		want string
	}{
		{"no trigger", worker.RunOptions{}, false, "exactly one of"},
		{"every and when-due", worker.RunOptions{Every: time.Hour, WhenDue: true}, false, "exactly one of"},
		{"schedule and every", worker.RunOptions{Schedule: "30 4 * * 0", Every: time.Hour}, false, "exactly one of"},
		{"all three", worker.RunOptions{Schedule: "30 4 * * 0", Every: time.Hour, WhenDue: true}, false, "exactly one of"},
		{"negative every", worker.RunOptions{Every: -time.Second}, false, "exactly one of"},
		{"bad cron field", worker.RunOptions{Schedule: "61 * * * *"}, false, `"61 * * * *"`},
		{"not cron", worker.RunOptions{Schedule: "every sunday"}, false, "every sunday"},
		{"six fields", worker.RunOptions{Schedule: "0 30 4 * * 0"}, false, `schedule "0 30 4 * * 0"`},
		{"every", worker.RunOptions{Every: time.Hour}, true, ""},
		{"when-due", worker.RunOptions{WhenDue: true}, true, ""},
		{"schedule", worker.RunOptions{Schedule: "30 4 * * 0"}, true, ""},
		{"descriptor", worker.RunOptions{Schedule: "@daily"}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.opt.Validate()
			if c.ok {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, c.want)
			}
			missing := filepath.Join(t.TempDir(), "missing.db")
			if runErr := worker.Run(context.Background(), missing, c.opt); runErr == nil || runErr.Error() != err.Error() {
				t.Errorf("Run = %v, want %v", runErr, err)
			}
			if _, statErr := os.Stat(missing); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("Run created %s", missing)
			}
		})
	}
}

// TestRunScheduleStops: a cron schedule whose next time is far off still
// stops at once when the context ends.
func TestRunScheduleStops(t *testing.T) {
	_, path := newMemory(t, richFixture)
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	log := slog.New(hookHandler{slog.NewJSONHandler(&logs, nil), func(r slog.Record) {
		if r.Message == "memworker running" {
			cancel()
		}
	}})
	if err := worker.Run(ctx, path, worker.RunOptions{Schedule: "0 0 1 1 *", Logger: log,
		AfterRound: func([]worker.FleetResult) { t.Error("a round ran") }}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := countMsg(logRecords(t, &logs), "memworker stopping"); n != 1 {
		t.Errorf("log:\n%s", logs.String())
	}
}
