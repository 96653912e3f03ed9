package sweep

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"

	"github.com/memdecay/memdecay/worker/internal/store"
)

// The ranking for reinforcement (docs/sweep.md, phase 6) picks the top N
// active blocks by composite score: (0.30·confidence + 0.05·recency +
// 0.25·degree/max_degree + 0.30·log1p(count)/log1p(max_count)) / 0.90.
// A full sweep scores every block. An incremental one scores only the
// blocks that changed and those that could reach the top, and picks the
// same N:
//
//   - Each block's state keeps a bound (rank_bound): its score when it was
//     last scored. Time passing only lowers a score (recency decays), so
//     the bound holds while none of the block's inputs (confidence, count,
//     last reinforcement, decay rate, degree) goes up; a refresh that sees
//     one go up, or a degree that grows, forgets it (NULL: score it).
//   - A bound was scored on the scales of its sweep. mem_config's
//     rank_scale keeps the largest scales any bound of its epoch was
//     scored on; on today's smaller scales a score can be at most alpha
//     times its bound, alpha the largest ratio of old scale to new.
//   - A sweep that scores every block starts a new epoch on its own
//     scales. A bound is stored as bound - 2·epoch (scores lie in [0, 1]),
//     so the bounds of older epochs sort above every bound of the current
//     one: such a block is always scored, and its bound stored anew.
//   - The scales themselves are exact: the largest degree and count among
//     the ranked blocks, from one pass over the narrow state table, which
//     costs less than keeping indexes of them through every degree change
//     (plan_rank_scale).
//   - The blocks whose bound is not known, those changed since the
//     refresh, and the best bounds are scored first; the Nth best of those
//     scores, S, is at most the Nth best of all. Then every block whose
//     bound times alpha could reach S is scored, and the top N of all the
//     scores taken: a block left out scores less than S, so it is not in
//     the top N.
//
// When the scales shrank by more than maxAlpha, the clock went back, or
// no bound was ever stored, the sweep scores every block, as a full one
// does, and starts a new epoch.

// rankScale is mem_config's rank_scale: the current epoch, the largest
// scales any of its bounds was scored on, and the clock of the newest.
type rankScale struct {
	Epoch     int64   `json:"epoch"`
	MaxDegree float64 `json:"max_degree"`
	MaxCount  float64 `json:"max_count"`
	Clock     float64 `json:"clock"`
}

// maxAlpha is how far the scales may have shrunk before a sweep scores
// every block again and starts the scales afresh.
const maxAlpha = 1.5

// RankSeed is how many of the best bounds are scored first, with the
// top N: enough that N of them stay candidates after this sweep's
// removals.
var RankSeed = func(topN int) int { return 2*topN + 16 }

// rankCutMargin widens the cut for the rounding of the scores and bounds
// compared (each a few ulps off the exact number).
const rankCutMargin = 1e-9

// rank plans the top N (plan_reinforce's 'top' rows), keeps every score
// it computed in plan_rank, and sets rankScale to rank_scale as it must be
// once their bounds are stored: raised to cover this sweep's scales, or,
// after scoring every block, a new epoch on this sweep's own.
func (s *sweep) rank(ctx context.Context, full bool) error {
	if s.cfg.ReinforceTopN <= 0 {
		return nil
	}
	old, ok, err := s.storedRankScale(ctx)
	if err != nil {
		return err
	}
	incremental := false
	if !full && ok && s.clock.Hours >= old.Clock {
		if incremental, err = s.rankIncremental(ctx, old); err != nil {
			return err
		}
	}
	if !incremental {
		if _, err := s.db.Exec(ctx, "plan_rank_all"); err != nil {
			return err
		}
	}
	if _, err := s.db.Exec(ctx, "plan_rank_top"); err != nil {
		return err
	}
	scale, err := s.readRankScale(ctx)
	if err != nil {
		return err
	}
	if incremental {
		scale = rankScale{Epoch: old.Epoch, MaxDegree: math.Max(old.MaxDegree, scale.MaxDegree),
			MaxCount: math.Max(old.MaxCount, scale.MaxCount), Clock: math.Max(old.Clock, scale.Clock)}
	} else {
		scale.Epoch = old.Epoch + 1
	}
	s.rankScale = &scale
	if s.opt.signals.Ranked != nil {
		scored, err := s.db.Count(ctx, "SELECT count(*) FROM temp.plan_rank")
		if err != nil {
			return err
		}
		s.opt.signals.Ranked(!incremental, scored)
	}
	return nil
}

