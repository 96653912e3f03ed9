package worker

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/rqlite/gorqlite"
)

// The rules of the rqlite driver and the replica store, each with cases on
// both sides.

func TestNotAppliedRetriesOnlyWhatNoNodeTook(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{"tried all peers unsuccessfully. here are the results:\n   peer #0: http://a/db/execute failed due to dial tcp 127.0.0.1:1: connect: connection refused\n", true},
		{"tried all peers unsuccessfully. here are the results:\n   peer #0: http://a/db/execute failed due to got: 503 Service Unavailable, message: leader not found\n", true},
		{"dial tcp 127.0.0.1:1: connect: connection refused", true},
		{"don't have any cluster info", true},
		// A request that may have reached a node is not sent again.
		{"tried all peers unsuccessfully. here are the results:\n   peer #0: http://a failed due to dial tcp: connection refused\n   peer #1: http://b failed due to context deadline exceeded (Client.Timeout exceeded)\n", false},
		{"UNIQUE constraint failed: mem_sweeps.id", false},
		{"read tcp 127.0.0.1:5->127.0.0.1:6: connection reset by peer", false},
	} {
		if got := notApplied(errors.New(c.msg)); got != c.want {
			t.Errorf("notApplied(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
}

func TestRealJSONBindsAsReal(t *testing.T) {
	for in, want := range map[float64]string{2: "2.0", -3: "-3.0", 0: "0.0", 2.5: "2.5", 1e300: "1e+300", 1e-7: "1e-07"} {
		b, err := json.Marshal(realJSON(in))
		if err != nil || string(b) != want {
			t.Errorf("realJSON(%v) = %s, %v; want %s", in, b, err, want)
		}
	}
}

func TestSQLiteValueByColumnType(t *testing.T) {
	for _, c := range []struct {
		v    any
		typ  string
		want any
	}{
		{float64(3), "integer", int64(3)},
		{float64(3), "bool", int64(3)},
		{float64(3), "", int64(3)},
		{float64(3), "real", float64(3)},
		{float64(3), "double", float64(3)},
		{float64(2.5), "integer", float64(2.5)}, // a REAL stored in an INTEGER column stays REAL
		{"abc", "real", "abc"},                  // text in a REAL column stays text
		{nil, "integer", nil},
	} {
		if got := sqliteValue(c.v, c.typ); got != c.want {
			t.Errorf("sqliteValue(%#v, %q) = %#v, want %#v", c.v, c.typ, got, c.want)
		}
	}
}

func TestReplicatedSQLNamesWorkingTablesOnly(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE TEMP TABLE plan_edges (seq INTEGER PRIMARY KEY)": "CREATE TABLE mem_work_plan_edges (seq INTEGER PRIMARY KEY)",
		"CREATE TEMP VIEW valid_edges AS SELECT 1":               "CREATE VIEW mem_work_valid_edges AS SELECT 1",
		"SELECT count(*) FROM temp.plan_edges":                   "SELECT count(*) FROM mem_work_plan_edges",
		"DROP TABLE IF EXISTS temp.mem_edge_due":                 "DROP TABLE IF EXISTS mem_work_mem_edge_due",
		// Derived tables and columns keep their names.
		"SELECT p.plan_edges, degree FROM mem_edge_due":       "SELECT p.plan_edges, degree FROM mem_edge_due",
		"INSERT INTO block_degree SELECT * FROM plan_edges_x": "INSERT INTO mem_work_block_degree SELECT * FROM plan_edges_x",
		"FROM plan_edges_planned p JOIN plan_edges q":         "FROM mem_work_plan_edges_planned p JOIN mem_work_plan_edges q",
	} {
		if got := replicatedSQL(in); got != want {
			t.Errorf("replicatedSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestRqliteErrorNamesTheStatementError: a failed statement's own message
// reaches the user, on one line, not only gorqlite's count of them.
func TestRqliteErrorNamesTheStatementError(t *testing.T) {
	one := []gorqlite.ParameterizedStatement{{Query: "SELECT 1"}}
	two := append(one, gorqlite.ParameterizedStatement{Query: "SELECT 2"})
	for _, c := range []struct {
		err   error
		stmts []gorqlite.ParameterizedStatement
		want  string
	}{
		{gorqlite.StatementErrors{errors.New("no such table: mem_edges")}, one, "rqlite: no such table: mem_edges"},
		{gorqlite.StatementErrors{errors.New("a"), errors.New("b")}, two,
			"rqlite: in a request of 2 statements: a; b (the request was rolled back)"},
		{errors.New("connection refused"), one, "rqlite: connection refused"},
	} {
		if got := rqliteError(c.err, c.stmts).Error(); got != c.want {
			t.Errorf("rqliteError(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if rqliteError(nil, one) != nil {
		t.Error("rqliteError(nil) is not nil")
	}
}
