package readers

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/mapping"
)

// The data memworker plot draws, computed by the extension's own functions
// in SQL (one source of truth for every formula); the drawing is the CLI's.

// Curve is one decay curve in use: the weight left of an edge of weight 1
// against elapsed time on its clock.
type Curve struct {
	Name      string       `json:"name"`  // "tier durable" or "policy works_on"
	Clock     string       `json:"clock"` // active_hours or wall_hours (x in hours) or wall (x in days)
	Points    [][2]float64 `json:"points"`
	Threshold float64      `json:"threshold"`
	// Crossing is when the curve falls below its threshold (or reaches 0,
	// for a linear curve without one); nil when it never does.
	Crossing *float64 `json:"crossing"`
	// SameAs names an earlier curve on the same clock with the same
	// points and threshold: drawn on top of it, so a reader is told.
	SameAs string `json:"same_as,omitempty"`
}

// TimeLeft is the time left before decay of the live edges of one group (a
// tier pair or a policy), on the group's clock.
type TimeLeft struct {
	Group  string    `json:"group"`
	Clock  string    `json:"clock"`
	Values []float64 `json:"values"`
}

// SweepRemovals is what one finished sweep removed, by kind: blocks
// archived (orphans included) and the edges that went with them, edges
// pruned, decayed and removed by a policy, facts archived or pruned.
type SweepRemovals struct {
	ID                     int64   `json:"id"`
	StartedAt              int64   `json:"started_at"`
	ClockHours             float64 `json:"clock_hours"`
	Archived               int64   `json:"archived"`
	EdgesRemovedWithBlocks int64   `json:"edges_removed_with_blocks"`
	EdgesPruned            int64   `json:"edges_pruned"`
	EdgesDecayed           int64   `json:"edges_decayed"`
	EdgesPolicy            int64   `json:"edges_policy_decayed"`
	FactsRemoved           int64   `json:"facts_removed"`
}

// PlotData is everything memworker plot draws.
type PlotData struct {
	Curves   []Curve         `json:"curves"`
	TimeLeft []TimeLeft      `json:"time_left"`
	Sweeps   []SweepRemovals `json:"sweeps"`
}

// curvePoints is the number of points per decade of the log-scaled time axis.
const curvePoints = 24

// tierCurvesSQL is each tier's edge curve: both ends of that tier, never
// reinforced, at the mapping's half-lives (?1, ” for the reference's).
const tierCurvesSQL = `
WITH tiers(tier, rank) AS (VALUES ('permanent', 1), ('durable', 2), ('standard', 3), ('ephemeral', 4))
SELECT 'tier ' || tier, json_object('model', 'exponential', 'lambda',
       CASE WHEN ?1 = '' THEN lambda_edge(tier, tier) ELSE lambda_edge(tier, tier, 0, 10, ?1) END) FROM tiers ORDER BY rank`

// pointsSQL evaluates one curve at the times of a JSON array, in order
// (the times are computed in Go: SQLite built without its math functions,
// rqlited's among them, has no pow).
const pointsSQL = `SELECT value, curve_weight(?1, 1, value) FROM json_each(?2) ORDER BY key`

// logTimes are the times 10^(lo + i/perDecade) for i = 0..n, as a JSON array.
func logTimes(lo float64, n, perDecade int) string {
	xs := make([]float64, n+1)
	for i := range xs {
		xs[i] = math.Pow(10, lo+float64(i)/float64(perDecade))
	}
	b, _ := json.Marshal(xs) // finite numbers always marshal
	return string(b)
}

// Plot reads the data memworker plot draws from a memory database opened
// with OpenMemory (through a mapping, the time left of the app's links).
func Plot(ctx context.Context, db *memdb.DB) (PlotData, error) {
	var d PlotData
	if err := plotCurves(ctx, db, &d); err != nil {
		return d, fmt.Errorf("plot: the curves: %w", err)
	}
	wallHours := false
	err := adapter.WithEffectiveViews(ctx, db, func(r adapter.ViewsReader) error {
		wallHours = r.WallHours
		return plotTimeLeft(ctx, r.Q, r.Effective, &d)
	})
	if err != nil {
		return d, fmt.Errorf("plot: time left: %w", err)
	}
	// Through a mapping of wall times the hour clock is the wall's: its
	// curves and groups say so (plot names their files and axes by it).
	if wallHours {
		for i := range d.Curves {
			d.Curves[i].Clock = hourClock(d.Curves[i].Clock, true)
		}
		for i := range d.TimeLeft {
			d.TimeLeft[i].Clock = hourClock(d.TimeLeft[i].Clock, true)
		}
	}
	if err := plotSweeps(ctx, db.SQL, &d); err != nil {
		return d, fmt.Errorf("plot: sweeps: %w", err)
	}
	return d, nil
}

// ClockWallHours is the hour clock of a mapping of wall times (hours since
// 1970) where a plot or a sketch would otherwise say active hours.
const ClockWallHours = "wall_hours"

// hourClock is clock, or ClockWallHours for the active-hours clock of a
// mapping of wall times (wallHours).
func hourClock(clock string, wallHours bool) string {
	if wallHours && clock == sqlfuncs.ClockActiveHours {
		return ClockWallHours
	}
	return clock
}

