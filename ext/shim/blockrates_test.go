package shim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

// TestBlockRateIsTheLookup: memdecay_block_rate(rates, v) is what
// (SELECT lambda FROM rates WHERE id = v) finds for a text v, to the bit,
// from its hash table and, where the table is too big to hold, from that
// query; any other value is no id (NULL).
func TestBlockRateIsTheLookup(t *testing.T) {
	db := openMemDB(t)
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`CREATE TEMP TABLE rates (id TEXT PRIMARY KEY, lambda REAL) WITHOUT ROWID`)
	mustExec(`INSERT INTO rates VALUES ('a', 0.05), ('b', NULL), ('ü', 0.001), ('', 1e-5), ('5', 0.1),
		('a ', 0.2), ('A', 0.3), ('1.5', 0.4), ('x' || char(0) || 'y', 0.6)`)
	mustExec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
		INSERT INTO rates SELECT 'b' || i, 1.0 / (i + 3) FROM n`)
	// A value of every kind, found or not; no affinity, so each stays as written.
	mustExec(`CREATE TEMP TABLE probe (v)`)
	mustExec(`INSERT INTO probe VALUES ('a'), ('b'), ('ü'), (''), ('5'), (5), (5.0), (1.5), ('a '), ('A'), ('c'),
		(x'61'), (NULL), ('x' || char(0) || 'y'), ('x'), ('b17'), ('b5000'), ('b5001'), ('b0')`)
	mustExec(`INSERT INTO probe SELECT id FROM rates`)
	const lookup = `CASE WHEN typeof(p.v) = 'text' THEN (SELECT lambda FROM rates r WHERE r.id = p.v) END`
	differ := func() int64 {
		t.Helper()
		var n int64
		if err := db.QueryRow(`SELECT count(*) FROM probe p
			WHERE memdecay_block_rate('rates', p.v) IS NOT ` + lookup).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := differ(); n != 0 {
		t.Errorf("held in memory: %d values found otherwise than by the query", n)
	}
	var found float64
	if err := db.QueryRow(`SELECT memdecay_block_rate('rates', 'b17')`).Scan(&found); err != nil || found != 1.0/20 {
		t.Errorf("memdecay_block_rate('rates', 'b17') = %v, %v; want %v", found, err, 1.0/20)
	}

	// The table's name may come from a column: looked up again each row.
	mustExec(`CREATE TEMP TABLE named AS SELECT 'rates' AS t, v FROM probe`)
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM named p
		WHERE memdecay_block_rate(p.t, p.v) IS NOT ` + lookup).Scan(&n); err != nil || n != 0 {
		t.Errorf("rates from a column: %d differ, %v", n, err)
	}

	// Too big to hold: every value by the query, the same answers.
	pad := strings.Repeat("p", 200)
	rows := shim.BlockRatesMaxBytes/(len(pad)+shim.BlockRateRowBytes) + 1
	mustExec(fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
		INSERT INTO rates SELECT '%s' || i, 1.0 / i FROM n`, rows, pad))
	mustExec(`INSERT INTO probe SELECT id FROM rates WHERE id LIKE 'pp%' AND CAST(substr(id, 201) AS INTEGER) % 1000 = 0`)
	if n := differ(); n != 0 {
		t.Errorf("too big to hold: %d values found otherwise than by the query", n)
	}
}

func TestBlockRateErrors(t *testing.T) {
	db := openMemDB(t)
	if _, err := db.Exec(`CREATE TEMP TABLE rates (id TEXT PRIMARY KEY, lambda REAL) WITHOUT ROWID`); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		`SELECT memdecay_block_rate('nope', 'a')`:   "memdecay_block_rate: reading nope: no such table: temp.nope",
		`SELECT memdecay_block_rate(1, 'a')`:        "memdecay_block_rate: rates must be a table's name",
		`SELECT memdecay_block_rate('rates')`:       "wrong number of arguments to function memdecay_block_rate()",
		`SELECT memdecay_block_rate(NULL, 'a')`:     "memdecay_block_rate: rates must be a table's name",
		`SELECT memdecay_block_rate('ra"tes', 'a')`: `memdecay_block_rate: reading ra"tes: no such table: temp.ra"tes`,
	} {
		if _, err := selectValue(db, strings.TrimPrefix(q, "SELECT ")); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", q, err, want)
		}
	}
	// No view or trigger of a file can call it.
	if _, err := db.Exec(`CREATE VIEW v AS SELECT memdecay_block_rate('rates', 'a') AS r`); err != nil {
		t.Fatal(err)
	}
	if _, err := selectValue(db, `r FROM v`); err == nil || !strings.Contains(err.Error(), "unsafe use of memdecay_block_rate()") {
		t.Errorf("a view called memdecay_block_rate: %v", err)
	}
}
