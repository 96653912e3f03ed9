package shim_test

import (
	"database/sql"
	"testing"

	_ "github.com/memdecay/memdecay/ext/shim"
)

const benchRows = 1_000_000

// openBenchDB seeds one million edges (weight, lambda, elapsed) outside the
// timer; every benchmark scans the same table in the same process.
func openBenchDB(b *testing.B) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite3", "file:"+b.TempDir()+"/bench.db")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`
		CREATE TABLE edges(weight REAL, lambda REAL, elapsed REAL);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO edges SELECT 0.1 + (i % 90) / 100.0, 0.005 * (1 + i % 4), (i % 1000) - 10 FROM n`, benchRows)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkEffectiveWeight compares the cost per row of effective_weight
// through the extension's C trampoline with the same expression written
// with SQLite's built-in exp(); "scan" is the cost of reading the rows alone.
// Needs -tags sqlite_math_functions for exp().
func BenchmarkEffectiveWeight(b *testing.B) {
	db := openBenchDB(b)
	defer db.Close()
	for _, bc := range []struct{ name, expr string }{
		{"scan", "weight + lambda + elapsed"},
		{"builtin_exp", "weight * exp(-lambda * max(0, elapsed))"},
		{"effective_weight", "effective_weight(weight, lambda, elapsed)"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var sum float64
			b.ResetTimer()
			for range b.N {
				if err := db.QueryRow("SELECT sum(" + bc.expr + ") FROM edges").Scan(&sum); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
		})
	}
}
