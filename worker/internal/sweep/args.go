package sweep

import (
	"database/sql"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// chunkArgs binds a chunk's seq range to the :lo and :hi of a statement.
func chunkArgs(lo, hi int64) []any { return []any{sql.Named("lo", lo), sql.Named("hi", hi)} }

// args binds every parameter the sweep's statements use; each statement
// takes the ones it names.
func (s *sweep) args(extra ...any) []any {
	return append([]any{
		sql.Named("now", s.clock.Hours),
		sql.Named("wall", s.clock.Wall.Unix()),
		sql.Named("sweep", s.report.SweepID),
		sql.Named("block_threshold", s.cfg.BlockPruneThreshold),
		sql.Named("prune_threshold", s.cfg.EdgePruneThreshold),
		sql.Named("decay_threshold", s.cfg.EdgeDecayThreshold),
		sql.Named("established", s.cfg.EstablishedEdgeThreshold),
		sql.Named("archive_score", sqlfuncs.ArchiveScore),
		sql.Named("prune_score", sqlfuncs.PruneScore),
		sql.Named("top_n", s.cfg.ReinforceTopN),
		sql.Named("slack", dueSlack),
		sql.Named("block_from", s.marks.blockFrom),
		sql.Named("edge_from", s.marks.edgeFrom),
		sql.Named("fact_from", s.marks.factFrom),
		sql.Named("block_mark", s.marks.block),
		sql.Named("edge_mark", s.marks.edge),
		sql.Named("fact_mark", s.marks.fact),
		sql.Named("counted", s.plannedCounted()),
		sql.Named("settled", s.netDegrees && !s.resume),
	}, append(s.soonArgs(), extra...)...)
}

// plannedCounted is the share of a planned edge's strength that the stored
// degrees still count: 0 once the sync left the plan's removals out.
func (s *sweep) plannedCounted() int {
	if s.netDegrees {
		return 0
	}
	return 1
}

// dueSlack widens "due by now" a little, so rounding between a stored due
// time and the exact check never leaves a row out; the exact check decides.
const dueSlack = 1e-6
