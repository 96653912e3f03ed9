package shim_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

// sumsByGroupBy is what memdecay_sum_ends stands for, in SQL.
const sumsByGroupBy = `INSERT INTO want SELECT id, sum(x), coalesce(sum(y), 0)
	FROM (SELECT a AS id, x, y FROM edges UNION ALL SELECT b, x, y FROM edges) GROUP BY id`

// sumTables makes the edges to sum and the two tables the sums go into.
func sumTables(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		`CREATE TEMP TABLE edges (a, b, x, y)`,
		`CREATE TEMP TABLE got (id TEXT PRIMARY KEY, strength REAL, removed REAL) WITHOUT ROWID`,
		`CREATE TEMP TABLE want (id TEXT PRIMARY KEY, strength REAL, removed REAL) WITHOUT ROWID`,
		`CREATE TEMP TABLE got1 (id TEXT PRIMARY KEY, strength REAL) WITHOUT ROWID`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// sameSums says where got and want differ, value and type, row by row.
func sameSums(t *testing.T, db *sql.DB, what string) {
	t.Helper()
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM (
		SELECT id, strength, typeof(strength), removed, typeof(removed) FROM got
		EXCEPT SELECT id, strength, typeof(strength), removed, typeof(removed) FROM want)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var rows, wantRows int64
	db.QueryRow(`SELECT count(*) FROM got`).Scan(&rows)
	db.QueryRow(`SELECT count(*) FROM want`).Scan(&wantRows)
	if n != 0 || rows != wantRows {
		t.Errorf("%s: %d of %d sums differ from the GROUP BY's (%d rows)", what, n, rows, wantRows)
	}
}

// TestSumEndsIsTheGroupBy: memdecay_sum_ends writes, to the bit, the rows
// GROUP BY sums by both ends give: ids as bytes (case, trailing space, an
// embedded NUL, the empty string), NULL values skipped (an id with none
// has a NULL sum, and a second sum of 0), fixed-point strengths summed
// exactly in any order; with one sum or two.
func TestSumEndsIsTheGroupBy(t *testing.T) {
	db := openMemDB(t)
	sumTables(t, db)
	insert := func(a, b string, x, y any) {
		t.Helper()
		if _, err := db.Exec(`INSERT INTO edges VALUES (?, ?, ?, ?)`, a, b, x, y); err != nil {
			t.Fatal(err)
		}
	}
	insert("a", "b", 0.5, nil)
	insert("a", "A", 0.25, 0.25)
	insert("a ", "ü", 1.0/(1<<32), 1.0/(1<<32))
	insert("x\x00y", "", 1048576.0, nil)
	insert("", "x", nil, nil)
	insert("lonely", "nothing", nil, nil)
	insert("b", "A", 3, nil) // an integer sums as sum() does
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		a, b := fmt.Sprintf("n%d", rng.IntN(3000)), fmt.Sprintf("n%d", rng.IntN(3000))
		x := math.Round(rng.Float64()*4*(1<<32)) / (1 << 32) // a strength: a multiple of 2^-32
		var y any
		if i%3 == 0 {
			y = x
		}
		insert(a, b, x, y)
	}
	if _, err := db.Exec(sumsByGroupBy); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRow(`SELECT memdecay_sum_ends('SELECT a, b, x, y FROM edges', 'got')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var want int64
	db.QueryRow(`SELECT count(*) FROM want`).Scan(&want)
	if n != want {
		t.Errorf("memdecay_sum_ends wrote %d sums, want %d", n, want)
	}
	sameSums(t, db, "two sums")

	// One sum: (a, b, x) rows into (id, sum) rows.
	if err := db.QueryRow(`SELECT memdecay_sum_ends('SELECT a, b, x FROM edges', 'got1')`).Scan(&n); err != nil || n != want {
		t.Fatalf("one sum: %d rows, %v; want %d", n, err, want)
	}
	var differ int64
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT id, strength, typeof(strength) FROM got1
		EXCEPT SELECT id, strength, typeof(strength) FROM want)`).Scan(&differ); err != nil || differ != 0 {
		t.Errorf("one sum: %d differ (%v)", differ, err)
	}
	var none any
	if err := db.QueryRow(`SELECT strength FROM got1 WHERE id = 'lonely'`).Scan(&none); err != nil || none != nil {
		t.Errorf("an id with no value: sum %v (%v), want NULL", none, err)
	}
}

