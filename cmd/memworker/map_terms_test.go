package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// termsWall is when the terms' test sweeps.
var termsWall = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// termsTables is the app of worker/mapping/testdata/terms.toml: fresh
// notes, cites links last seen 190 and 170 days before termsWall (on both
// sides of its policy's 180 days), and a relates link it does not name.
func termsTables() string {
	wall, day := termsWall.Unix(), int64(86400)
	fresh := wall - 3600
	return fmt.Sprintf(`
CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT DEFAULT 'active', used_at INTEGER);
CREATE TABLE links (id INTEGER PRIMARY KEY, src INTEGER REFERENCES notes (id), dst INTEGER REFERENCES notes (id),
	kind TEXT NOT NULL, strength REAL, touched_at INTEGER, seen_at INTEGER, hidden INTEGER DEFAULT 0);
INSERT INTO notes (id, used_at) VALUES (1, %[1]d), (2, %[1]d), (3, %[1]d), (4, %[1]d);
INSERT INTO links (id, src, dst, kind, strength, touched_at, seen_at) VALUES
	(1, 1, 2, 'cites', 1.0, %[1]d, %[2]d), (2, 2, 3, 'cites', 1.0, %[1]d, %[3]d), (3, 1, 3, 'relates', 0.9, %[1]d, NULL);
INSERT INTO mem_edge_policies (relation_type, model, params) VALUES ('mentions', 'half_life', '{"half_life": "3d"}');
`, fresh, wall-190*day, wall-170*day)
}

// termsDB is a migrated file holding termsTables, and terms.toml beside it.
func termsDB(t *testing.T) (db, file string) {
	t.Helper()
	dir := t.TempDir()
	db = filepath.Join(dir, "app.db")
	ok(t, "migrate", "up", "--db", db)
	exec1(t, db, termsTables())
	text, err := os.ReadFile("../../worker/mapping/testdata/terms.toml")
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "terms.toml")
	if err := os.WriteFile(file, []byte(strings.Replace(string(text), "= 0.05", "= 0.07", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return db, file
}

// bytesOf is the database's file and its WAL, as they are on disk.
func bytesOf(t *testing.T, db string) string {
	t.Helper()
	var sums []string
	for _, f := range []string{db, db + "-wal", db + "-journal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		sums = append(sums, fmt.Sprintf("%x", sha256.Sum256(b)))
	}
	return strings.Join(sums, " ")
}

// map load --check shows what the terms would change and writes nothing;
// map load puts them in force; map show marks them; a sweep decays by them.
func TestMapTermsLoadShowSweep(t *testing.T) {
	db, file := termsDB(t)
	before := bytesOf(t, db)
	r := ok(t, "map", "load", "--check", file, "--db", db)
	for _, want := range []string{"nothing was stored", "Declaring it would put in force:",
		"settings.block_prune_threshold = 0.07 (now 0.05)", "settings.curate_interval_hours = 2d (now 40)",
		`policy cites: half_life {"half_life":"180d"} on the wall clock, threshold 0.5, exclude, orphans keep (new)`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("map load --check lacks %q:\n%s", want, r.stdout)
		}
	}
	if bytesOf(t, db) != before {
		t.Fatal("map load --check changed the file")
	}
	if v := ok(t, "config", "get", "block_prune_threshold", "--db", db).stdout; v != "0.05\n" {
		t.Errorf("after --check, block_prune_threshold %q", v)
	}

	ok(t, "map", "load", file, "--db", db)
	for key, want := range map[string]string{"block_prune_threshold": "0.07", "curate_interval_hours": "48.0"} {
		if v := strings.TrimSpace(ok(t, "config", "get", key, "--db", db).stdout); v != want {
			t.Errorf("config get %s: %s, want %s", key, v, want)
		}
	}
	rows := queryRows(t, db, `SELECT relation_type, model, params, clock, threshold, action, orphans FROM mem_edge_policies ORDER BY 1`)
	if want := []string{`cites|half_life|{"half_life":"180d"}|wall|0.5|exclude|keep`, `mentions|half_life|{"half_life": "3d"}|active_hours|NULL|delete|keep`}; strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("mem_edge_policies:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	show := ok(t, "map", "show", "--db", db).stdout
	for _, want := range []string{
		"  block_prune_threshold        0.07       from terms.toml\n",
		"  curate_interval_hours        48.0       from terms.toml\n",
		"  reinforce_top_n              5\n",
		`  cites                half_life {"half_life":"180d"} on the wall clock, threshold 0.5, exclude, orphans keep  from terms.toml`,
		`  mentions             half_life {"half_life": "3d"} on wall-clock hours, default threshold, delete, orphans keep  not in terms.toml: left as it was`,
	} {
		if !strings.Contains(show, want) {
			t.Errorf("map show lacks %q:\n%s", want, show)
		}
	}
	terms := decodeJSON(t, ok(t, "map", "show", "--json", "--db", db))["terms"].(map[string]any)
	if p := terms["policies"].([]any)[0].(map[string]any); p["kind"] != "cites" || p["from_file"] != true {
		t.Errorf("map show --json: terms.policies[0] %v", p)
	}

	// Changed since by config set: map show says so.
	ok(t, "config", "set", "block_prune_threshold", "0.2", "--db", db)
	if show := ok(t, "map", "show", "--db", db).stdout; !strings.Contains(show, "  block_prune_threshold        0.2        terms.toml says 0.07; changed since") {
		t.Errorf("map show after config set:\n%s", show)
	}

	ok(t, "sweep", "--db", db, "--wall-now", termsWall.Format(time.RFC3339))
	if got := strings.Join(queryRows(t, db, `SELECT id || ':' || hidden FROM links ORDER BY id`), " "); got != "1:1 2:0 3:0" {
		t.Errorf("links id:hidden %s; want 1:1 2:0 3:0 (the cites link unseen for 190 days excluded, every row kept)", got)
	}

	// The preset path leaves the terms in force as they are.
	ok(t, "map", "use", "mem", "--db", db)
	if n := queryRows(t, db, `SELECT count(*) FROM mem_edge_policies`); n[0] != "2" {
		t.Errorf("after map use mem: %s policies, want 2", n[0])
	}
}

// A bad setting or policy in the file is refused, in one line naming its
// key, with or without --check, and the file is not changed.
func TestMapTermsRefused(t *testing.T) {
	db, file := termsDB(t)
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before := bytesOf(t, db)
	for old, want := range map[string]string{
		"block_prune_threshold = 0.07": "settings.block_prune_threshold: 7 is out of range [0, 1]",
		"curate_interval_hours":        "settings.curate_interval_hour: unknown key",
		`half_life = "180d"`:           `policies[0].half_life (kind "cites"): "180 days" is not a duration`,
		`action = "exclude"`:           `policies[0].action: "hide" is not delete or exclude`,
	} {
		repl := map[string]string{"block_prune_threshold = 0.07": "block_prune_threshold = 7", "curate_interval_hours": "curate_interval_hour",
			`half_life = "180d"`: `half_life = "180 days"`, `action = "exclude"`: `action = "hide"`}[old]
		bad := filepath.Join(filepath.Dir(file), "bad.toml")
		if err := os.WriteFile(bad, []byte(strings.Replace(string(text), old, repl, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, check := range [][]string{nil, {"--check"}} {
			r := mw(t, append(append([]string{"map", "load"}, check...), bad, "--db", db)...)
			wantExit(t, r, exitFailure, want)
			if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("more than one line: %s", r.stderr)
			}
		}
	}
	if bytesOf(t, db) != before {
		t.Error("a refused mapping changed the file")
	}
}
