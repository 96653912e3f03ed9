package worker

import "testing"

// BetweenReadsAndWrites runs f between the reads and the writes of every
// restore and fact feedback until the test ends: the test changes the
// memory there, as another writer can on rqlite.
func BetweenReadsAndWrites(t testing.TB, f func()) {
	beforeWrites = f
	t.Cleanup(func() { beforeWrites = nil })
}
