// Package store runs a sweep's statements on its database: the file store
// and the replica (rqlite) store, the pacing of their transactions, and the
// lease that fences them.
package store