// plotCurves evaluates the tier curves and each policy's curve as a sweep
// stages it (worker.StagedPolicies), with its threshold and crossing.
func plotCurves(ctx context.Context, db *memdb.DB, d *PlotData) error {
	type spec struct {
		Curve
		json string
	}
	cfg, err := settings.LoadConfig(ctx, db.SQL)
	if err != nil {
		return err
	}
	var halfLives string
	if m, err := mapping.Load(ctx, db.SQL); err != nil {
		return err
	} else if !m.IsDefault() {
		halfLives = m.HalfLives()
	}
	rows, err := db.SQL.QueryContext(ctx, tierCurvesSQL, halfLives)
	if err != nil {
		return err
	}
	var specs []spec
	for rows.Next() {
		s := spec{Curve: Curve{Clock: sqlfuncs.ClockActiveHours, Threshold: cfg.EdgeDecayThreshold}}
		if err := rows.Scan(&s.Name, &s.json); err != nil {
			rows.Close()
			return err
		}
		specs = append(specs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	policies, staged, err := settings.StagedPolicies(ctx, db)
	if err != nil {
		return err
	}
	for i, p := range policies {
		specs = append(specs, spec{Curve: Curve{Name: "policy " + p.RelationType, Clock: p.Clock, Threshold: staged[i].Threshold},
			json: staged[i].Curve})
	}
	q := db.SQL
	for _, s := range specs {
		var crossing sql.NullFloat64
		if err := q.QueryRowContext(ctx, `SELECT curve_horizon(?, 1, ?)`, s.json, s.Threshold).Scan(&crossing); err != nil {
			return err
		}
		if crossing.Valid {
			s.Crossing = &crossing.Float64
		}
		lo, hi := timeSpan(s.Clock, s.Crossing)
		n := int(math.Round((hi - lo) * curvePoints))
		pts, err := q.QueryContext(ctx, pointsSQL, s.json, logTimes(lo, n, curvePoints))
		if err != nil {
			return err
		}
		for pts.Next() {
			var p [2]float64
			if err := pts.Scan(&p[0], &p[1]); err != nil {
				pts.Close()
				return err
			}
			s.Points = append(s.Points, p)
		}
		pts.Close()
		if err := pts.Err(); err != nil {
			return err
		}
		for _, c := range d.Curves {
			if c.SameAs == "" && c.Clock == s.Clock && c.Threshold == s.Threshold && slices.Equal(c.Points, s.Points) {
				s.SameAs = c.Name
				break
			}
		}
		d.Curves = append(d.Curves, s.Curve)
	}
	return nil
}

// timeSpan is the log10 range of a curve's time axis: from 1 hour (or
// 0.1 day) to past its crossing, at least three decades.
func timeSpan(clock string, crossing *float64) (lo, hi float64) {
	lo = 0
	if clock == "wall" {
		lo = -1
	}
	hi = lo + 3
	if crossing != nil && *crossing > 0 {
		hi = max(hi, math.Ceil(math.Log10(*crossing)+0.3))
	}
	return lo, min(hi, lo+8)
}

// tierRank orders the tiers from the slowest decay to the fastest.
var tierRank = map[string]int{"permanent": 0, "durable": 1, "standard": 2, "ephemeral": 3}

// plotTimeLeft groups the live edges' time left by policy, or by their
// pair of tiers in tier order (an edge's ends have no order that matters:
// standard–ephemeral and ephemeral–standard are one pair).
func plotTimeLeft(ctx context.Context, q memdb.Querier, effective string, d *PlotData) error {
	rows, err := q.QueryContext(ctx, `
		SELECT model, coalesce(relation_type, ''), coalesce(tier_from, 'standard'), coalesce(tier_to, 'standard'), clock, time_left
		FROM `+effective+` WHERE state = 'live' AND time_left IS NOT NULL AND NOT excluded`)
	if err != nil {
		return err
	}
	defer rows.Close()
	byGroup := map[string]*TimeLeft{}
	for rows.Next() {
		var model, relation, a, b, clock string
		var v float64
		if err := rows.Scan(&model, &relation, &a, &b, &clock, &v); err != nil {
			return err
		}
		g := "policy " + relation
		if model == "tiered" {
			if tierRank[a] > tierRank[b] {
				a, b = b, a
			}
			g = "tier " + a + "-" + b
		}
		if byGroup[g] == nil {
			byGroup[g] = &TimeLeft{Group: g, Clock: clock}
		}
		byGroup[g].Values = append(byGroup[g].Values, v)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, g := range byGroup {
		slices.Sort(g.Values)
		d.TimeLeft = append(d.TimeLeft, *g)
	}
	slices.SortFunc(d.TimeLeft, func(x, y TimeLeft) int { return strings.Compare(x.Group, y.Group) })
	return nil
}

func plotSweeps(ctx context.Context, q *sql.DB, d *PlotData) error {
	rows, err := q.QueryContext(ctx, `SELECT id, started_at, coalesce(clock_hours, 0),
		       coalesce(result ->> '$.archived', 0) + coalesce(result ->> '$.orphans_archived', 0),
		       coalesce(result ->> '$.edges_removed_with_blocks', 0),
		       coalesce(result ->> '$.edges_pruned', 0), coalesce(result ->> '$.edges_decayed', 0),
		       (SELECT coalesce(sum(p.value ->> '$.decayed'), 0) FROM json_each(result, '$.policies') p),
		       coalesce(result ->> '$.facts.archived', 0) + coalesce(result ->> '$.facts.pruned', 0)
		FROM mem_sweeps WHERE status = 'done' AND NOT dry_run AND result IS NOT NULL ORDER BY id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s SweepRemovals
		if err := rows.Scan(&s.ID, &s.StartedAt, &s.ClockHours, &s.Archived, &s.EdgesRemovedWithBlocks,
			&s.EdgesPruned, &s.EdgesDecayed, &s.EdgesPolicy, &s.FactsRemoved); err != nil {
			return err
		}
		d.Sweeps = append(d.Sweeps, s)
	}
	return rows.Err()
}
