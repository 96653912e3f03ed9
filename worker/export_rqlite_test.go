package worker

import (
	"testing"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// BetweenReadsAndWrites runs f between the reads and the writes of every
// restore and fact feedback until the test ends: the test changes the
// memory there, as another writer can on rqlite.
func BetweenReadsAndWrites(t testing.TB, f func()) {
	memdb.BeforeWrites = f
	t.Cleanup(func() { memdb.BeforeWrites = nil })
}
