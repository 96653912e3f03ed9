package rqlite

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
)

// On a real node: a transaction's writes go as one request at COMMIT, and
// a statement SQLite rejects there is a *StatementError naming it; with
// trials on, a RELEASE fails as SQLite would have failed a write since its
// SAVEPOINT, a ROLLBACK TO drops those writes, a read sees the writes
// before it, and no trial is ever applied.
func TestTrialsFindWhatSQLiteRejects(t *testing.T) {
	c := rqcluster.StartT(t, rqcluster.Options{Nodes: 1})
	db, err := sql.Open(DriverName, c.Nodes()[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	exec := func(conn *sql.Conn, query string, args ...any) error {
		_, err := conn.ExecContext(ctx, query, args...)
		return err
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		var n int
		must(db.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n))
		return n
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER CHECK (v < 10))`); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	must(err)
	defer conn.Close()

	// Without trials, the refusal comes at COMMIT, typed, and nothing of
	// the request is applied.
	must(exec(conn, "BEGIN"))
	must(exec(conn, `INSERT INTO t VALUES (1, 1)`))
	must(exec(conn, "SAVEPOINT a"))
	must(exec(conn, `INSERT INTO t VALUES (2, 20)`))
	must(exec(conn, "RELEASE a"))
	err = exec(conn, "COMMIT")
	var rejected *StatementError
	if !errors.Is(err, ErrRejected) || !errors.As(err, &rejected) {
		t.Fatalf("COMMIT: %v, want a rejected statement", err)
	}
	if rejected.Index != 1 || rejected.Statements != 2 || rejected.Message != "CHECK constraint failed: v < 10" || !rejected.Constraint() {
		t.Errorf("COMMIT: %+v", rejected)
	}
	if n := count(); n != 0 {
		t.Errorf("%d rows after a refused request", n)
	}

	// With trials, the refused write is found at its RELEASE, and only it
	// is left out.
	must(SetTrials(ctx, conn, true))
	must(exec(conn, "BEGIN"))
	must(exec(conn, `INSERT INTO t VALUES (1, 1)`))
	must(exec(conn, "SAVEPOINT a"))
	must(exec(conn, `INSERT INTO t VALUES (2, 20)`))
	err = exec(conn, "RELEASE a")
	if !errors.As(err, &rejected) || rejected.Index != 1 || rejected.Message != "CHECK constraint failed: v < 10" {
		t.Fatalf("RELEASE: %v, want statement 1 rejected", err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d rows after a trial: it was applied", n)
	}
	must(exec(conn, "ROLLBACK TO a"))
	must(exec(conn, "RELEASE a"))
	var seen int
	must(conn.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&seen))
	if seen != 1 {
		t.Errorf("a read after the writes sees %d rows, want 1", seen)
	}
	must(exec(conn, `INSERT INTO t VALUES (3, 3)`))
	must(exec(conn, "COMMIT"))
	var ids string
	must(db.QueryRowContext(ctx, `SELECT group_concat(id) FROM (SELECT id FROM t ORDER BY id)`).Scan(&ids))
	if ids != "1,3" {
		t.Errorf("rows %s, want 1,3", ids)
	}

	// A refusal before the savepoint is not the savepoint's writes'.
	must(exec(conn, "BEGIN"))
	must(exec(conn, `INSERT INTO t VALUES (4, 40)`))
	must(exec(conn, "SAVEPOINT b"))
	must(exec(conn, `INSERT INTO t VALUES (5, 5)`))
	if err := exec(conn, "RELEASE b"); err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("RELEASE after a refused write before the savepoint: %v", err)
	}
	must(exec(conn, "ROLLBACK"))
	must(SetTrials(ctx, conn, false))

	// A node that does not answer is not a rejected statement.
	c.Stop()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := conn.ExecContext(short, `INSERT INTO t VALUES (6, 6)`); err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("a write to a stopped node: %v, want a failure that is not a rejected statement", err)
	}
}
