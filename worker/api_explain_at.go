package worker

import (
	"context"
	"time"

	"github.com/memdecay/memdecay/worker/internal/readers"
)

// ExplainEdgeAt is ExplainEdge at the wall clock wall (explain
// --wall-now): the views' wall clock, and through a mapping of wall times
// its hour clock too; it wins over a pinned wall_clock.
func ExplainEdgeAt(ctx context.Context, db *DB, a, b string, wall time.Time) (*EdgeExplanation, error) {
	return readers.ExplainEdge(ctx, db, a, b, &wall)
}

// EdgeSketchAt is EdgeSketch at the wall clock wall.
func EdgeSketchAt(ctx context.Context, db *DB, a, b string, wall time.Time) (*Sketch, error) {
	return readers.EdgeSketch(ctx, db, a, b, &wall)
}

// ExplainFactAt is ExplainFact at the wall clock wall, whatever is pinned.
func ExplainFactAt(ctx context.Context, db *DB, id string, wall time.Time) (*FactExplanation, error) {
	return readers.ExplainFactAt(ctx, db, id, wall)
}

// ClockWallHours is the clock plot data and sketches name the hour clock
// of a mapping of wall times by (hours since 1970, not active hours).
const ClockWallHours = readers.ClockWallHours
