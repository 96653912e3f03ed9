// Package testdb makes the databases the internal packages' tests start
// from. Only tests import it.
package testdb

import (
	"path/filepath"
	"testing"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// Migrated is a new database file at the latest schema step, closed when
// the test ends.
func Migrated(t testing.TB) *memdb.DB {
	t.Helper()
	db, err := memdb.Open(filepath.Join(t.TempDir(), "m.db"), memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	return db
}
