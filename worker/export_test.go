package worker

import "context"

// SweepReplicated sweeps a file as a sweep runs on rqlite (replicaStore).
func SweepReplicated(ctx context.Context, db *DB, opt SweepOptions) (*Report, error) {
	opt.replicated = true
	return Sweep(ctx, db, opt)
}

// QuietRemovals says whether a sweep of db would run its removals with its
// connection's triggers off.
func QuietRemovals(ctx context.Context, db *DB) (bool, error) {
	st, err := openFileStore(ctx, db, SweepOptions{})
	if err != nil {
		return false, err
	}
	defer st.close()
	return st.quietAllowed(ctx), nil
}
