package worker

import "context"

// SweepReplicated sweeps a file as a sweep runs on rqlite (replicaStore).
func SweepReplicated(ctx context.Context, db *DB, opt SweepOptions) (*Report, error) {
	opt.replicated = true
	return Sweep(ctx, db, opt)
}
