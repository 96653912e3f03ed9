package main

import (
	"strconv"
	"strings"
	"testing"
)

// explainedEdges are demo edges of every kind explain tells apart: pinned,
// agent-asserted, unanchored, invalid, surviving, under a relation policy.
var explainedEdges = [][2]string{
	{"core-values", "obs-pinned"},
	{"goal-ship", "py-async"},
	{"ds-pandas", "ds-plots"},
	{"db-wal", "ds-pandas"},
	{"db-index", "py-async"},
	{"alex", "project-alpha"},
}

// explainedFacts are demo facts of every tier and status.
var explainedFacts = []string{"f-tabs", "f-name", "f-rule", "f-old-lib", "f-meeting"}

// TestExplainGolden: each kind of edge and fact, at fixed clocks.
func TestExplainGolden(t *testing.T) {
	tr := newTranscript(t)
	path := goldenDB(t, tr.dir, "m.db")
	// The view reads wall-clock policies at the pinned wall clock.
	exec1(t, path, `UPDATE mem_config SET value = ? WHERE key = 'wall_clock'`, goldenWall.Unix())
	for _, e := range explainedEdges {
		tr.run("explain", "--edge", e[0], e[1], "--db", path)
	}
	for _, id := range explainedFacts {
		tr.run("explain", "--fact", id, "--db", path)
	}
	tr.check("explain")
}

func TestExplainEdge(t *testing.T) {
	path := demoDB(t)
	for _, e := range explainedEdges {
		ab := ok(t, "explain", "--edge", e[0], e[1], "--db", path)
		ba := ok(t, "explain", "--db", path, "--edge", e[1], e[0])
		if ab.stdout != ba.stdout {
			t.Errorf("the order of the ends matters:\n%s\nvs\n%s", ab.stdout, ba.stdout)
		}
	}

	m := decodeJSON(t, ok(t, "explain", "--edge", "py-async", "db-index", "--json", "--db", path))
	wantKeys(t, "explain --json", m, "from", "to", "tier_from", "tier_to", "weight", "lambda", "elapsed_hours",
		"effective_weight", "decay_threshold", "decays_at_hours", "verdict")
	if m["from"] != "db-index" || m["to"] != "py-async" || m["established"] != true {
		t.Errorf("explain --json: %v", m)
	}
	// Its horizon is where the next sweep takes it: just before, it survives;
	// just after, explain says it goes, and the sweep removes it.
	horizon := num(t, m, "decays_at_hours")
	if horizon <= 500 {
		t.Fatalf("decays_at_hours = %v", horizon)
	}
	ok(t, "clock", "advance", strconv.FormatFloat(horizon-500+1, 'f', 3, 64), "--db", path)
	r := ok(t, "explain", "--edge", "db-index", "py-async", "--db", path)
	if !strings.Contains(r.stdout, "decays at the next sweep") {
		t.Errorf("past its horizon:\n%s", r.stdout)
	}
	ok(t, "sweep", "--db", path)
	wantExit(t, mw(t, "explain", "--edge", "db-index", "py-async", "--db", path), exitFailure, "no edge")

	wantExit(t, mw(t, "explain", "--edge", "no-such", "block", "--db", path), exitFailure, "no edge", "memworker decayed")
}

func TestExplainStaticPrune(t *testing.T) {
	path := demoDB(t)
	ok(t, "restore", "--edge", "db-index", "ds-plots", "--db", path)
	r := ok(t, "explain", "--edge", "db-index", "ds-plots", "--db", path)
	if !strings.Contains(r.stdout, "static prune at the next sweep") {
		t.Errorf("a weak, never reinforced edge:\n%s", r.stdout)
	}
}

func TestExplainFact(t *testing.T) {
	path := demoDB(t)
	m := decodeJSON(t, ok(t, "explain", "--fact", "f-tabs", "--json", "--db", path))
	wantKeys(t, "explain --fact --json", m, "id", "segment", "tier", "status", "score", "action", "archive_in_days", "verdict")
	if m["action"] != "keep" || num(t, m, "archive_in_days") <= 0 {
		t.Errorf("f-tabs: %v", m)
	}
	wantExit(t, mw(t, "explain", "--fact", "f-parking", "--db", path), exitFailure, "no such fact", "restore --fact f-parking")
}

func TestExplainUsage(t *testing.T) {
	path := demoDB(t)
	for _, args := range [][]string{
		{"explain"},
		{"explain", "--edge", "a"},
		{"explain", "--edge", "a", "b", "c"},
		{"explain", "a", "b"},
		{"explain", "--fact", "f-tabs", "extra"},
		{"explain", "--edge", "a", "b", "--fact", "f-tabs"},
	} {
		wantUsage(t, mw(t, append(args, "--db", path)...), "explain")
	}
}
