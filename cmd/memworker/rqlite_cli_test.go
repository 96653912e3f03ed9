package main

// memworker against real rqlite clusters on loopback, as a user types it:
// restore, fact, explain (with --plot) and the run daemon through one
// node's URL; sweep and status over several clusters' URLs. Every outcome
// is read from each node's own copy (level none).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
)

// startNodes starts a cluster of n nodes with memdecay, stopped at cleanup.
func startNodes(t *testing.T, n int) *rqcluster.Cluster {
	t.Helper()
	so, err := rqcluster.Extension()
	if err != nil {
		t.Fatal(err)
	}
	return rqcluster.StartT(t, rqcluster.Options{Nodes: n, Extension: so})
}

// nodeRows is one node's own answer to a query of one column.
func nodeRows(t *testing.T, n *rqcluster.Node, query string) []string {
	t.Helper()
	rows, err := n.Column(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// eachNode waits until every running node's own copy answers query (one
// column) with want: a follower applies the log a moment after the leader.
func eachNode(t *testing.T, c *rqcluster.Cluster, query string, want ...string) {
	t.Helper()
	if err := c.EveryNodeAnswers(context.Background(), query, want, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// demoCluster loads the demo into a new cluster of n nodes through its
// last node (a follower at first).
func demoCluster(t *testing.T, n int) (*rqcluster.Cluster, string) {
	t.Helper()
	c := startNodes(t, n)
	u := c.Nodes()[n-1].URL
	ok(t, "--db", u, "demo")
	return c, u
}

// TestRqliteCLIRestoreFactExplain: decayed, restore, fact and explain
// through a node's URL say what they say on a file, and every node holds
// their writes; refusals (an edge back already, an archived end, nothing
// to restore, an archived fact) change nothing.
func TestRqliteCLIRestoreFactExplain(t *testing.T) {
	c, u := demoCluster(t, 3)
	if r := ok(t, "--db", u, "decayed"); !strings.Contains(r.stdout, "decay edge db-wal — py-gil (temporal)") {
		t.Errorf("decayed does not list db-wal — py-gil:\n%s", r.stdout)
	}
	if r := ok(t, "--db", u, "migrate", "up"); !strings.HasPrefix(r.stdout, "schema at version ") {
		t.Errorf("migrate up on a migrated cluster: %s", r.stdout)
	}
	r := ok(t, "--db", u, "restore", "--edge", "py-gil", "db-wal")
	if !strings.HasPrefix(r.stdout, "restored edge db-wal py-gil (from event #") {
		t.Errorf("restore --edge: %s", r.stdout)
	}
	wantExit(t, mw(t, "--db", u, "restore", "--edge", "db-wal", "py-gil"), exitFailure, "exists already")
	wantExit(t, mw(t, "--db", u, "restore", "--edge", "goal-ship", "meme-of-day"), exitFailure, "restore the block first")
	// The app links ds-pandas and obs-lunch again before the block comes back.
	if err := c.Nodes()[0].Execute(context.Background(), `INSERT INTO mem_edges (from_id, to_id, weight, origin, last_active_hours)
		VALUES ('ds-pandas', 'obs-lunch', 0.66, 'similarity', 500)`); err != nil {
		t.Fatal(err)
	}
	var block struct {
		Edges   int64    `json:"edges_restored"`
		Skipped []string `json:"edges_skipped"`
	}
	if err := json.Unmarshal([]byte(ok(t, "--db", u, "restore", "--block", "obs-lunch", "--json").stdout), &block); err != nil {
		t.Fatal(err)
	}
	if block.Edges != 0 || !slices.Equal(block.Skipped, []string{"ds-pandas — obs-lunch"}) {
		t.Errorf("restore --block obs-lunch: %+v, want its edge skipped (back already)", block)
	}
	if r := ok(t, "--db", u, "restore", "--block", "obs-standup"); !strings.Contains(r.stdout, "with 1 edges") {
		t.Errorf("restore --block obs-standup: %s", r.stdout)
	}
	ok(t, "--db", u, "restore", "--fact", "f-parking") // pruned: the row comes back
	ok(t, "--db", u, "restore", "--fact", "f-typo")    // archived
	wantExit(t, mw(t, "--db", u, "restore", "--fact", "f-typo"), exitFailure, "nothing to restore")

	up := decodeJSON(t, ok(t, "--db", u, "fact", "feedback", "f-name", "up", "--json"))
	if up["importance_before"] != 0.85 || up["importance_after"] != 0.9 || up["clock_reset"] != true {
		t.Errorf("fact feedback up: %v", up)
	}
	down := decodeJSON(t, ok(t, "--db", u, "fact", "feedback", "f-tabs", "down", "--json"))
	if down["importance_before"] != 0.7 || down["importance_after"] != 0.6 || down["clock_reset"] != false {
		t.Errorf("fact feedback down: %v", down)
	}
	recall := decodeJSON(t, ok(t, "--db", u, "fact", "recall", "f-meeting", "--json"))
	if r := ok(t, "--db", u, "fact", "recall", "f-meeting", "--auto"); !strings.Contains(r.stdout, "(passive: nothing changed)") {
		t.Errorf("fact recall --auto: %s", r.stdout)
	}
	wantExit(t, mw(t, "--db", u, "fact", "feedback", "f-old-lib", "up"), exitFailure, "restore it first")

	eachNode(t, c, `SELECT from_id || '-' || to_id || ' ' || weight FROM mem_edges
		WHERE 'py-gil' IN (from_id, to_id) OR 'obs-lunch' IN (from_id, to_id) ORDER BY 1`,
		"db-wal-py-gil 0.45", "ds-pandas-obs-lunch 0.66", "obs-standup-py-gil 0.4")
	eachNode(t, c, `SELECT subject_id || ' ' || count(*) FROM mem_events WHERE action = 'restore' GROUP BY subject_id ORDER BY 1`,
		`["db-wal","py-gil"] 1`, `["obs-standup","py-gil"] 1`, "f-parking 1", "f-typo 1", "obs-lunch 1", "obs-standup 1")
	eachNode(t, c, `SELECT id || ' ' || status FROM mem_blocks WHERE status = 'archived' ORDER BY 1`, "meme-of-day archived")
	eachNode(t, c, `SELECT id || ' ' || status || ' ' || importance || ' ' || access_count FROM mem_facts
		WHERE id IN ('f-name', 'f-tabs', 'f-meeting', 'f-parking', 'f-typo', 'f-old-lib') ORDER BY 1`,
		fmt.Sprintf("f-meeting active 0.4 %v", recall["access_count_after"]), "f-name active 0.9 "+fmt.Sprint(up["access_count_after"]),
		"f-old-lib archived 0.6 0", "f-parking active 0.4 0", "f-tabs active 0.6 "+fmt.Sprint(down["access_count_after"]), "f-typo active 0.4 0")
	eachNode(t, c, `SELECT subject_id || ' ' || action || ' ' || reason FROM mem_events WHERE action IN ('feedback', 'recall') ORDER BY id`,
		"f-name feedback up", "f-tabs feedback down", "f-meeting recall recall")

	// explain reads; --plot draws into the file its name says.
	dir := t.TempDir()
	r = ok(t, "--db", u, "explain", "--edge", "db-index", "py-async", "--plot", filepath.Join(dir, "edge.png"))
	if !strings.Contains(r.stdout, "edge db-index — py-async") || !strings.Contains(r.stdout, "verdict") {
		t.Errorf("explain --edge: %s", r.stdout)
	}
	// --wall-now reads the views at that clock through the cluster too.
	at := time.Date(2031, 5, 6, 7, 0, 0, 0, time.UTC)
	if e := decodeJSON(t, ok(t, "--db", u, "explain", "--edge", "db-index", "py-async", "--json", "--wall-now", at.Format(time.RFC3339),
		"--plot", filepath.Join(dir, "edge-at.png"))); num(t, e, "wall_time") != float64(at.Unix()) {
		t.Errorf("explain --edge --wall-now on rqlite: wall_time %v, want %d", e["wall_time"], at.Unix())
	}
	x := decodeJSON(t, ok(t, "--db", u, "explain", "--fact", "f-name", "--json", "--plot", filepath.Join(dir, "fact.svg")))
	if x["id"] != "f-name" || x["importance"] != 0.9 || x["action"] != "keep" {
		t.Errorf("explain --fact: %v", x)
	}
	for name, magic := range map[string]string{"edge.png": "\x89PNG", "fact.svg": "<?xml"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("--plot %s: %d bytes starting %q, %v", name, len(b), b[:min(len(b), 8)], err)
		}
	}
	wantExit(t, mw(t, "--db", u, "explain", "--fact", "nope"), exitFailure, "no such fact")
}

// TestRqliteCLIRun: `memworker run` through a node's URL sweeps on --every
// until SIGTERM, then on --when-due only once the cluster's clock has
// moved curate_interval_hours; every node holds the sweeps, none left
// running.
func TestRqliteCLIRun(t *testing.T) {
	c, u := demoCluster(t, 3)
	dry := decodeJSON(t, ok(t, "--db", u, "sweep", "--dry-run", "--now", "600", "--json"))
	d := startDaemon(t, "run", "--db", u, "--every", "100ms", "--now", "600", "--log-format", "json")
	if started := d.waitFor(t, "memworker running"); started["db"] != u {
		t.Errorf("start line %v", started)
	}
	first, second := d.waitFor(t, "swept"), d.waitFor(t, "swept")
	for _, k := range []string{"archived", "edges_pruned", "edges_decayed", "total_edges_after"} {
		if first[k] != dry[k] {
			t.Errorf("the first round's %s is %v; the dry run said %v", k, first[k], dry[k])
		}
	}
	if first["archived"] == 0.0 || second["archived"] != 0.0 || second["edges_decayed"] != 0.0 || first["db"] != u {
		t.Errorf("rounds at clock 600: first %v, second %v", first, second)
	}
	if _, err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("run --every after SIGTERM: %v; log:\n%s", err, strings.Join(d.log, "\n"))
	}
	eachNode(t, c, `SELECT count(*) FROM mem_sweeps WHERE status != 'done'`, "0")
	eachNode(t, c, `SELECT count(*) FROM mem_blocks WHERE status = 'archived'`, fmt.Sprint(3+dry["archived"].(float64)))

	// --when-due: the demo's clock is 500, the last sweep at 600.
	d = startDaemon(t, "run", "--db", u, "--when-due", "--poll", "100ms", "--log-format", "json")
	d.waitFor(t, "not due")
	ok(t, "--db", u, "clock", "advance", "140")
	if swept := d.waitFor(t, "swept"); number(t, swept, "clock_hours") != 640 {
		t.Errorf("run --when-due swept at %v, want 640", swept["clock_hours"])
	}
	if _, err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("run --when-due after SIGTERM: %v", err)
	}
	eachNode(t, c, `SELECT group_concat(clock_hours || ' ' || status, ', ') FROM (SELECT * FROM mem_sweeps WHERE clock_hours != 600 ORDER BY id)`,
		"500.0 done, 640.0 done")
}

// TestRqliteCLISeveralURLs: --db takes several clusters' URLs, separated by
// commas, where it takes a glob of files (sweep and status): one report
// or line each, a failure counted without stopping the others; a ? in a
// URL is not a glob, and a command that takes one database refuses several.
func TestRqliteCLISeveralURLs(t *testing.T) {
	a, urlA := demoCluster(t, 1)
	b, urlB := demoCluster(t, 1)
	strong := urlA + "/?level=strong"
	both := strong + "," + urlB

	r := ok(t, "--db", strong, "status")
	if !strings.HasPrefix(r.stdout, "database      "+strong+" (schema ") {
		t.Errorf("status of one URL with a query string:\n%s", r.stdout)
	}
	var sweep struct {
		Databases []struct {
			Path   string         `json:"path"`
			Report map[string]any `json:"report"`
		} `json:"databases"`
		Total map[string]any `json:"total"`
	}
	if err := json.Unmarshal([]byte(ok(t, "--db", both, "sweep", "--now", "600", "-j", "2", "--json").stdout), &sweep); err != nil {
		t.Fatal(err)
	}
	if len(sweep.Databases) != 2 || sweep.Databases[0].Path != strong || sweep.Databases[1].Path != urlB ||
		sweep.Total["databases"] != 2.0 || sweep.Total["failed"] != 0.0 {
		t.Fatalf("sweep over two URLs: %+v", sweep)
	}
	for _, db := range sweep.Databases {
		if db.Report["clock_hours"] != 600.0 || db.Report["archived"] == 0.0 {
			t.Errorf("%s: %v", db.Path, db.Report)
		}
	}
	for _, c := range []*rqcluster.Cluster{a, b} {
		eachNode(t, c, `SELECT group_concat(clock_hours, ' ') FROM mem_sweeps`, "500.0 600.0")
	}

	r = ok(t, "--db", both, "status")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], strong+"  schema ") || !strings.HasPrefix(lines[1], urlB+"  schema ") {
		t.Errorf("status over two URLs:\n%s", r.stdout)
	}
	var all []map[string]any
	if err := json.Unmarshal([]byte(ok(t, "--db", both, "status", "--json").stdout), &all); err != nil || len(all) != 2 || all[1]["path"] != urlB {
		t.Errorf("status --json over two URLs: %v %v", all, err)
	}
	// A URL that is no rqlite node is reported and counted; the other is read.
	notRqlite := httptest.NewServer(http.NotFoundHandler())
	defer notRqlite.Close()
	down := notRqlite.URL
	r = mw(t, "--db", urlB+", "+down, "status")
	wantExit(t, r, exitFailure, "1 of 2 clusters could not be read")
	if !strings.HasPrefix(r.stdout, urlB+"  schema ") || !strings.Contains(r.stdout, down+"  error: ") {
		t.Errorf("status with a cluster down:\n%s", r.stdout)
	}
	wantUsage(t, mw(t, "--db", both, "clock", "show"), "names several rqlite clusters; clock show takes one")
	wantUsage(t, mw(t, "--db", both, "restore", "--fact", "f-typo"), "restore takes one")
}
