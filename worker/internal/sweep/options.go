package sweep

import (
	"errors"
	"fmt"
	"time"

	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// LeaseDuration is how long a sweep's claim on a database lasts without a
// heartbeat; a crashed worker's lease expires and the next sweep takes over.
const LeaseDuration = 60 * time.Second

// Options controls one sweep. The zero value is the sweep the CLI runs
// by default: Sweep applies the defaults below for every caller.
type Options struct {
	DryRun bool // plan and report only; the file is not written
	// List: a dry run lists every row the sweep would change in the
	// report's Planned (list.go); only with DryRun.
	List bool
	Full bool // evaluate every row, not only the changed and due ones
	// Bulk runs the whole sweep in one write transaction, for a first
	// sweep at adoption or in a maintenance window: no bound on how long
	// it holds the write lock (an app writing meanwhile waits for all of
	// it, up to its busy timeout), no saved plan, and a sweep cut off
	// rolls back whole, leaving the file as it was. Its result is a
	// default sweep's. A file only (store.ErrBulkReplica); a dry run
	// ignores it.
	Bulk    bool
	Now     *float64   // active-hours clock; nil reads mem_config active_hours
	WallNow *time.Time // wall clock; nil is time.Now()
	// Force sweeps at a Now behind the last sweep's clock, which is
	// otherwise refused (ErrClockBehind): as at a new clock, reinforcement
	// included, and last_curate_at is set back to it (Clock.forSweep).
	Force bool
	// ChunkSize: rows per transaction while another connection writes;
	// 0 is DefaultChunkSize.
	ChunkSize int
	// SoloChunkSize: rows per apply transaction while no other connection
	// has written to the file lately (the sync of derived state takes
	// syncChunkFactor times as many); 0 is DefaultSoloChunkSize, and a value
	// not above ChunkSize keeps ChunkSize throughout.
	SoloChunkSize int
	// SoloHold: while no other connection writes, a step's transactions
	// grow from ChunkSize rows towards SoloChunkSize rows only as far as the
	// last one's pace fits in SoloHold; 0 is DefaultSoloHold.
	SoloHold time.Duration
	// Pause: the least time the write lock stays free between two of the
	// sweep's transactions, so an app writing to the same file gets it;
	// 0 is DefaultPause. SQLite's default busy handler retries at most
	// 100 ms apart, so 100 ms bounds an app's wait to about one transaction.
	Pause time.Duration
	// OwnProcess: no connection of an app's shares this process (the
	// CLI's), so only another process could be waiting for the write lock.
	// Its transactions then follow each other with no time left free
	// between them while no other process has the file open (a file only;
	// Linux, where the sweep can see that: store.othersHaveOpen).
	OwnProcess bool
	// Owner: who holds the lease, for the "already running" message; ""
	// names this process and machine. Each sweep adds a random id of its
	// own, so that no two claims share an owner.
	Owner string
	// Progress, when set, is told before each transaction of a step how far
	// the step is, and once when it is done (a terminal's progress bar).
	Progress func(step string, done, total int64)
	// signals are for tests: points in a sweep a test can act at (set
	// through export_test.go's WithChunk).
	signals sweepSignals
	// tables: the dialect of the tables swept (nil: memworker's own).
	tables *sweepsql.Dialect
	// allInvalid: the report names every invalid row, not a sample
	// (ListInvalid's dry run).
	allInvalid bool
	// replicated runs the sweep on a file as it runs on rqlite
	// (replicaStore), for tests that compare the two.
	replicated bool
	// noHashTables: a full evaluation reads the ends' rates by the join, and
	// the sums by ends are grouped by SQL, even where the linked build's
	// hash tables (memdecay_block_rate, memdecay_sum_ends) would do.
	noHashTables bool
	// lease: how long the sweep's claim lasts without a heartbeat; 0 is
	// LeaseDuration (tests outlive a shorter one).
	lease time.Duration
}

// sweepSignals lets a test act at known points of a sweep (write as an
// app would, cancel, look at the file) without reusing the progress hook.
type sweepSignals struct {
	// Chunk is called before each transaction of a step with the rows done
	// so far, and once when the step has done them all.
	Chunk func(step string, done, total int64)
	// Ranked is called once the ranking is planned: whether it scored
	// every block, and how many blocks it scored.
	Ranked func(full bool, scored int64)
	// IndexRebuilt is called when a bulk sweep has built an index of the
	// edges again (bulkindex.go).
	IndexRebuilt func(index string)
	// Guarded is called when an app's rule refused a change of a chunk
	// run without a savepoint, and the apply goes on under savepoints.
	Guarded func()
	// EdgesKept is called when an incremental sweep's plan takes the edges
	// before it: whether it took the last sweep's count (edges_counted)
	// rather than counting them.
	EdgesKept func(kept bool)
	// TempPages is called before the sweep opens its store: whether its
	// temp tables take big pages (copiesEveryRow).
	TempPages func(big bool)
	// PlanStands is called once the plan is made: whether the apply takes
	// its removals without looking at each edge again (standingPlan).
	PlanStands func(stands bool)
	// ChunkAsPlanned is called in each transaction of a default sweep's
	// edge removals whose plan stands: whether no other connection has
	// committed since the plan, so the chunk is taken as planned.
	ChunkAsPlanned func(asPlanned bool)
	// RatesHashed is called when a full evaluation starts: whether it finds
	// the ends' rates by memdecay_block_rate (ratesHashed).
	RatesHashed func(hashed bool)
	// Summed is called when memdecay_sum_ends has summed a statement's
	// rows by their ends: whether they fit (sumEnds).
	Summed func(source string, fit bool)
}

// sql is the dialect of the tables the sweep decides on.
func (o Options) sql() *sweepsql.Dialect {
	if o.tables == nil {
		return sweepsql.MemTables
	}
	return o.tables
}

// forStore is what the store a sweep runs on takes of its options.
func (o Options) forStore() store.Options {
	return store.Options{DryRun: o.DryRun, ChunkSize: o.ChunkSize, SoloChunkSize: o.SoloChunkSize, SoloHold: o.SoloHold,
		Pause: o.Pause, Tables: o.tables, OwnProcess: o.OwnProcess}
}

// ErrBadOption wraps every error of SweepOptions.Validate.
var ErrBadOption = errors.New("invalid sweep option")

// withDefaults fills the zero fields with the documented defaults.
func (o Options) withDefaults() Options {
	if o.ChunkSize == 0 {
		o.ChunkSize = store.DefaultChunkSize
	}
	if o.SoloChunkSize == 0 {
		o.SoloChunkSize = store.DefaultSoloChunkSize
	}
	if o.SoloHold == 0 {
		o.SoloHold = store.DefaultSoloHold
	}
	if o.Pause == 0 {
		o.Pause = store.DefaultPause
	}
	if o.Owner == "" {
		o.Owner = store.ThisProcess()
	}
	return o
}

// Validate reports an option no sweep can run with, naming the option.
func (o Options) Validate() error {
	switch {
	case o.ChunkSize < 0:
		return fmt.Errorf("%w: ChunkSize %d is negative", ErrBadOption, o.ChunkSize)
	case o.SoloChunkSize < 0:
		return fmt.Errorf("%w: SoloChunkSize %d is negative", ErrBadOption, o.SoloChunkSize)
	case o.SoloHold < 0:
		return fmt.Errorf("%w: SoloHold %v is negative", ErrBadOption, o.SoloHold)
	case o.Pause < 0:
		return fmt.Errorf("%w: Pause %v is negative", ErrBadOption, o.Pause)
	case o.List && !o.DryRun:
		return fmt.Errorf("%w: List lists a dry run's plan; it needs DryRun", ErrBadOption)
	}
	if o.Now != nil {
		if err := settings.FiniteHours(*o.Now); err != nil {
			return fmt.Errorf("%w: Now: %v", ErrBadOption, err)
		}
		if *o.Now < 0 {
			return fmt.Errorf("%w: Now %v is negative; the active-hours clock starts at 0", ErrBadOption, *o.Now)
		}
	}
	return nil
}

// ErrReadOnly means a sweep that writes was asked of a database opened
// read-only.
var ErrReadOnly = errors.New("the database is open read-only; only a dry run can sweep it")
