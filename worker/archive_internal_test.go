package worker

import (
	"path/filepath"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// migratedDB is a new database file at the latest schema step.
func migratedDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "m.db"), OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	return db
}
