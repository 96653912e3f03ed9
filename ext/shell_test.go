package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

// TestShellEveryFunction runs the everyFunction table in the sqlite3 shell
// and checks each value, and that the linked build gives the same.
func TestShellEveryFunction(t *testing.T) {
	exprs := exprsOf(everyFunction)
	got, other, r := shellCases(t, exprs)
	checkSurvived(t, r)
	if len(other) > 0 {
		t.Errorf("unexpected stderr:\n%s", strings.Join(other, "\n"))
	}
	want := linked(t, exprs)
	for i, c := range everyFunction {
		if !got[i].ran || got[i].err != "" || !sameValue(got[i].value, c.want) {
			t.Errorf("shell: SELECT %s = %v, want %#v", c.expr, got[i], c.want)
		}
		if !sameOutcome(got[i], want[i]) {
			t.Errorf("SELECT %s: shell %v, linked build %v", c.expr, got[i], want[i])
		}
	}

	r = runShell(t, ":memory:", "SELECT memdecay_debug();\n")
	for _, part := range []string{"memdecay 0.1.0", "SQLite 3.", "loadable extension"} {
		if !strings.Contains(r.stdout, part) {
			t.Errorf("memdecay_debug() = %q, want it to contain %q", r.stdout, part)
		}
	}
}

// TestShellFunctionList checks that the shell sees every function of the
// registry at each of its arities, deterministic and innocuous.
func TestShellFunctionList(t *testing.T) {
	const (
		deterministic = 0x800
		innocuous     = 0x200000
	)
	var names []string
	for _, f := range shim.Functions() {
		names = append(names, "'"+f.Name+"'")
	}
	r := runShell(t, ":memory:", fmt.Sprintf(".mode json\n"+
		"SELECT name, narg, flags, enc FROM pragma_function_list WHERE name IN (%s) ORDER BY name, narg;\n",
		strings.Join(names, ", ")))
	if r.exitCode != 0 {
		t.Fatalf("sqlite3 exited %d: %s", r.exitCode, r.stderr)
	}
	var rows []struct {
		Name  string `json:"name"`
		Narg  int    `json:"narg"`
		Flags int    `json:"flags"`
		Enc   string `json:"enc"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	got := map[string][]int{}
	for _, row := range rows {
		got[row.Name] = append(got[row.Name], row.Narg)
		if row.Flags&deterministic == 0 || row.Flags&innocuous == 0 {
			t.Errorf("%s/%d: flags %#x lack SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS", row.Name, row.Narg, row.Flags)
		}
		if row.Enc != "utf8" {
			t.Errorf("%s/%d: enc %q, want utf8", row.Name, row.Narg, row.Enc)
		}
	}
	for _, f := range shim.Functions() {
		var want []int
		for n := f.MinArgs; n <= f.MaxArgs(); n++ {
			want = append(want, n)
		}
		if name := f.Name; !slices.Equal(got[name], want) {
			t.Errorf("%s: arities %v in pragma_function_list, want %v", name, got[name], want)
		}
	}
}

// TestShellSchema uses the functions in a view and an expression index of
// a file database, then reopens the file in a second shell process.
func TestShellSchema(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	r := runShell(t, db, `.bail on
CREATE TABLE edge(id INTEGER PRIMARY KEY, tags TEXT, category TEXT, w REAL, l REAL, e REAL);
CREATE INDEX edge_weight ON edge(effective_weight(w, l, e));
CREATE VIEW edge_now AS
  SELECT id, decay_tier(tags, category) AS tier, effective_weight(w, l, e) AS ew FROM edge;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99)
INSERT INTO edge SELECT i, CASE WHEN i % 2 THEN '["self/value"]' END, 'fact', 1, 0.1, i FROM n;
`)
	if r.exitCode != 0 {
		t.Fatalf("creating the schema: exit %d: %s", r.exitCode, r.stderr)
	}

	// Rows 7..99 have exp(-0.1 i) < 0.5; odd ids are durable.
	const query = `PRAGMA trusted_schema = OFF;
SELECT count(*) || '|' || printf('%.9f', sum(ew)) || '|' || group_concat(DISTINCT tier) FROM (SELECT * FROM edge_now WHERE ew < 0.5 ORDER BY tier);
EXPLAIN QUERY PLAN SELECT id FROM edge WHERE effective_weight(w, l, e) < 0.5;
`
	sum := 0.0
	for i := 7; i < 100; i++ {
		sum += math.Exp(-0.1 * float64(i))
	}
	want := fmt.Sprintf("93|%.9f|durable,standard", sum)
	for _, process := range []string{"first", "second"} {
		r := runShell(t, db, ".bail on\n"+query)
		if r.exitCode != 0 {
			t.Fatalf("%s reader: exit %d: %s", process, r.exitCode, r.stderr)
		}
		if !strings.Contains(r.stdout, want) {
			t.Errorf("%s reader: view gave %q, want %q", process, r.stdout, want)
		}
		if !strings.Contains(r.stdout, "INDEX edge_weight") {
			t.Errorf("%s reader: query plan does not use the expression index:\n%s", process, r.stdout)
		}
	}

	// Without the extension the view cannot be read: it really uses it.
	cmd := exec.Command(sqlite3Shell(t), "-batch", db, "SELECT count(*) FROM edge_now")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no such function") {
		t.Errorf("reading the view without the extension: %v %s", err, out)
	}
}
