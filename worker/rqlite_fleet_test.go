package worker_test

// The daemon on rqlite: several clusters named by URLs, none globbed.

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/worker"
)

// TestRqliteRunSweepsSeveralClusters: the daemon given two clusters' URLs
// (one with a query string, whose ? is not a glob; one with a password,
// which no log shows) sweeps each every round; every node of both holds
// what the same sweep leaves in a file, and a second round removes nothing.
func TestRqliteRunSweepsSeveralClusters(t *testing.T) {
	db, orig := newMemory(t, richFixture)
	setConfig(t, db, "active_hours", "500")
	pinWall(t, db, fixedWall)
	db.Close()
	file := openAsWorker(t, copyMemory(t, orig))
	want := sweepWith(t, file, worker.SweepOptions{})
	a, b := startCluster(t, 3, orig), startCluster(t, 1, orig)
	urlA := a.Nodes()[1].URL + "/?level=strong"
	urlB := strings.Replace(b.Nodes()[0].URL, "http://", "http://memdecay:s3cret@", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	var rounds [][]worker.FleetResult
	err := worker.Run(ctx, urlA+", "+urlB, worker.RunOptions{
		Every:  100 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		AfterRound: func(results []worker.FleetResult) {
			rounds = append(rounds, results)
			if len(rounds) == 2 {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rounds) != 2 {
		t.Fatalf("%d rounds, want 2", len(rounds))
	}
	redactedB := strings.Replace(urlB, "s3cret", "xxxxx", 1)
	for i, results := range rounds {
		if len(results) != 2 || results[0].Path != urlA || results[1].Path != redactedB {
			t.Fatalf("round %d swept %+v, want %s and %s", i+1, results, urlA, redactedB)
		}
		for _, r := range results {
			if r.Report == nil {
				t.Fatalf("round %d: %s failed: %s", i+1, r.Path, r.Error)
			}
			removed := r.Report.Archived + r.Report.EdgesPruned + r.Report.EdgesDecayed
			switch {
			case i == 0 && reportCounts(r.Report) != reportCounts(want):
				t.Errorf("round 1 on %s: %s\nthe file's sweep: %s", r.Path, reportCounts(r.Report), reportCounts(want))
			case i == 1 && removed != 0:
				t.Errorf("round 2 on %s removed rows at the same clock: %s", r.Path, r.Report.Summary)
			}
		}
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the log shows a password:\n%s", logs.String())
	}
	state := memoryState(t, file)
	for _, c := range []*rqcluster.Cluster{a, b} {
		expectEveryNode(t, c, state)
		onEveryNode(t, c, `SELECT status || ' ' || clock_hours || ' ' || count(*) FROM mem_sweeps GROUP BY status, clock_hours`, []string{"done 500.0 2"})
	}
}

// TestExpandPathsTakesURLsAsGiven: URLs are split at the commas that start
// another URL, never globbed, and shown without their passwords.
func TestExpandPathsTakesURLsAsGiven(t *testing.T) {
	for _, c := range []struct {
		db    string
		want  []string
		fleet bool
	}{
		{"http://127.0.0.1:4001", []string{"http://127.0.0.1:4001"}, false},
		{"http://127.0.0.1:4001/?level=strong", []string{"http://127.0.0.1:4001/?level=strong"}, false},
		{"http://[::1]:4001", []string{"http://[::1]:4001"}, false},
		{"http://a:4001, https://b:4001/?level=weak", []string{"http://a:4001", "https://b:4001/?level=weak"}, true},
		{"http://u:pa,ss@a:4001,http://b:4001", []string{"http://u:pa,ss@a:4001", "http://b:4001"}, true},
		{"http://u:pa,ss@a:4001", []string{"http://u:pa,ss@a:4001"}, false}, // one URL, judged when opened
	} {
		got, err := worker.ExpandPaths(c.db)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ExpandPaths(%q) = %q, %v; want %q", c.db, got, err, c.want)
		}
		if worker.IsFleet(c.db) != c.fleet {
			t.Errorf("IsFleet(%q) = %v, want %v", c.db, !c.fleet, c.fleet)
		}
	}
	for _, bad := range []string{"http://a:4001,http://:x", "http://a:4001,http://b:4001/?timeout=5"} {
		if _, err := worker.ExpandPaths(bad); !errors.Is(err, worker.ErrBadURL) || !strings.Contains(err.Error(), "separated by commas") {
			t.Errorf("a list with a bad URL %q: %v, want ErrBadURL", bad, err)
		}
	}
	if got := worker.DisplayName("http://u:pa,ss@a:4001,http://v:w@b:4001"); got != "http://u:xxxxx@a:4001,http://v:xxxxx@b:4001" {
		t.Errorf("DisplayName shows %q", got)
	}
	if worker.IsFleet("memories/a.db") || !worker.IsFleet("memories/*.db") {
		t.Error("IsFleet on files: a glob is a fleet, a path is not")
	}
}
