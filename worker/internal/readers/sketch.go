package readers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/settings"
)

// Sketch is one row's decay over its own time axis, for explain --plot:
// the curve from its last anchor, where "now" is on it, and where it
// crosses each threshold that acts on it.
type Sketch struct {
	Title  string       `json:"title"`
	Clock  string       `json:"clock"` // active_hours or wall_hours (x in hours) or wall (x in days)
	YLabel string       `json:"y_label"`
	Points [][2]float64 `json:"points"`
	Now    float64      `json:"now"` // elapsed time since the anchor
	// At is the clock's reading now: active hours, or unix seconds on the
	// wall clock. A drawing puts its time axis relative to it.
	At    float64      `json:"at"`
	Lines []SketchLine `json:"lines"`
}

// SketchLine is a threshold and when the curve falls below it (nil: never).
type SketchLine struct {
	Name     string   `json:"name"`
	Value    float64  `json:"value"`
	Crossing *float64 `json:"crossing"`
}

const sketchPoints = 200

// sketchSQL evaluates expr (of ?1..?3 and the time x) at evenly spaced times
// from 0 to ?4.
const sketchSQL = `
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
SELECT x, %s FROM (SELECT ?4 * i / %d.0 AS x FROM n)`

// EdgeSketch draws the edge between a and b as mem_edges_effective sees it:
// its tiered or policy curve from its anchor, its threshold and where the
// curve crosses it (curve_horizon from the anchor, so a row already past it
// is marked where it crossed). A pinned edge, an agent edge on the tiered
// model and an edge with no anchor time keep their weight: a flat line.
func EdgeSketch(ctx context.Context, db *memdb.DB, a, b string, at *time.Time) (*Sketch, error) {
	var clock, relation, origin, curve string
	var elapsed sql.NullFloat64
	var threshold, weight, hours, wall float64
	var pinned, wallHours bool
	err := adapter.WithEffectiveViewsAt(ctx, db, at, func(r adapter.ViewsReader) error {
		wallHours = r.WallHours
		if !r.Mapped && a > b {
			a, b = b, a
		}
		return r.Q.QueryRowContext(ctx, `
		SELECT clock, elapsed, weight, pinned, coalesce(origin, ''), coalesce(relation_type, ''), threshold,
		       json_object('model', 'exponential', 'lambda', lambda), c.active_hours, c.wall
		FROM `+r.Effective+`, `+r.Clock+` c WHERE `+r.Tables.Expand(`@KEY_A = ? AND @KEY_B = ?`), a, b).
			Scan(&clock, &elapsed, &weight, &pinned, &origin, &relation, &threshold, &curve, &hours, &wall)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("explain --plot: %s — %s is no valid edge, so it has no curve", report.Printable(a), report.Printable(b))
	}
	if err != nil {
		return nil, fmt.Errorf("explain --plot: %w", err)
	}
	// An edge with a policy follows the policy's curve and threshold, as
	// the sweep stages them.
	policies, staged, err := settings.StagedPolicies(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("explain --plot: %w", err)
	}
	hasPolicy := false
	for i, p := range policies {
		if p.RelationType == relation {
			curve, threshold, hasPolicy = staged[i].Curve, staged[i].Threshold, true
		}
	}
	kept := pinned || !elapsed.Valid || (origin == "agent" && !hasPolicy)
	var crossing sql.NullFloat64
	if err := db.SQL.QueryRowContext(ctx, `SELECT curve_horizon(?, ?, ?)`, curve, weight, threshold).Scan(&crossing); err != nil {
		return nil, fmt.Errorf("explain --plot: %w", err)
	}
	s := &Sketch{Title: fmt.Sprintf("edge %s — %s", report.Printable(a), report.Printable(b)), Clock: hourClock(clock, wallHours),
		YLabel: "effective weight", Now: elapsed.Float64, At: hours}
	if clock == "wall" {
		s.At = wall
	}
	line := SketchLine{Name: "decay threshold", Value: threshold}
	expr := "curve_weight(?1, ?2, x)"
	if !elapsed.Valid {
		s.Title += " (no anchor time: kept as it is)"
	}
	if kept {
		expr = "?2" // it keeps its weight: pinned, an agent edge, or no anchor to count from
		line.Name += " (not applied: pinned, agent or no anchor)"
	} else if crossing.Valid {
		line.Crossing = &crossing.Float64
	}
	s.Lines = append(s.Lines, line)
	return s, s.evaluate(ctx, db, expr, curve, weight, nil)
}

// FactSketch draws a fact's score against days since its last use, with
// the archive and prune thresholds of its tier and where the score crosses
// each (tideline_horizon from the last use, so a fact already past one is
// marked where it crossed). A confirmed fact is immune: its lines say so.
func FactSketch(ctx context.Context, db *memdb.DB, x *FactExplanation) (*Sketch, error) {
	if x.Invalid {
		return nil, fmt.Errorf("explain --plot: fact %s is not scored: %s", report.Printable(x.ID), x.Verdict)
	}
	s := &Sketch{Title: fmt.Sprintf("fact %s (%s, tier %s)", report.Printable(x.ID), report.Printable(x.Segment), report.Printable(x.Tier)),
		Clock: "wall", YLabel: "score", Now: x.DaysSinceAccess, At: float64(x.WallTime)}
	switch x.Tier {
	case sqlfuncs.FactShort:
		s.Lines = []SketchLine{{Name: "archive below", Value: sqlfuncs.ArchiveScore}, {Name: "prune below", Value: sqlfuncs.PruneScore}}
	case sqlfuncs.FactLong:
		s.Lines = []SketchLine{{Name: "archive below", Value: sqlfuncs.PruneScore}}
	}
	for i := range s.Lines {
		var at sql.NullFloat64
		err := db.SQL.QueryRowContext(ctx, `SELECT tideline_horizon(?, ?, ?, ?, ?)`,
			x.Importance, x.DecayRate, x.AccessCount, s.Lines[i].Value, x.Tier).Scan(&at)
		if err != nil {
			return nil, fmt.Errorf("explain --plot: %w", err)
		}
		if at.Valid {
			s.Lines[i].Crossing = &at.Float64
		}
		if x.Status == "confirmed" {
			s.Lines[i].Name += " (confirmed: immune)"
		}
	}
	return s, s.evaluate(ctx, db, "tideline_score(?1, ?2, x, ?3, ?5)", x.Importance, x.DecayRate, x.AccessCount, x.Tier)
}

// evaluate fills the points from 0 to past now and every crossing. expr
// reads the time x and params as ?1, ?2, ?3 and (when given) ?5; ?4 is the
// end of the axis.
func (s *Sketch) evaluate(ctx context.Context, db *memdb.DB, expr string, params ...any) error {
	end := s.Now
	for _, l := range s.Lines {
		if l.Crossing != nil {
			end = max(end, *l.Crossing)
		}
	}
	end = max(end*1.25, 1)
	args := append(append(append([]any{}, params[:3]...), end), params[3:]...)
	rows, err := db.SQL.QueryContext(ctx, fmt.Sprintf(sketchSQL, sketchPoints, expr, sketchPoints), args...)
	if err != nil {
		return fmt.Errorf("explain --plot: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p [2]float64
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			return err
		}
		s.Points = append(s.Points, p)
	}
	return rows.Err()
}
