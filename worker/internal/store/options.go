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
	// OwnProcess: no app's connection shares the sweep's process (the
	// CLI), so only another process could wait for the write lock.
	OwnProcess bool
	// BigTempPages: the sweep copies every row into its temp tables (a
	// full one), which take TempPageSize pages.
	BigTempPages bool
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

// SweepCacheKiB is the page cache of a sweep's connection for the file, in
// KiB. A sweep reads the edge tables in storage order and touches their
// indexes all over, so a bigger cache buys little (bench/README.md).
// SQLite's sorter holds up to as much again per thread sorting (two, with
// SorterThreads), so a sweep's SQLite memory is about three times this plus
// TempCacheKiB: 23 MB, which keeps a 10M-edge sweep under 64 MB.
const SweepCacheKiB = 7 << 10

// TempCacheKiB is the page cache for the sweep's temp tables: they are read
// in order (the evaluation, the plan) or are small enough (the rates'
// copy), and SQLite reads their pages back from the OS's cache anyway.
const TempCacheKiB = 2 << 10

// TempPageSize is the page size of a full sweep's temp tables, set before
// the connection makes its first one (Options.BigTempPages). A full sweep
// writes every edge's evaluation into them and reads it back whole several
// times (the due rows, the plan, the sync); each page SQLite does not hold
// is a read of the OS's cache, one system call a page. At 64 KB a bulk first
// sweep of a million edges makes 357,000 reads instead of 554,000 (the
// file's own pages are the app's size, untouched). An incremental sweep
// keeps SQLite's default: its dozens of temp tables hold a few rows each,
// and at 64 KB their first pages alone outgrow the temp cache (32 such
// pages), so they would be written out and read back all the time, and
// each change to one copied whole into the temp journal.
const TempPageSize = 64 << 10

// SorterThreads is how many threads SQLite may add to sort (PRAGMA
// threads): the big sorts of a full sweep (degrees, the index rebuilt,
// GROUP BYs over every edge) use the second core, which sits idle while a
// bulk sweep's one transaction runs.
const SorterThreads = 1
