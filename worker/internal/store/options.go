package store

import (
	"time"

	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// Options is what a store takes of the sweep's options: the pacing
// of its transactions, and the dialect of the tables it runs the phase
// files on.
type Options struct {
	DryRun        bool
	ChunkSize     int
	SoloChunkSize int
	SoloHold      time.Duration
	Pause         time.Duration
	Tables        *sweepsql.Dialect // nil: memworker's own tables
}

// sql is the dialect of the tables the sweep decides on.
func (o Options) sql() *sweepsql.Dialect {
	if o.Tables == nil {
		return sweepsql.MemTables
	}
	return o.Tables
}

// DefaultChunkSize bounds the rows one apply transaction touches while an
// app writes to the same file, so that app never waits long for the lock.
const DefaultChunkSize = 500

// DefaultSoloChunkSize caps the rows per apply transaction while no other
// connection writes to the file: fewer, bigger commits copy each index page
// into the WAL (and back) fewer times. The cap is loose on purpose: the
// time a transaction may hold the lock, SoloHold, is the bound that keeps
// an app that starts writing from waiting long. Once an app has written,
// the sweep takes ChunkSize rows at a time.
const DefaultSoloChunkSize = 50000

// DefaultSoloHold bounds how long one of those bigger transactions holds
// the write lock, on any machine: an app that starts writing waits at
// least for the one under way (bench/README.md has the measurements).
const DefaultSoloHold = 300 * time.Millisecond

// DefaultPause is the least time the lock stays free between two of the
// sweep's transactions: enough for a writer already retrying to take it.
const DefaultPause = time.Millisecond

// SweepCacheKiB is the page cache of a sweep's connection, in KiB, for the
// file and again for its temp tables; SQLite's sorter takes as much again.
// A sweep reads the edge tables in storage order and touches their indexes
// all over, so a bigger cache buys little (bench/README.md).
const SweepCacheKiB = 8 << 10
