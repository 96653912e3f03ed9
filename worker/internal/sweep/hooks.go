package sweep

import (
	"time"
)

// Test hooks: what the tests of package worker_test set on a sweep's
// options (worker/export_test.go names them for those tests).

// WithReplicated is opt with the sweep run on a file as a sweep runs on
// rqlite (replicaStore).
func WithReplicated(opt Options) Options {
	opt.replicated = true
	return opt
}

// WithChunk is opt with the hook a sweep calls before each transaction of
// a step and once when the step is done.
func WithChunk(opt Options, f func(step string, done, total int64)) Options {
	opt.signals.Chunk = f
	return opt
}

// WithRanked is opt with the hook a sweep calls once its ranking is
// planned: whether it scored every block, and how many it scored.
func WithRanked(opt Options, f func(full bool, scored int64)) Options {
	opt.signals.Ranked = f
	return opt
}

// WithIndexRebuilt is opt with the hook a bulk sweep calls when it has
// built an index of the edges again.
func WithIndexRebuilt(opt Options, f func(index string)) Options {
	opt.signals.IndexRebuilt = f
	return opt
}

// WithPlanStands is opt with the hook a sweep calls once its plan is
// made: whether the apply takes its removals as planned (standingPlan).
func WithPlanStands(opt Options, f func(stands bool)) Options {
	opt.signals.PlanStands = f
	return opt
}

// WithChunkAsPlanned is opt with the hook a default sweep whose plan
// stands calls in each transaction of its edge removals: whether it takes
// the chunk as planned (untouchedSincePlan).
func WithChunkAsPlanned(opt Options, f func(asPlanned bool)) Options {
	opt.signals.ChunkAsPlanned = f
	return opt
}

// WithRatesHashed is opt with the hook a sweep calls when a full
// evaluation starts: whether it finds the ends' rates by their hash table.
func WithRatesHashed(opt Options, f func(hashed bool)) Options {
	opt.signals.RatesHashed = f
	return opt
}

// WithSummed sets the Summed signal: told whether memdecay_sum_ends summed
// a statement's rows.
func WithSummed(opt Options, f func(source string, fit bool)) Options {
	opt.signals.Summed = f
	return opt
}

// WithoutHashTables is opt with a sweep that uses none of the linked
// build's hash tables: a full evaluation reads the ends' rates by the join,
// and the sums by ends are grouped by SQL, wherever it runs.
func WithoutHashTables(opt Options) Options {
	opt.noHashTables = true
	return opt
}

// WithTempPages is opt with the hook a sweep calls before it makes its
// temp tables: whether they take big pages.
func WithTempPages(opt Options, f func(big bool)) Options {
	opt.signals.TempPages = f
	return opt
}

// WithEdgesKept is opt with the hook an incremental sweep's plan calls
// when it takes the edges before it: whether it took the last sweep's
// count rather than counting them.
func WithEdgesKept(opt Options, f func(kept bool)) Options {
	opt.signals.EdgesKept = f
	return opt
}

// WithGuarded is opt with the hook a sweep calls when an app's rule
// refused a change of a chunk run without a savepoint.
func WithGuarded(opt Options, f func()) Options {
	opt.signals.Guarded = f
	return opt
}

// WithLease is opt with the sweep's lease lasting d instead of
// LeaseDuration, so a test can outlive it.
func WithLease(opt Options, d time.Duration) Options {
	opt.lease = d
	return opt
}
