package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// An app whose notes are read by known processes: goals about weekly,
// notes every 1.5 to 2.5 days, chat notes in a burst of four reads an hour
// apart and never again; its mapping declares every tier at 30 days.

var tuneWall = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

const tuneFile = `
[tiers]
durable = "30d"
standard = "30d"
ephemeral = "30d"

[nodes]
table = "notes"
key = "id"
last_used = "last_seen"
last_used_clock = "iso8601"
category = "kind"
category_tiers = { goal = "durable", note = "standard", chat = "ephemeral" }
status = "state"
status_active = ["active"]
status_archived = "archived"

[accesses]
table = "reads"
node = "note_id"
at = "read_at"
`

// tuneApp makes the app's file with 60 days of reads before tuneWall, and
// the mapping file beside it.
func tuneApp(t *testing.T, extra ...string) (db, file string) {
	t.Helper()
	dir := t.TempDir()
	db, file = filepath.Join(dir, "app.db"), filepath.Join(dir, "memory.toml")
	if err := os.WriteFile(file, []byte(tuneFile), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	start := tuneWall.Add(-60 * 24 * time.Hour)
	var notes, reads []string
	iso := func(at time.Time) string { return at.Format("2006-01-02T15:04:05Z") }
	add := func(kind string, id int, times []time.Time) {
		notes = append(notes, fmt.Sprintf("(%d, '%s', '%s')", id, kind, iso(times[len(times)-1])))
		for _, at := range times {
			reads = append(reads, fmt.Sprintf("(%d, '%s')", id, iso(at)))
		}
	}
	every := func(first, lo, hi time.Duration) []time.Time {
		var ts []time.Time
		for at := start.Add(first); at.Before(tuneWall.Add(-time.Hour)); at = at.Add(lo + time.Duration(rng.Int63n(int64(hi-lo)))) {
			ts = append(ts, at)
		}
		return ts
	}
	id := 1
	for i := 0; i < 8; i++ { // goals: about weekly
		add("goal", id, every(time.Duration(rng.Int63n(int64(7*24*time.Hour))), 156*time.Hour, 180*time.Hour))
		id++
	}
	for i := 0; i < 30; i++ { // notes: every 1.5 to 2.5 days
		add("note", id, every(time.Duration(rng.Int63n(int64(48*time.Hour))), 36*time.Hour, 60*time.Hour))
		id++
	}
	for i := 0; i < 40; i++ { // chats: four reads an hour apart, then never again
		at := start.Add(time.Duration(rng.Int63n(int64(58 * 24 * time.Hour))))
		add("chat", id, []time.Time{at, at.Add(time.Hour), at.Add(2 * time.Hour), at.Add(3 * time.Hour)})
		id++
	}
	schema := `
CREATE TABLE notes (id INTEGER PRIMARY KEY, kind TEXT, state TEXT NOT NULL DEFAULT 'active', last_seen TEXT);
CREATE TABLE reads (id INTEGER PRIMARY KEY, note_id INTEGER, read_at TEXT);
INSERT INTO notes (id, kind, last_seen) VALUES ` + strings.Join(notes, ", ") + `;
INSERT INTO reads (note_id, read_at) VALUES ` + strings.Join(reads, ", ") + `;
` + strings.Join(extra, "\n")
	if out, err := plainShell(t, db, schema); err != nil {
		t.Fatalf("the app's schema: %v\n%s", err, out)
	}
	return db, file
}

func TestTuneFindsEachTiersHalfLife(t *testing.T) {
	path, file := tuneApp(t)
	at := okAt(t, tuneWall)
	at("migrate", "up", "--db", path)
	at("map", "load", file, "--db", path)

	before := fileHash(t, path)
	plot := filepath.Join(t.TempDir(), "tune.png")
	text := at("tune", "--db", path, "--plot", plot).stdout
	m := decodeJSON(t, at("tune", "--db", path, "--json"))
	if fileHash(t, path) != before {
		t.Fatal("tune without --apply changed the file")
	}
	if st, err := os.Stat(plot); err != nil || st.Size() == 0 {
		t.Fatalf("tune --plot wrote no picture: %v", err)
	}
	wantKeys(t, "tune --json", m, "current", "best")
	cur, best := m["current"].(map[string]any), m["best"].(map[string]any)
	for _, s := range []map[string]any{cur, best} {
		wantKeys(t, "tune --json current/best", s, "misses", "clutter_days", "mrr", "tiers")
	}
	tiers := best["tiers"].(map[string]any)
	hours := map[string]float64{}
	for _, tier := range []string{"durable", "standard", "ephemeral"} {
		text, _ := tiers[tier].(string)
		h, err := sqlfuncs.ParseDuration(text, sqlfuncs.ClockActiveHours)
		if err != nil {
			t.Fatalf("best %s half-life %q: %v", tier, text, err)
		}
		hours[tier] = h
		if got := cur["tiers"].(map[string]any)[tier]; got != "30d" {
			t.Errorf("current %s half-life %v, want the declared 30d", tier, got)
		}
	}
	t.Logf("best half-lives %v; held-out misses %v → %v, clutter %.1f → %.1f node-days, MRR %.3f → %.3f\n%s", tiers,
		cur["misses"], best["misses"], num(t, cur, "clutter_days"), num(t, best, "clutter_days"), num(t, cur, "mrr"), num(t, best, "mrr"), text)
	if !(hours["durable"] >= 2*hours["standard"] && hours["standard"] > hours["ephemeral"]) {
		t.Errorf("best half-lives %v: want durable at least twice standard, standard above ephemeral", tiers)
	}
	if hours["ephemeral"] > 12 {
		t.Errorf("best ephemeral half-life %vh: want at most 12 hours (chats are read in one burst)", hours["ephemeral"])
	}
	if num(t, best, "misses") != 0 {
		t.Errorf("best half-lives miss %v held-out reads, want none", best["misses"])
	}
	if c, d := num(t, best, "clutter_days"), num(t, cur, "clutter_days"); !(c <= d/2) {
		t.Errorf("clutter %v node-days with the best half-lives, want at most half the declared %v", c, d)
	}
	for _, want := range []string{"durable", "30d → " + tiers["durable"].(string), "held-out misses", "MRR"} {
		if !strings.Contains(text, want) {
			t.Errorf("tune's table lacks %q:\n%s", want, text)
		}
	}

	applied := at("tune", "--db", path, "--apply").stdout
	for _, tier := range []string{"durable", "standard", "ephemeral"} {
		if want := fmt.Sprintf("tiers.%s: 30d → %s", tier, tiers[tier]); !strings.Contains(applied, want) {
			t.Errorf("tune --apply does not print %q:\n%s", want, applied)
		}
	}
	show := at("map", "show", "--db", path).stdout
	for _, tier := range []string{"durable", "standard", "ephemeral"} {
		if want := fmt.Sprintf("%-20s %s (from the mapping)", tier, tiers[tier]); !strings.Contains(show, want) {
			t.Errorf("map show after tune --apply lacks %q:\n%s", want, show)
		}
	}
	again := decodeJSON(t, at("tune", "--db", path, "--json"))
	if got := again["current"].(map[string]any)["tiers"]; fmt.Sprint(got) != fmt.Sprint(tiers) {
		t.Errorf("after --apply the declared half-lives are %v, want %v", got, tiers)
	}
}

func TestTuneSkipsHostileReads(t *testing.T) {
	path, file := tuneApp(t, `INSERT INTO reads (note_id, read_at) VALUES (NULL, '2026-05-01T00:00:00Z'), (1, 'last week'), (1, NULL),
    (2, '2027-01-01T00:00:00Z'), (9999, '2026-05-02T00:00:00Z'), (3, x'00');`)
	mwAt(t, tuneWall, "migrate", "up", "--db", path)
	if r := mwAt(t, tuneWall, "map", "load", file, "--db", path); r.code != exitOK {
		t.Fatal(r)
	}
	r := mwAt(t, tuneWall, "tune", "--db", path)
	if r.code != exitOK {
		t.Fatal(r)
	}
	for _, want := range []string{"Skipped 6 rows of reads (1 no node key, 3 no time, 1 after now, 1 no such node)",
		"reads.note_id is NULL", `reads.read_at is text last week, not a time on the wall clock (ISO-8601 text)`, "reads.read_at is NULL",
		"reads.read_at 2027-01-01T00:00:00Z is after now", "reads.note_id 9999 is no node's key"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("tune does not say %q:\n%s", want, r.stdout)
		}
	}
	m := decodeJSON(t, mwAt(t, tuneWall, "tune", "--db", path, "--json"))
	if got := fmt.Sprint(m["skipped"]); got != "map[future:1 node:1 time:3 unknown:1]" {
		t.Errorf("tune --json skipped %s", got)
	}
}

