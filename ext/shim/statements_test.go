package shim_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// seriesSQL yields the integers 1..n as column value.
const seriesSQL = `WITH RECURSIVE series(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM series WHERE value < %d)`

// TestConstantJSONOverManyRows runs constant curves over many rows (the
// parsed curve is kept for the statement) and checks the sums against
// sqlfuncs.
func TestConstantJSONOverManyRows(t *testing.T) {
	const n = 100_000
	db := openMemDB(t)

	tiers, err := sqlfuncs.ParseTiers("multi_linear_weight", "tiers_json", twoTiers)
	if err != nil {
		t.Fatal(err)
	}
	curve, err := sqlfuncs.ParseCurve("curve_weight", "curve_json", twoTierJSON)
	if err != nil {
		t.Fatal(err)
	}
	var wantTiers, wantCurve float64
	for i := 1; i <= n; i++ {
		e := float64(i) / 20000
		w, err := sqlfuncs.MultiLinearWeight(tiers, e)
		if err != nil {
			t.Fatal(err)
		}
		wantTiers += w
		c, err := curve.Weight(0.5, e)
		if err != nil {
			t.Fatal(err)
		}
		wantCurve += c
	}

	var gotTiers, gotCurve float64
	err = db.QueryRow(fmt.Sprintf(seriesSQL, n)+`
		SELECT sum(multi_linear_weight('`+twoTiers+`', value / 20000.0)),
		       sum(curve_weight('`+twoTierJSON+`', 0.5, value / 20000.0))
		FROM series`).Scan(&gotTiers, &gotCurve)
	if err != nil {
		t.Fatal(err)
	}
	// A sum of n terms: allow n ulps of drift from a different order.
	if math.Abs(gotTiers-wantTiers) > 1e-9*wantTiers || math.Abs(gotCurve-wantCurve) > 1e-9*wantCurve {
		t.Errorf("sums = %v, %v; want %v, %v", gotTiers, gotCurve, wantTiers, wantCurve)
	}
}

