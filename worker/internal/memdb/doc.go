// Package memdb opens a memory database (a SQLite file or an rqlite
// cluster) and runs a transaction that reads, then writes.
package memdb
