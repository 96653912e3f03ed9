package sweepsql

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// TestPlainlyValidEdgeIsTheRule: validEdge, which answers most rows with
// plainlyValidEdge's few comparisons, decides every hostile row as the
// rule does (edgeValidByRule), in a table with memworker's column types and
// in one whose columns have no type (an app's table, where any value
// stays as written), for memworker's dialect and a mapping's (whose edges
// have separate ends).
func TestPlainlyValidEdgeIsTheRule(t *testing.T) {
	db, err := memdb.Open(filepath.Join(t.TempDir(), "v.db"), memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Every value some column may hold: numbers at and past the bounds,
	// numbers as text, times as text, blobs, NULL.
	hostile := []string{"NULL", "0", "1", "-1", "0.5", "-0.0", "2", "1e308", "-1e308", "9e999", "-9e999",
		"9223372036854775807", "-9223372036854775808", "1.0", "'0.5'", "'1'", "'x'", "''", "' 1'",
		"'2026-01-01T00:00:00Z'", "'2026-13-45'", "x''", "x'00'", "x'31'", "'a'", "'z'", "0.0"}
	valid := map[string]string{"from_id": "'a'", "to_id": "'b'", "relation_type": "'similar'", "weight": "0.5",
		"reinforcement_count": "2", "last_active_hours": "10", "last_observed_at": "1800000000", "pinned": "0",
		"end_a": "'a'", "end_b": "'b'"}
	cols := []string{"from_id", "to_id", "relation_type", "weight", "reinforcement_count", "last_active_hours",
		"last_observed_at", "pinned", "end_a", "end_b"}
	typed := map[string]string{"from_id": "TEXT", "to_id": "TEXT", "relation_type": "TEXT", "weight": "REAL",
		"reinforcement_count": "INTEGER", "last_active_hours": "REAL", "last_observed_at": "INTEGER", "pinned": "INTEGER",
		"end_a": "TEXT", "end_b": "TEXT"}
	rows := [][]string{}
	row := func(change map[string]string) []string {
		r := make([]string, len(cols))
		for i, c := range cols {
			r[i] = valid[c]
			if v, ok := change[c]; ok {
				r[i] = v
			}
		}
		return r
	}
	rows = append(rows, row(nil))
	for _, c := range cols {
		for _, v := range hostile {
			rows = append(rows, row(map[string]string{c: v}))
		}
	}
	rng := rand.New(rand.NewSource(7))
	for range 3000 {
		change := map[string]string{}
		for range 1 + rng.Intn(3) {
			change[cols[rng.Intn(len(cols))]] = hostile[rng.Intn(len(hostile))]
		}
		rows = append(rows, row(change))
	}
	for _, affinity := range []string{"typed", "untyped"} {
		defs := make([]string, len(cols))
		for i, c := range cols {
			defs[i] = c
			if affinity == "typed" {
				defs[i] += " " + typed[c]
			}
		}
		table := "edges_" + affinity
		if _, err := db.SQL.Exec(fmt.Sprintf("CREATE TABLE %s (%s)", table, strings.Join(defs, ", "))); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if _, err := db.SQL.Exec(fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), strings.Join(r, ", "))); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range []struct {
			name    string
			dialect *Dialect
		}{
			{"mem", MemTables},
			{"mapped", NewDialect("@ENDS_PRESENT", "e.end_a IS NOT NULL AND e.end_b IS NOT NULL AND ",
				"@END_PROBLEMS", "WHEN e.end_a IS NULL THEN 'from is NULL' WHEN e.end_b IS NULL THEN 'to is NULL'\n\t")},
		} {
			query := d.dialect.Expand(fmt.Sprintf(`SELECT quote(from_id), quote(to_id), quote(relation_type), quote(weight),
				quote(reinforcement_count), quote(last_active_hours), quote(last_observed_at), quote(pinned), quote(end_a), quote(end_b),
				%s, %s, %s FROM %s e`, ValidEdge, edgeValidByRule, plainlyValidEdge, table))
			got, err := db.SQL.Query(query)
			if err != nil {
				t.Fatal(err)
			}
			plain, invalid, n := 0, 0, 0
			for got.Next() {
				vals := make([]string, len(cols))
				var quick, rule int
				var plainly *int
				dest := []any{}
				for i := range vals {
					dest = append(dest, &vals[i])
				}
				if err := got.Scan(append(dest, &quick, &rule, &plainly)...); err != nil {
					t.Fatal(err)
				}
				n++
				if plainly != nil && *plainly == 1 {
					plain++
				}
				if rule == 0 {
					invalid++
				}
				if quick != rule {
					t.Errorf("%s table, %s dialect: validEdge says %d, the rule %d, for (%s)", affinity, d.name, quick, rule, strings.Join(vals, ", "))
				}
			}
			if err := got.Err(); err != nil {
				t.Fatal(err)
			}
			got.Close()
			// Both answers are exercised: rows the comparisons pass, and
			// valid and invalid rows left to the rule.
			if plain == 0 || invalid == 0 || plain+invalid == n {
				t.Errorf("%s table, %s dialect: %d rows, %d passed plainly, %d invalid: the cases do not cover both paths",
					affinity, d.name, n, plain, invalid)
			}
		}
	}
}

// TestEdgeStrengthShortcutIsTheFunction: edgeStrength, which takes an
// unreinforced edge's weight as its strength without calling
// edge_strength, gives the function's bits for every valid weight and
// count, 0 and -0.0 counts among them, stored as integers and reals.
func TestEdgeStrengthShortcutIsTheFunction(t *testing.T) {
	db, err := memdb.Open(filepath.Join(t.TempDir(), "s.db"), memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	weights := []string{"0", "0.0", "-0.0", "5e-324", "1e-300", "0.1", "0.5", "1", "3", "0.30000000000000004", "1048575.9999999999",
		"1048576", "1048577", "1e300", "1.7976931348623157e308", "9007199254740993", "9223372036854775807"}
	counts := []string{"0", "0.0", "-0.0", "1", "2.5", "1e300"}
	for _, affinity := range []string{"REAL", ""} {
		table := "e_" + map[string]string{"REAL": "real", "": "untyped"}[affinity]
		if _, err := db.SQL.Exec(fmt.Sprintf("CREATE TABLE %s (weight %s, reinforcement_count %s)", table, affinity, affinity)); err != nil {
			t.Fatal(err)
		}
		for _, w := range weights {
			for _, c := range counts {
				if _, err := db.SQL.Exec(fmt.Sprintf("INSERT INTO %s VALUES (%s, %s)", table, w, c)); err != nil {
					t.Fatal(err)
				}
			}
		}
		rows, err := db.SQL.Query(fmt.Sprintf(`SELECT quote(weight), quote(reinforcement_count), quote(%s), quote(%s) FROM %s e`,
			edgeStrength, fixedPointStrength("edge_strength(e.weight, e.reinforcement_count)"), table))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var w, c, quick, byCall string
			if err := rows.Scan(&w, &c, &quick, &byCall); err != nil {
				t.Fatal(err)
			}
			n++
			if quick != byCall {
				t.Errorf("%s: weight %s, count %s: strength %s, edge_strength gives %s", table, w, c, quick, byCall)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if n != len(weights)*len(counts) {
			t.Errorf("%s: %d rows compared, want %d", table, n, len(weights)*len(counts))
		}
	}
}