// With more ids than its memory holds, memdecay_sum_ends writes nothing
// and answers NULL; just under, it writes them all.
func TestSumEndsTooBigToHold(t *testing.T) {
	db := openMemDB(t)
	sumTables(t, db)
	pad := strings.Repeat("p", 4000)
	fits := shim.SumsMaxBytes / (len(pad) + 8 + shim.SumRowBytes) // ids of pad and up to 8 digits
	fill := func(ids int) {
		t.Helper()
		if _, err := db.Exec(`DELETE FROM edges; DELETE FROM got`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 2 FROM n WHERE i + 2 < %d)
			INSERT INTO edges SELECT '%s' || i, '%s' || (i + 1), 1.0, NULL FROM n`, ids, pad, pad)); err != nil {
			t.Fatal(err)
		}
	}
	fill(fits - 2)
	var n sql.NullInt64
	if err := db.QueryRow(`SELECT memdecay_sum_ends('SELECT a, b, x, y FROM edges', 'got')`).Scan(&n); err != nil || !n.Valid || n.Int64 != int64(fits-2) {
		t.Errorf("%d ids that fit: %v, %v; want them all written", fits-2, n, err)
	}
	fill(fits + 200)
	if err := db.QueryRow(`SELECT memdecay_sum_ends('SELECT a, b, x, y FROM edges', 'got')`).Scan(&n); err != nil || n.Valid {
		t.Errorf("%d ids, more than fit: %v, %v; want NULL", fits+200, n, err)
	}
	var left int64
	if db.QueryRow(`SELECT count(*) FROM got`).Scan(&left); left != 0 {
		t.Errorf("%d sums written when they did not fit", left)
	}
}

func TestSumEndsErrors(t *testing.T) {
	db := openMemDB(t)
	sumTables(t, db)
	if _, err := db.Exec(`INSERT INTO edges VALUES ('a', 'b', 1.0, NULL)`); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		`memdecay_sum_ends('SELECT a, b, x, y FROM nope', 'got')`:            "memdecay_sum_ends: source: no such table: nope",
		`memdecay_sum_ends('SELECT a, b FROM edges', 'got')`:                 "memdecay_sum_ends: source must give (a, b, x) or (a, b, x, y) rows, not 2 columns",
		`memdecay_sum_ends('SELECT a, b, x, y, y FROM edges', 'got')`:        "memdecay_sum_ends: source must give (a, b, x) or (a, b, x, y) rows, not 5 columns",
		`memdecay_sum_ends('SELECT a, 7, x FROM edges', 'got1')`:             "memdecay_sum_ends: an end is a number or a blob, not text",
		`memdecay_sum_ends('SELECT a, x''62'', x FROM edges', 'got1')`:       "memdecay_sum_ends: an end is a number or a blob, not text",
		`memdecay_sum_ends('SELECT NULL, b, x FROM edges', 'got1')`:          "memdecay_sum_ends: an end is NULL, not text",
		`memdecay_sum_ends('SELECT a, b, x FROM edges', 'nope')`:             "memdecay_sum_ends: writing nope: no such table: temp.nope",
		`memdecay_sum_ends('SELECT a, b, x, y FROM edges', 'got1')`:          "memdecay_sum_ends: writing got1: table temp.got1 has 2 columns but 3 values were supplied",
		`memdecay_sum_ends(NULL, 'got')`:                                     "memdecay_sum_ends: source must be a query and target a table's name",
		`memdecay_sum_ends('SELECT a, b, x, y FROM edges', 1)`:               "memdecay_sum_ends: source must be a query and target a table's name",
		`memdecay_sum_ends('SELECT a, b, x, y FROM edges')`:                  "wrong number of arguments to function memdecay_sum_ends()",
		`memdecay_sum_ends('SELECT a, b, x, y FROM edges; SELECT 1', 'got')`: "memdecay_sum_ends: source must be one query",
		`memdecay_sum_ends('', 'got')`:                                       "memdecay_sum_ends: source must be one query",
	} {
		if _, err := selectValue(db, q); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", q, err, want)
		}
	}
	// No view or trigger of a file can call it.
	if _, err := db.Exec(`CREATE VIEW v AS SELECT memdecay_sum_ends('SELECT a, b, x, y FROM edges', 'got') AS n`); err != nil {
		t.Fatal(err)
	}
	if _, err := selectValue(db, `n FROM v`); err == nil || !strings.Contains(err.Error(), "unsafe use of memdecay_sum_ends()") {
		t.Errorf("a view called memdecay_sum_ends: %v", err)
	}
}
