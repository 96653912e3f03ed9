package worker

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var updateStatements = flag.Bool("update-statements", false, "rewrite testdata/statements.golden")

// Every named statement as the sweep runs it, macros expanded, is kept in
// testdata/statements.golden: a change to the SQL files or to a rule
// macro shows there in review, and a refactor that must not change the
// statements (macros moved, names generated) proves it leaves the file as
// it was. go test ./worker -run TestStatementsGolden -update-statements
// rewrites it.
func TestStatementsGolden(t *testing.T) {
	names := make([]string, 0, len(statements))
	for name := range statements {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString("-- name: " + name + "\n")
		for _, s := range statements[name] {
			b.WriteString(s + "\n;\n")
		}
		b.WriteString("\n")
	}
	file := filepath.Join("testdata", "statements.golden")
	if *updateStatements {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./worker -run TestStatementsGolden -update-statements writes it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end)"
		}
		t.Errorf("the expanded statements differ from %s at line %d:\n want: %s\n got:  %s\n(if the change is meant: go test ./worker -run TestStatementsGolden -update-statements)",
			file, i+1, line(wl), line(gl))
	}
}
