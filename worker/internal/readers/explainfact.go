package readers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// FactExplanation says where a fact stands and when a sweep will act on it.
type FactExplanation struct {
	ID              string   `json:"id"`
	Segment         string   `json:"segment"`
	Tier            string   `json:"tier"`
	Status          string   `json:"status"`
	Importance      float64  `json:"importance"`
	DecayRate       float64  `json:"decay_rate"`
	AccessCount     float64  `json:"access_count"`
	WallTime        int64    `json:"wall_time"` // the wall time it is scored at, unix seconds
	DaysSinceAccess float64  `json:"days_since_access"`
	Score           float64  `json:"score"`
	Action          string   `json:"action"`
	ArchiveInDays   *float64 `json:"archive_in_days"`
	PruneInDays     *float64 `json:"prune_in_days"`
	Invalid         bool     `json:"invalid"` // a value is unusable: sweeps skip the row
	Verdict         string   `json:"verdict"`
}

// ExplainFact scores a fact at the wall time a sweep would take (machine,
// the machine's reading, unless wall_clock is pinned: commandClock) and
// says why it will or will not be archived or pruned, and when.
func ExplainFact(ctx context.Context, db *memdb.DB, id string, machine time.Time) (*FactExplanation, error) {
	now, err := settings.CommandWall(ctx, db, machine)
	if err != nil {
		return nil, fmt.Errorf("explain: fact %q: %w", id, err)
	}
	return ExplainFactAt(ctx, db, id, now)
}

// ExplainFactAt is ExplainFact at the wall clock now, whatever is pinned
// (explain --wall-now).
func ExplainFactAt(ctx context.Context, db *memdb.DB, id string, now time.Time) (*FactExplanation, error) {
	x := &FactExplanation{ID: id, WallTime: now.Unix()}
	// The sweep's own rules (rules.go) decide whether the row is usable and
	// when its age counts from; its numbers are read only when it is.
	var segment, status, problem sql.NullString
	var importance, decayRate, count, since any
	err := adapter.ThroughMapping(ctx, db, func(q memdb.Querier, tables *sweepsql.Dialect) error {
		return q.QueryRowContext(ctx, tables.Expand(sweepsql.Macros.Replace(`SELECT f.segment, coalesce(f.tier, ''), f.status,
		f.importance, f.decay_rate, f.access_count, FACT_SINCE, FACT_PROBLEM FROM @FACTS f WHERE f.id = ?`)), id).
			Scan(&segment, &x.Tier, &status, &importance, &decayRate, &count, &since, &problem)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("explain: fact %q: %w (a pruned fact lives on in mem_events; memworker restore --fact %s)", id, memdb.ErrNoFact, id)
	}
	if err != nil {
		return nil, fmt.Errorf("explain: fact %q: %w", id, err)
	}
	x.Segment, x.Status = segment.String, status.String
	if problem.Valid {
		x.Invalid = true
		x.Verdict = fmt.Sprintf("invalid row: %s; sweeps skip it and never archive or prune it", problem.String)
		return x, nil
	}
	var start float64
	for _, v := range []struct {
		dst *float64
		src any
	}{{&x.Importance, importance}, {&x.DecayRate, decayRate}, {&x.AccessCount, count}, {&start, since}} {
		if *v.dst, err = toFloat(v.src); err != nil {
			return nil, fmt.Errorf("explain: fact %q: %w", id, err)
		}
	}
	x.DaysSinceAccess = math.Max(0, (float64(now.Unix())-start)/86400)
	score := func(days float64) (float64, error) {
		return sqlfuncs.TidelineScore(x.Importance, x.DecayRate, days, x.AccessCount, x.Tier)
	}
	if x.Score, err = score(x.DaysSinceAccess); err != nil {
		return nil, fmt.Errorf("explain: fact %q: %w", id, err)
	}
	if x.Action, err = sqlfuncs.LifecycleAction(x.Score, x.Tier, x.Status == "confirmed"); err != nil {
		return nil, fmt.Errorf("explain: fact %q: %w", id, err)
	}
	// Days until the score crosses a threshold: the horizon the sweep
	// schedules the fact by (one formula, in sqlfuncs).
	crossing := func(threshold float64) *float64 {
		h, err := sqlfuncs.TidelineHorizon(x.Importance, x.DecayRate, x.AccessCount, threshold, x.Tier)
		if err != nil || h.Never {
			return nil
		}
		d := math.Max(0, h.At-x.DaysSinceAccess)
		return &d
	}
	switch {
	case x.Status == "archived":
		x.Verdict = "archived: out of recall; memworker restore --fact " + id + " brings it back"
	case x.Tier == sqlfuncs.FactPermanent:
		x.Verdict = "permanent: scores 1 and is never archived or pruned"
	case x.Status == "confirmed":
		x.Verdict = fmt.Sprintf("confirmed: immune to archive and prune (score %.3f)", x.Score)
	case x.Tier == sqlfuncs.FactLong:
		x.ArchiveInDays = crossing(sqlfuncs.PruneScore)
		x.Verdict = fmt.Sprintf("long tier: archived (never pruned) once the score falls below %.2f", sqlfuncs.PruneScore)
	default:
		x.ArchiveInDays = crossing(sqlfuncs.ArchiveScore)
		x.PruneInDays = crossing(sqlfuncs.PruneScore)
		x.Verdict = fmt.Sprintf("short tier: archived below %.2f, pruned below %.2f", sqlfuncs.ArchiveScore, sqlfuncs.PruneScore)
	}
	if x.Action != sqlfuncs.ActionKeep && x.Status != "archived" {
		x.Verdict = fmt.Sprintf("the next sweep will %s it (score %.3f); ", x.Action, x.Score) + x.Verdict
	}
	return x, nil
}
