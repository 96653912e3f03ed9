package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// An app on its own terms: ISO-8601 times at +02:00, its own categories,
// a pinned column, a recall counter the sweep must not bump, and one file
// that says how its memory decays.

// ownTermsWall is when the test sweeps; the app writes times at +02:00.
var (
	ownTermsWall = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ownTermsZone = time.FixedZone("", 2*3600)
)

// ownTermsISO is the app's form of a time days before ownTermsWall.
func ownTermsISO(days float64) string {
	return ownTermsWall.Add(-time.Duration(days * 24 * float64(time.Hour))).In(ownTermsZone).Format("2006-01-02T15:04:05-07:00")
}

// ownTermsFile is the app's mapping file: half-lives in days, its
// categories' tiers, a pinned column, the parts a sweep may write (not
// the recall counter), its settings and a policy for cites links.
const ownTermsFile = `
[tiers]
durable = "90d"
standard = "30d"
ephemeral = "5d"

[nodes]
table = "notes"
key = "id"
last_used = "last_seen"
last_used_clock = "iso8601"
category = "kind"
category_tiers = { goal = "durable", note = "standard", chat = "ephemeral" }
tags = { column = "tags" }
status = "state"
status_active = ["active"]
status_archived = "archived"
reinforcement_count = "recalls"
pinned = "pinned"
writes = ["last_used", "status"]

[edges]
table = "note_links"
key = "id"
from = "src"
to = "dst"
directed = true
kind = "kind"
weight = "weight"
excluded = "hidden"
last_observed = "seen_at"
last_observed_clock = "iso8601"

[settings]
block_prune_threshold = 0.05
reinforce_top_n = 2

[[policies]]
kind = "cites"
model = "half_life"
half_life = "180d"
clock = "wall"
threshold = 0.5
action = "exclude"
`

// ownTermsApp makes the app's file: notes on both sides of each tier's
// archival age (recency below 0.05 after log2(20) = 4.32 half-lives:
// 129.7 days standard, 389.0 durable, 21.6 ephemeral), a pinned note
// older than all, the constitutional charter, a note of a category the
// file does not map, and cites links on both sides of 180 days.
func ownTermsApp(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	schema := fmt.Sprintf(`
PRAGMA journal_mode = WAL;
CREATE TABLE notes (id TEXT PRIMARY KEY, kind TEXT, tags TEXT, state TEXT NOT NULL DEFAULT 'active',
    pinned INTEGER NOT NULL DEFAULT 0, recalls INTEGER NOT NULL DEFAULT 0, last_seen TEXT);
CREATE TABLE note_links (id INTEGER PRIMARY KEY, src TEXT NOT NULL REFERENCES notes (id), dst TEXT NOT NULL REFERENCES notes (id),
    kind TEXT NOT NULL, weight REAL NOT NULL, seen_at TEXT, hidden INTEGER NOT NULL DEFAULT 0);
INSERT INTO notes (id, kind, tags, pinned, recalls, last_seen) VALUES
    ('note-131', 'note', NULL, 0, 3, '%s'), ('note-128', 'note', NULL, 0, 3, '%s'),
    ('goal-392', 'goal', NULL, 0, 1, '%s'), ('goal-385', 'goal', NULL, 0, 1, '%s'),
    ('chat-22', 'chat', NULL, 0, 0, '%s'), ('chat-21', 'chat', NULL, 0, 0, '%s'),
    ('pinned-400', 'note', NULL, 1, 0, '%s'), ('charter', 'note', 'self/constitutional', 0, 7, '%s'),
    ('idea-10', 'idea', NULL, 0, 0, '%s');
INSERT INTO note_links (id, src, dst, kind, weight, seen_at) VALUES
    (1, 'note-128', 'goal-385', 'cites', 1.0, '%s'), (2, 'goal-385', 'chat-21', 'cites', 1.0, '%s'),
    (3, 'note-128', 'idea-10', 'relates', 0.9, NULL);`,
		ownTermsISO(131), ownTermsISO(128), ownTermsISO(392), ownTermsISO(385), ownTermsISO(22), ownTermsISO(21),
		ownTermsISO(400), ownTermsISO(500), ownTermsISO(10), ownTermsISO(190), ownTermsISO(170))
	if out, err := plainShell(t, path, schema); err != nil {
		t.Fatalf("the app's schema: %v\n%s", err, out)
	}
	return path
}