func TestTuneRefusals(t *testing.T) {
	path := demoDB(t)
	r := mw(t, "tune", "--db", path)
	wantExit(t, r, exitFailure, "tune: no read log", "preset mem")
	before := fileHash(t, path)
	r = mw(t, "tune", "--apply", "--db", path)
	wantExit(t, r, exitFailure, "tune --apply: the mapping in force is the preset mem", "nothing was changed")
	if fileHash(t, path) != before {
		t.Fatal("a refused tune --apply changed the file")
	}
	wantUsage(t, mw(t, "tune", "--holdout", "1.5", "--db", path), "--holdout 1.5")
	wantUsage(t, mw(t, "tune", "--miss-budget", "-1", "--db", path))
	wantUsage(t, mw(t, "tune", "--plot", "x.gif", "--db", path), "--plot")
}

// With nodes.record_accesses, the change capture on the app's own table
// records a read whenever the app moves last_used forward: not when it
// moves it back, and not when a sweep reinforces a node.
func TestRecordAccessesTrigger(t *testing.T) {
	dir := t.TempDir()
	path, file := filepath.Join(dir, "app.db"), filepath.Join(dir, "memory.toml")
	mapFile := `
[settings]
reinforce_top_n = 2

[nodes]
table = "notes"
key = "id"
last_used = "last_seen"
last_used_clock = "iso8601"
status = "state"
status_active = ["active"]
status_archived = "archived"
record_accesses = true
`
	if err := os.WriteFile(file, []byte(mapFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := plainShell(t, path, `
CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT NOT NULL DEFAULT 'active', last_seen TEXT);
INSERT INTO notes (id, last_seen) VALUES (1, '2026-05-30T10:00:00Z'), (2, '2026-05-30T11:00:00+02:00'), (3, '2026-05-31T00:00:00Z');`); err != nil {
		t.Fatalf("the app's schema: %v\n%s", err, out)
	}
	at := okAt(t, tuneWall)
	at("migrate", "up", "--db", path)
	at("map", "load", file, "--db", path)
	recorded := func() string {
		return strings.Join(queryRows(t, path, `SELECT node || '@' || at FROM mem_accesses ORDER BY seq`), " ")
	}

	// The app reads note 1 (forward), note 2 in another offset (forward as
	// an instant: 09:30Z is after 09:00Z), note 3 back in time (no read).
	exec1(t, path, `UPDATE notes SET last_seen = '2026-05-31T09:00:00Z' WHERE id = 1`)
	exec1(t, path, `UPDATE notes SET last_seen = '2026-05-30T11:30:00+02:00' WHERE id = 2`)
	exec1(t, path, `UPDATE notes SET last_seen = '2026-05-30T00:00:00Z' WHERE id = 3`)
	exec1(t, path, `UPDATE notes SET state = 'active' WHERE id = 1`) // no change of last_seen
	if got, want := recorded(), "1@2026-05-31T09:00:00Z 2@2026-05-30T11:30:00+02:00"; got != want {
		t.Fatalf("mem_accesses after the app's writes: %q, want %q", got, want)
	}

	// A sweep reinforces two nodes (their last_seen moves to now): no read.
	m := decodeJSON(t, at("sweep", "--json", "--wall-now", "2026-06-01T12:00:00Z", "--db", path))
	if num(t, m, "reinforced") == 0 {
		t.Fatalf("the sweep reinforced no node: %v", m)
	}
	if n := queryOne(t, path, `SELECT count(*) FROM notes WHERE last_seen LIKE '2026-06-01%'`); n == "0" {
		t.Fatal("the sweep's reinforcement wrote no last_seen")
	}
	if got := recorded(); got != "1@2026-05-31T09:00:00Z 2@2026-05-30T11:30:00+02:00" {
		t.Fatalf("the sweep's reinforcement was recorded as a read: %q", got)
	}
	if n := queryOne(t, path, `SELECT count(*) FROM mem_config WHERE key = 'sweep_reinforcing'`); n != "0" {
		t.Fatal("the sweep left its sweep_reinforcing row behind")
	}
	// The app's next read after the sweep is recorded again.
	exec1(t, path, `UPDATE notes SET last_seen = '2026-06-01T13:00:00Z' WHERE id = 3`)
	if got := recorded(); !strings.HasSuffix(got, " 3@2026-06-01T13:00:00Z") {
		t.Fatalf("the app's read after the sweep: %q", got)
	}

	// A restore moves the node's last_seen to now: memworker's write, no read.
	before := recorded()
	at("sweep", "--wall-now", "2026-09-01T00:00:00Z", "--db", path)
	if queryOne(t, path, `SELECT state FROM notes WHERE id = 1`) != "archived" {
		t.Fatal("note 1 was not archived three months unread")
	}
	at("restore", "--block", "1", "--db", path)
	if queryOne(t, path, `SELECT state FROM notes WHERE id = 1`) != "active" {
		t.Fatal("note 1 was not restored")
	}
	if got := recorded(); got != before {
		t.Errorf("a restore was recorded as a read: %q, was %q", got, before)
	}
	if n := queryOne(t, path, `SELECT count(*) FROM mem_config WHERE key = 'sweep_reinforcing'`); n != "0" {
		t.Fatal("the restore left its marker behind")
	}
}