// TestPerRowJSON gives each row its own curve: nothing parsed for one row
// may leak into the next.
func TestPerRowJSON(t *testing.T) {
	db := openMemDB(t)
	curves := []struct {
		json string
		want float64 // weight 1 after elapsed 2
	}{
		{`{"model":"linear","rate":0.25}`, 0.5},
		{`{"model":"half_life","half_life":2}`, 0.5},
		{`{"model":"exponential","lambda":0.5}`, math.Exp(-1)},
		{`{"model":"linear","rate":0.25}`, 0.5},
		{`{"model":"power_law","alpha":1}`, 1.0 / 3},
		{`{"model":"delayed_linear","rate":1,"hold":5}`, 1},
		{`{"model":"multi_linear","tiers":[{"weight":0.5,"rate":0.1}]}`, 0.3},
	}
	if _, err := db.Exec(`CREATE TABLE c(id INTEGER PRIMARY KEY, curve TEXT)`); err != nil {
		t.Fatal(err)
	}
	for i, c := range curves {
		if _, err := db.Exec(`INSERT INTO c VALUES (?, ?)`, i, c.json); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query(`SELECT id, curve_weight(curve, 1, 2), curve_horizon(curve, 1, 0.5) FROM c ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var w float64
		var h sql.NullFloat64
		if err := rows.Scan(&id, &w, &h); err != nil {
			t.Fatal(err)
		}
		if !closeEnough(w, curves[id].want) {
			t.Errorf("row %d %s: curve_weight = %v, want %v", id, curves[id].json, w, curves[id].want)
		}
		c, err := sqlfuncs.ParseCurve("curve_horizon", "curve_json", curves[id].json)
		if err != nil {
			t.Fatal(err)
		}
		hw, err := c.Horizon(1, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if h.Valid == hw.Never || (h.Valid && !closeEnough(h.Float64, hw.At)) {
			t.Errorf("row %d %s: curve_horizon = %v, want %+v", id, curves[id].json, h, hw)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaUses puts the functions where only deterministic, innocuous
// functions may go: a view read with trusted_schema off, an expression
// index, a generated column, a CHECK constraint and a trigger.
func TestSchemaUses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schema.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`CREATE TABLE edge(
		id INTEGER PRIMARY KEY,
		tier TEXT CHECK (tier_lambda(tier) > 0),
		w REAL, l REAL, e REAL,
		now_w REAL GENERATED ALWAYS AS (effective_weight(w, l, e)) VIRTUAL)`)
	mustExec(`CREATE INDEX edge_now ON edge(effective_weight(w, l, e))`)
	mustExec(`CREATE TABLE log(id INTEGER, action TEXT)`)
	mustExec(`CREATE TRIGGER edge_log AFTER INSERT ON edge BEGIN
		INSERT INTO log VALUES (new.id, lifecycle_action(new.now_w, 'short', 0));
	END`)
	mustExec(`CREATE VIEW edge_view AS SELECT id, decay_tier(NULL, tier) AS t, effective_weight(w, l, e) AS ew FROM edge`)
	for i := 0; i < 50; i++ {
		mustExec(`INSERT INTO edge(id, tier, w, l, e) VALUES (?, 'standard', 1, 0.1, ?)`, i, i)
	}
	if _, err := db.Exec(`INSERT INTO edge(id, tier, w, l, e) VALUES (99, 'nope', 1, 0.1, 1)`); err == nil {
		t.Error("CHECK (tier_lambda(tier) > 0) accepted tier 'nope'")
	}
	mustExec(`PRAGMA trusted_schema = OFF`)

	var n int
	var sum float64
	if err := db.QueryRow(`SELECT count(*), sum(ew) FROM edge_view WHERE ew < 0.5`).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	var wantSum float64
	wantN := 0
	for i := 0; i < 50; i++ {
		if w := math.Exp(-0.1 * float64(i)); w < 0.5 {
			wantN++
			wantSum += w
		}
	}
	if n != wantN || !closeEnough(sum, wantSum) {
		t.Errorf("view: count, sum = %d, %v; want %d, %v", n, sum, wantN, wantSum)
	}

	var plan strings.Builder
	rows, err := db.Query(`EXPLAIN QUERY PLAN SELECT id FROM edge WHERE effective_weight(w, l, e) < 0.5`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "INDEX edge_now") {
		t.Errorf("query plan does not use the expression index:\n%s", plan.String())
	}

	var prunes int
	if err := db.QueryRow(`SELECT count(*) FROM log WHERE action = 'prune'`).Scan(&prunes); err != nil {
		t.Fatal(err)
	}
	wantPrunes := 0
	for i := 0; i < 50; i++ {
		if math.Exp(-0.1*float64(i)) < sqlfuncs.PruneScore {
			wantPrunes++
		}
	}
	if prunes != wantPrunes {
		t.Errorf("trigger logged %d prunes, want %d", prunes, wantPrunes)
	}
}

// TestConcurrentConnections runs the functions on several connections at
// once (meant for -race): constant-JSON caching, static texts and errors
// must not cross between statements.
func TestConcurrentConnections(t *testing.T) {
	const workers, rounds = 6, 40
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(workers)

	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range workers {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			curve := fmt.Sprintf(`{"model":"half_life","half_life":%d}`, w+1)
			for r := range rounds {
				var sum float64
				var tier, action string
				err := conn.QueryRowContext(ctx, fmt.Sprintf(seriesSQL, 1000)+`
					SELECT sum(curve_weight(?, 1, value % ?)), decay_tier(NULL, 'mind'), lifecycle_action(0.01, 'short', 0)
					FROM series`, curve, w+r+1).Scan(&sum, &tier, &action)
				if err != nil {
					t.Errorf("worker %d round %d: %v", w, r, err)
					return
				}
				want := 0.0
				for v := 1; v <= 1000; v++ {
					want += math.Exp2(-float64(v%(w+r+1)) / float64(w+1))
				}
				if math.Abs(sum-want) > 1e-9*want || tier != "durable" || action != "prune" {
					t.Errorf("worker %d round %d: got %v %q %q, want %v durable prune", w, r, sum, tier, action, want)
				}
				var v any
				err = conn.QueryRowContext(ctx, `SELECT tier_lambda(?)`, fmt.Sprintf("tier%d", w)).Scan(&v)
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`"tier%d" is not a tier`, w)) {
					t.Errorf("worker %d: tier_lambda error = %v", w, err)
				}
			}
		}()
	}
	wg.Wait()
}
