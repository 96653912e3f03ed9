package worker

import (
	"time"
)

// Test hooks: what the tests of package worker_test set on a sweep's
// options (worker/export_test.go names them for those tests).

// withReplicated is opt with the sweep run on a file as a sweep runs on
// rqlite (replicaStore).
func withReplicated(opt SweepOptions) SweepOptions {
	opt.replicated = true
	return opt
}

// withChunk is opt with the hook a sweep calls before each transaction of
// a step and once when the step is done.
func withChunk(opt SweepOptions, f func(step string, done, total int64)) SweepOptions {
	opt.signals.Chunk = f
	return opt
}

// withRanked is opt with the hook a sweep calls once its ranking is
// planned: whether it scored every block, and how many it scored.
func withRanked(opt SweepOptions, f func(full bool, scored int64)) SweepOptions {
	opt.signals.Ranked = f
	return opt
}

// withLease is opt with the sweep's lease lasting d instead of
// LeaseDuration, so a test can outlive it.
func withLease(opt SweepOptions, d time.Duration) SweepOptions {
	opt.lease = d
	return opt
}
