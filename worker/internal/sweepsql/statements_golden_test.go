package sweepsql

import (
	"flag"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/internal/golden"
)

var updateStatements = flag.Bool("update-statements", false, "rewrite testdata/statements.golden")

// Every named statement as the sweep runs it, macros expanded, is kept in
// testdata/statements.golden: a change to the SQL files or to a rule
// macro shows there in review, and a refactor that must not change the
// statements (macros moved, names generated) proves it leaves the file as
// it was. go test ./worker/internal/sweepsql -run TestStatementsGolden -update-statements
// rewrites it.
func TestStatementsGolden(t *testing.T) {
	names := make([]string, 0, len(Statements))
	for name := range Statements {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString("-- name: " + name + "\n")
		for _, s := range MemTables.Stmts(name) {
			b.WriteString(s + "\n;\n")
		}
		b.WriteString("\n")
	}
	golden.Check(t, filepath.Join("testdata", "statements.golden"), b.String(), *updateStatements, false,
		"go test ./worker/internal/sweepsql -run TestStatementsGolden -update-statements")
}