// rankIncremental ranks from the stored bounds; done is false when the
// scales shrank too far, and the sweep must score every block.
func (s *sweep) rankIncremental(ctx context.Context, old rankScale) (done bool, err error) {
	// The floors of the pass over the stored states (plan_rank_scale):
	// below the count's, the scales would have shrunk too far (alpha); the
	// degree's is the bridge threshold, which a fifth of the blocks reach
	// (the top degrees are the hubs, which lose an edge in most sweeps):
	// this sweep's, or when it took none, the last one taken.
	degreeFloor := old.MaxDegree / maxAlpha
	bridge := sql.NullFloat64{}
	if b := s.report.BridgeThreshold; b != nil {
		bridge = sql.NullFloat64{Float64: *b, Valid: true}
	} else if err := s.db.Querier().QueryRowContext(ctx, s.opt.sql().Stmts("bridge_start")[0]).Scan(&bridge); err != nil {
		return false, fmt.Errorf("the last bridge threshold: %w", err)
	}
	if bridge.Valid {
		degreeFloor = min(degreeFloor, bridge.Float64)
	}
	floors := []any{sql.Named("degree_floor", degreeFloor),
		sql.Named("count_floor", math.Expm1(math.Log1p(old.MaxCount)/maxAlpha))}
	if _, err := s.db.Exec(ctx, "plan_rank_scale", floors...); err != nil {
		return false, err
	}
	now, err := s.readRankScale(ctx)
	if err != nil {
		return false, err
	}
	alpha := 1.0
	if now.MaxDegree > 0 {
		alpha = math.Max(alpha, old.MaxDegree/now.MaxDegree)
	}
	if now.MaxCount > 0 {
		alpha = math.Max(alpha, math.Log1p(old.MaxCount)/math.Log1p(now.MaxCount))
	}
	if alpha > maxAlpha {
		return false, nil
	}
	if _, err := s.db.Exec(ctx, "plan_rank_seed", sql.Named("seed", RankSeed(s.cfg.ReinforceTopN))); err != nil {
		return false, err
	}
	if _, err := s.db.Exec(ctx, "plan_rank_ids"); err != nil {
		return false, err
	}
	var nth sql.NullFloat64
	err = s.db.Querier().QueryRowContext(ctx, `SELECT score FROM temp.plan_rank ORDER BY score DESC, id LIMIT 1 OFFSET ?`,
		s.cfg.ReinforceTopN-1).Scan(&nth)
	if err != nil && err != sql.ErrNoRows {
		return false, err
	}
	cut := 0.0 // fewer than N scored: every ranked block is a candidate
	if nth.Valid {
		cut = nth.Float64 / alpha * (1 - rankCutMargin)
	}
	if _, err := s.db.Exec(ctx, "plan_rank_more", sql.Named("cut", cut-2*float64(old.Epoch))); err != nil {
		return false, err
	}
	if _, err := s.db.Exec(ctx, "plan_rank_ids"); err != nil {
		return false, err
	}
	return true, nil
}

// readRankScale reads the scales the plan ranked on.
func (s *sweep) readRankScale(ctx context.Context) (rankScale, error) {
	var m, c sql.NullFloat64
	err := s.db.Querier().QueryRowContext(ctx, `SELECT max_degree, max_count FROM temp.rank_scale`).Scan(&m, &c)
	if err != nil && err != sql.ErrNoRows {
		return rankScale{}, fmt.Errorf("rank scales: %w", err)
	}
	return rankScale{MaxDegree: m.Float64, MaxCount: c.Float64, Clock: s.clock.Hours}, nil
}

// storedRankScale reads mem_config's rank_scale; ok is false when there
// is none (no bound stored yet) or it does not parse.
func (s *sweep) storedRankScale(ctx context.Context) (rankScale, bool, error) {
	var text sql.NullString
	err := s.db.Querier().QueryRowContext(ctx, `SELECT value FROM main.mem_config WHERE key = 'rank_scale'`).Scan(&text)
	if err == sql.ErrNoRows || (err == nil && !text.Valid) {
		return rankScale{}, false, nil
	}
	if err != nil {
		return rankScale{}, false, err
	}
	var r rankScale
	if json.Unmarshal([]byte(text.String), &r) != nil {
		return rankScale{}, false, nil
	}
	return r, true, nil
}

// storeRankBounds stores every score the plan computed as its block's
// bound, in bounded transactions, rank_scale (rankScale) first, and runs
// last in the last of them: the finish's writes, so that a sweep that
// removed little commits its bounds and its record at once. (A full sweep
// on a file stores the bounds with its derived state instead:
// syncDerived.) With no last (nil), nothing more runs.
//
// The degrees the removals logged are folded (fold_degrees) in that last
// transaction too: the bounds go to the same block states' leaves,
// written once for both, and the first transaction, whose pace sizes the
// next ones (txRows), measures the bounds alone.
func (s *sweep) storeRankBounds(ctx context.Context, last func() error) error {
	foldAndLast := func() error {
		if _, err := s.db.Exec(ctx, "fold_degrees"); err != nil || last == nil {
			return err
		}
		return last()
	}
	rows := int64(0)
	if s.rankScale != nil && !s.rankStored {
		var err error
		if rows, err = s.lastRow(ctx, "plan_rank"); err != nil {
			return err
		}
	}
	if rows == 0 && last == nil {
		return s.foldDegrees(ctx)
	}
	if rows == 0 { // no bound to store
		return s.inTxGuarded(ctx, foldAndLast)
	}
	scale := *s.rankScale
	return s.chunks(ctx, "plan_rank", store.SyncChunkFactor*s.opt.ChunkSize, true, func(lo, hi int64) error {
		// With the first rows (and with them again, when their transaction
		// was rolled back to run guarded).
		if lo == 1 {
			if err := s.setRankScale(ctx, scale); err != nil {
				return err
			}
		}
		if _, err := s.db.Exec(ctx, "apply_rank_bounds", append(chunkArgs(lo, hi), sql.Named("epoch", scale.Epoch))...); err != nil {
			return err
		}
		if hi < rows {
			return nil
		}
		return foldAndLast()
	})
}

func (s *sweep) setRankScale(ctx context.Context, r rankScale) error {
	text, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.db.Querier().ExecContext(ctx, `INSERT INTO main.mem_config (key, value) VALUES ('rank_scale', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, string(text))
	return err
}
