package memdb

import (
	"database/sql"
	"strings"
	"testing"
)

// UseWAL reports a database that does not take WAL mode.
func TestUseWALChecksTheMode(t *testing.T) {
	raw, err := sql.Open("sqlite3", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = (&DB{SQL: raw, Path: ":memory:"}).UseWAL()
	if err == nil || !strings.Contains(err.Error(), `"memory"`) {
		t.Errorf("UseWAL on an in-memory database: %v, want an error naming the mode it stays in", err)
	}
}
