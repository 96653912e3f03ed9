package main

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// TestSweepLockedExit75: an app holding the write lock for longer than the
// busy timeout makes a sweep exit 75 (try later), as another sweep does,
// with a message that says so, and the file unchanged.
func TestSweepLockedExit75(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=rw&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	app, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if _, err := app.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	r := mw(t, "sweep", "--db", path)
	if _, err := app.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if r.code != exitBusy || !strings.Contains(r.stderr, "write lock") || !strings.Contains(r.stderr, "try again later") {
		t.Errorf("sweep while an app holds the write lock: %v; want exit 75 saying to try later", r)
	}
	if fileHash(t, path) != before {
		t.Error("the sweep that could not start changed the file")
	}
	ok(t, "sweep", "--db", path) // and once the lock is free, it sweeps
}