func TestAppOnItsOwnTerms(t *testing.T) {
	path := ownTermsApp(t)
	file := filepath.Join(t.TempDir(), "memory.toml")
	if err := os.WriteFile(file, []byte(ownTermsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	at := okAt(t, ownTermsWall)
	at("migrate", "up", "--db", path)

	// --check names the category the file does not map, and writes nothing.
	before := bytesOf(t, path)
	r := at("map", "load", "--check", file, "--db", path)
	if want := `notes.kind = "idea" in 1 rows: nodes.category_tiers gives it no tier, so they decay as standard`; !strings.Contains(r.stdout, want) {
		t.Errorf("map load --check does not name the unmapped category (%q):\n%s", want, r.stdout)
	}
	if bytesOf(t, path) != before {
		t.Fatal("map load --check changed the file")
	}
	at("map", "load", file, "--db", path)
	show := at("map", "show", "--db", path).stdout
	for _, want := range []string{"category tiers       chat → ephemeral, goal → durable, note → standard",
		"a sweep writes       last_used, status", "tiers (half-lives in wall-clock time; permanent never fades):",
		"durable              90d (from the mapping)", "ephemeral            5d (from the mapping)"} {
		if !strings.Contains(show, want) {
			t.Errorf("map show lacks %q:\n%s", want, show)
		}
	}
	config := at("config", "get", "--db", path).stdout
	for _, want := range []string{"block_prune_threshold        0.05", "reinforce_top_n              2"} {
		if !strings.Contains(config, want) {
			t.Errorf("config get lacks %q:\n%s", want, config)
		}
	}

	// The dry run's list is exactly what the sweep then does.
	wallNow := ownTermsWall.Format(time.RFC3339)
	planned, _ := listed(t, at("sweep", "--dry-run", "--list", "--json", "--wall-now", wallNow, "--db", path))
	wantPlanned := []string{"block chat-22 archive decayed", "block goal-392 archive decayed",
		"block note-131 archive decayed", "edge 1 exclude below_minimum:cites"}
	if !slices.Equal(planned, wantPlanned) {
		t.Errorf("the dry run lists %q, want %q", planned, wantPlanned)
	}
	at("sweep", "--wall-now", wallNow, "--db", path)
	if got := sweptEvents(t, path); !slices.Equal(got, planned) {
		t.Errorf("the sweep did %q; its dry run listed %q", got, planned)
	}

	// Archived by the declared half-lives in days and the category tiers,
	// the pinned note never; no recall counter moved.
	notes := queryRows(t, path, `SELECT id, state, recalls FROM notes ORDER BY id`)
	wantNotes := []string{"charter|active|7", "chat-21|active|0", "chat-22|archived|0", "goal-385|active|1", "goal-392|archived|1",
		"idea-10|active|0", "note-128|active|3", "note-131|archived|3", "pinned-400|active|0"}
	if !slices.Equal(notes, wantNotes) {
		t.Errorf("notes after the sweep:\n%s\nwant\n%s", strings.Join(notes, "\n"), strings.Join(wantNotes, "\n"))
	}
	// The constitutional note is reinforced, its time written as the app
	// writes its times (+02:00).
	if got, want := queryOne(t, path, `SELECT last_seen FROM notes WHERE id = 'charter'`), ownTermsISO(0); got != want {
		t.Errorf("charter's last_seen = %s, want %s (the app's own form)", got, want)
	}
	if got := queryOne(t, path, `SELECT count(*) FROM notes WHERE last_seen NOT LIKE '%+02:00'`); got != "0" {
		t.Errorf("%s times are not in the app's +02:00 form", got)
	}
	// The policy excludes the cites link unseen for 190 days, not the one
	// of 170 days.
	if got := queryRows(t, path, `SELECT id, hidden FROM note_links ORDER BY id`); !slices.Equal(got, []string{"1|1", "2|0", "3|0"}) {
		t.Errorf("note_links after the sweep: %q, want link 1 excluded", got)
	}

	// explain --wall-now decides at that wall clock, as sweep --wall-now:
	// link 2, unseen for 170 days, falls below half its weight at 180.
	for _, c := range []struct {
		days  int
		state string
	}{{0, "live"}, {11, "decayed"}} {
		wall := ownTermsWall.Add(time.Duration(c.days) * 24 * time.Hour)
		x := decodeJSON(t, at("explain", "--edge", "2", "--json", "--wall-now", wall.Format(time.RFC3339), "--db", path))
		if x["state"] != c.state || num(t, x, "wall_time") != float64(wall.Unix()) {
			t.Errorf("explain --edge 2 --wall-now +%dd: state %v at %v, want %s at %d", c.days, x["state"], x["wall_time"], c.state, wall.Unix())
		}
	}
	wantUsage(t, mw(t, "explain", "--edge", "2", "--wall-now", "soon", "--db", path), "--wall-now", "soon")

	// Plots say wall-clock hours, not active hours, and draw the tiers at
	// the declared half-lives: a standard edge (both ends standard) at
	// half its end's rate, so half its weight at 60 days (1440 hours).
	data := decodeJSON(t, at("plot", "--json", "--db", path))
	for _, c := range data["curves"].([]any) {
		curve := c.(map[string]any)
		if curve["clock"] == "active_hours" {
			t.Errorf("plot --json: curve %v on active hours through a wall-clock mapping", curve["name"])
		}
		if curve["name"] == "tier standard" {
			points := curve["points"].([]any)
			for _, p := range points {
				xy := p.([]any)
				if x, y := xy[0].(float64), xy[1].(float64); math.Abs(y-math.Pow(0.5, x/1440)) > 1e-12 {
					t.Errorf("tier standard at %v h: %v, want 0.5^(h/1440) = %v", x, y, math.Pow(0.5, x/1440))
				}
			}
			if len(points) < 10 {
				t.Errorf("tier standard has %d points", len(points))
			}
		}
	}
	pictures := t.TempDir()
	at("plot", "--out", pictures, "--format", "svg", "--db", path)
	if _, err := os.Stat(filepath.Join(pictures, "curves-wall_hours.svg")); err != nil {
		t.Errorf("plot wrote no curves-wall_hours.svg: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pictures, "curves-active_hours.svg")); err == nil {
		t.Error("plot names a picture of a wall-clock mapping by active hours")
	}

	// The app's own Python connection, with the extension, sees the views
	// over its links (at the sweep's wall clock, pinned where the views
	// read it).
	exec1(t, path, `UPDATE mem_config SET value = ? WHERE key = 'wall_clock'`, ownTermsWall.Unix())
	so := os.Getenv("MEMDECAY_SO")
	py := exec.Command("/usr/bin/python3", "-c", `
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.enable_load_extension(True)
conn.load_extension(sys.argv[2])
live = conn.execute("SELECT group_concat(key_raw, ' ') FROM (SELECT key_raw FROM mem_edges_live ORDER BY key_raw)").fetchone()[0]
decayed = conn.execute("SELECT group_concat(key_raw, ' ') FROM mem_edges_decayed").fetchone()[0]
tiers = conn.execute("SELECT group_concat(id || '=' || tier, ' ') FROM (SELECT * FROM mem_block_tiers ORDER BY id)").fetchone()[0]
print(live, "|", decayed, "|", tiers)
`, path, so)
	out, err := py.CombinedOutput()
	want := "2 3 | 1 | charter=permanent chat-21=ephemeral chat-22=ephemeral goal-385=durable goal-392=durable idea-10=standard " +
		"note-128=standard note-131=standard pinned-400=standard\n"
	if err != nil || string(out) != want {
		t.Errorf("the app's Python connection: %v\n%s\nwant %s", err, out, want)
	}
}

// TestAppTermsWritesNothingItMayNot: with nodes.writes = ["status"] a
// sweep archives but reinforces no node (it may write no time of use or
// count), and says so.
func TestAppTermsWritesNothingItMayNot(t *testing.T) {
	path := ownTermsApp(t)
	file := filepath.Join(t.TempDir(), "memory.toml")
	text := strings.Replace(ownTermsFile, `writes = ["last_used", "status"]`, `writes = ["status"]`, 1)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	mwAt(t, ownTermsWall, "migrate", "up", "--db", path)
	if r := mwAt(t, ownTermsWall, "map", "load", file, "--db", path); r.code != exitOK {
		t.Fatal(r)
	}
	if show := mwAt(t, ownTermsWall, "map", "show", "--db", path).stdout; !strings.Contains(show, "no time of use or count: a sweep reinforces no node") {
		t.Errorf("map show does not say the sweep reinforces nothing:\n%s", show)
	}
	before := queryRows(t, path, `SELECT id, recalls, last_seen FROM notes WHERE state = 'active' AND id NOT IN ('chat-22', 'goal-392', 'note-131') ORDER BY id`)
	m := decodeJSON(t, mwAt(t, ownTermsWall, "sweep", "--json", "--wall-now", ownTermsWall.Format(time.RFC3339), "--db", path))
	if got := num(t, m, "archived"); got != 3 {
		t.Errorf("archived = %v, want 3", got)
	}
	if got := num(t, m, "constitutional_reinforced") + num(t, m, "reinforced"); got != 0 {
		t.Errorf("%v reinforced, want none", got)
	}
	after := queryRows(t, path, `SELECT id, recalls, last_seen FROM notes WHERE state = 'active' ORDER BY id`)
	if !slices.Equal(before, after) {
		t.Errorf("the sweep wrote what it may not:\n%s\nwas\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}
