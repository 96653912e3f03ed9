package worker

import (
	"context"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweep"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// SweepReplicated sweeps a file as a sweep runs on rqlite (replicaStore).
func SweepReplicated(ctx context.Context, db *DB, opt SweepOptions) (*Report, error) {
	return Sweep(ctx, db, sweep.WithReplicated(opt))
}

// QuietRemovals says whether a sweep of db would run its removals with its
// connection's triggers off.
func QuietRemovals(ctx context.Context, db *DB) (bool, error) {
	var opt store.Options
	mapped, err := adapter.AdaptMapping(ctx, db, false)
	if err != nil {
		return false, err
	}
	if mapped != nil {
		opt.Tables = mapped.Tables
	}
	st, err := store.OpenFile(ctx, db, opt)
	if err != nil {
		return false, err
	}
	defer st.Close()
	return st.QuietAllowed(ctx), nil
}

// WithChunk sets the test hook a sweep calls before each transaction of a
// step and once when the step is done.
func WithChunk(opt SweepOptions, f func(step string, done, total int64)) SweepOptions {
	return sweep.WithChunk(opt, f)
}

// WithRanked sets the test hook a sweep calls once its ranking is
// planned: whether it scored every block, and how many it scored.
func WithRanked(opt SweepOptions, f func(full bool, scored int64)) SweepOptions {
	return sweep.WithRanked(opt, f)
}

// WithIndexRebuilt sets the test hook a bulk sweep calls when it has
// built an index of the edges again.
func WithIndexRebuilt(opt SweepOptions, f func(index string)) SweepOptions {
	return sweep.WithIndexRebuilt(opt, f)
}

// WithPlanStands sets the test hook a sweep calls once its plan is made:
// whether the apply takes its removals as planned, without looking again.
func WithPlanStands(opt SweepOptions, f func(stands bool)) SweepOptions {
	return sweep.WithPlanStands(opt, f)
}

// WithChunkAsPlanned sets the test hook a default sweep whose plan stands
// calls in each transaction of its edge removals: whether it takes the
// chunk as planned.
func WithChunkAsPlanned(opt SweepOptions, f func(asPlanned bool)) SweepOptions {
	return sweep.WithChunkAsPlanned(opt, f)
}

// WithRatesHashed sets the test hook a sweep calls when a full evaluation
// starts: whether it finds the ends' rates by memdecay_block_rate.
func WithRatesHashed(opt SweepOptions, f func(hashed bool)) SweepOptions {
	return sweep.WithRatesHashed(opt, f)
}

// WithSummed sets the test hook a sweep calls when memdecay_sum_ends has
// summed a statement's rows by their ends: whether they fit its memory.
func WithSummed(opt SweepOptions, f func(source string, fit bool)) SweepOptions {
	return sweep.WithSummed(opt, f)
}

// WithoutHashTables makes a sweep read the ends' rates by the join and
// group the sums by ends by SQL.
func WithoutHashTables(opt SweepOptions) SweepOptions { return sweep.WithoutHashTables(opt) }

// WithEdgesKept sets the test hook an incremental sweep's plan calls when
// it takes the edges before it: whether it took the last sweep's count.
func WithEdgesKept(opt SweepOptions, f func(kept bool)) SweepOptions {
	return sweep.WithEdgesKept(opt, f)
}

// WithTempPages sets the test hook a sweep calls before it makes its temp
// tables: whether they take big pages.
func WithTempPages(opt SweepOptions, f func(big bool)) SweepOptions {
	return sweep.WithTempPages(opt, f)
}

// WithGuarded sets the test hook a sweep calls when an app's rule refused
// a change of a chunk run without a savepoint.
func WithGuarded(opt SweepOptions, f func()) SweepOptions {
	return sweep.WithGuarded(opt, f)
}

// SetRankSeed makes an incremental ranking score n of the best bounds
// first instead of its own number (the rest through the cut), until
// restore.
func SetRankSeed(n int) (restore func()) {
	was := sweep.RankSeed
	sweep.RankSeed = func(int) int { return n }
	return func() { sweep.RankSeed = was }
}

// ShadowState is temp.sql's shadow_state: the derived tables as a full
// sweep computes them aside.
func ShadowState() string { return strings.Join(sweepsql.Stmts("shadow_state"), ";\n") }

// EdgeLambdaSQL is the SQL rule for an edge's decay rate (rules.go).
func EdgeLambdaSQL() string { return sweepsql.MemTables.Expand(sweepsql.EdgeLambda) }
