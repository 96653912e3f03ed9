package shim_test

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/internal/sqlcalls"
	"github.com/memdecay/memdecay/ext/shim"
	"github.com/memdecay/memdecay/sqlfuncs"
)

// These tests run the shim linked into this test binary: importing package
// shim registers every memdecay function in each connection mattn opens.

// openMemDB opens an in-memory database on a single connection.
func openMemDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// selectValue runs SELECT <expr> and returns its single value.
func selectValue(q interface {
	QueryRow(string, ...any) *sql.Row
}, expr string) (any, error) {
	var v any
	err := q.QueryRow("SELECT " + expr).Scan(&v)
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	return v, err
}

// closeEnough compares floats with a relative tolerance.
func closeEnough(got, want float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Max(math.Abs(got), math.Abs(want)))
}

// sameValue reports whether a SQL result matches an expected value.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case float64:
		g, ok := got.(float64)
		return ok && closeEnough(g, w)
	default:
		return got == want
	}
}

func TestValues(t *testing.T) {
	db := openMemDB(t)
	for _, tc := range valueCases {
		got, err := selectValue(db, tc.expr)
		if err != nil {
			t.Errorf("SELECT %s: %v", tc.expr, err)
			continue
		}
		if !sameValue(got, tc.want) {
			t.Errorf("SELECT %s = %#v, want %#v", tc.expr, got, tc.want)
		}
	}
}

// TestEveryFunctionHasValueCases keeps valueCases complete: each function
// in the registry is called at each of its arities (memdecay_debug, whose
// answer depends on the build, has a test of its own).
func TestEveryFunctionHasValueCases(t *testing.T) {
	var exprs []string
	for _, tc := range valueCases {
		exprs = append(exprs, tc.expr)
	}
	for _, call := range sqlcalls.Missing(exprs, shim.Functions(), "memdecay_debug") {
		t.Errorf("no value case calls %s (name/number of arguments)", call)
	}
}

func TestDebug(t *testing.T) {
	db := openMemDB(t)
	got, err := selectValue(db, "memdecay_debug()")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := got.(string)
	for _, part := range []string{"memdecay " + sqlfuncs.Version, "SQLite 3.", "linked"} {
		if !strings.Contains(s, part) {
			t.Errorf("memdecay_debug() = %q, want it to contain %q", s, part)
		}
	}
}

func TestSegmentDefaults(t *testing.T) {
	db := openMemDB(t)
	for _, s := range segmentSpec {
		for _, tc := range []exprCase{
			{fmt.Sprintf("segment_tier('%s')", s.Name), s.Tier},
			{fmt.Sprintf("segment_importance('%s')", s.Name), s.Importance},
			{fmt.Sprintf("segment_decay_rate('%s')", s.Name), s.DecayRate},
		} {
			got, err := selectValue(db, tc.expr)
			if err != nil || !sameValue(got, tc.want) {
				t.Errorf("SELECT %s = %#v, %v; want %#v", tc.expr, got, err, tc.want)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	db := openMemDB(t)
	for _, tc := range errorCases {
		got, err := selectValue(db, tc.expr)
		if err == nil {
			t.Errorf("SELECT %s = %#v, want an error containing %q", tc.expr, got, tc.want)
			continue
		}
		msg := err.Error()
		if prefix := "memdecay: " + tc.fn + ": "; !strings.HasPrefix(msg, prefix) {
			t.Errorf("SELECT %s: error %q does not start with %q", tc.expr, msg, prefix)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("SELECT %s: error %q does not contain %q", tc.expr, msg, tc.want)
		}
	}
}

// TestWrongArgumentCount checks that SQLite itself rejects calls outside
// the registered arities.
func TestWrongArgumentCount(t *testing.T) {
	db := openMemDB(t)
	for _, f := range shim.Functions() {
		for _, n := range []int{f.MinArgs - 1, f.MaxArgs() + 1} {
			if n < 0 {
				continue
			}
			args := strings.TrimSuffix(strings.Repeat("1,", n), ",")
			expr := fmt.Sprintf("%s(%s)", f.Name, args)
			_, err := selectValue(db, expr)
			if err == nil || !strings.Contains(err.Error(), "wrong number of arguments") {
				t.Errorf("SELECT %s: err = %v, want wrong number of arguments", expr, err)
			}
		}
	}
}

// TestFunctionList checks each function's arities and registration flags.
func TestFunctionList(t *testing.T) {
	const (
		deterministic = 0x800
		innocuous     = 0x200000
	)
	db := openMemDB(t)
	for _, f := range shim.Functions() {
		name, arities := f.Name, arities(f)
		rows, err := db.Query(`SELECT narg, flags, enc FROM pragma_function_list WHERE name = ? ORDER BY narg`, name)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for rows.Next() {
			var narg, flags int
			var enc string
			if err := rows.Scan(&narg, &flags, &enc); err != nil {
				t.Fatal(err)
			}
			got = append(got, narg)
			if flags&deterministic == 0 || flags&innocuous == 0 {
				t.Errorf("%s/%d: flags %#x lack SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS", name, narg, flags)
			}
			if enc != "utf8" {
				t.Errorf("%s/%d: enc %q, want utf8", name, narg, enc)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if !slices.Equal(got, arities) {
			t.Errorf("%s: arities %v, want %v", name, got, arities)
		}
	}
}

// arities lists the numbers of arguments f can be called with.
func arities(f shim.Function) []int {
	var ns []int
	for n := f.MinArgs; n <= f.MaxArgs(); n++ {
		ns = append(ns, n)
	}
	return ns
}
