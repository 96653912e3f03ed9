package sweepsql

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// The sweep's SQL lives in sql/, one file per phase: temp.sql (its temp
// tables), refresh.sql, sync.sql, plan.sql, apply.sql and
// housekeeping.sql. Each statement list is named by a "-- name:" line and
// run by name (fileStore.exec); the macros in capitals are the rules of
// rules.go and the event encoders of events.go, written once.
//
//go:embed sql/*.sql
var sqlFiles embed.FS

// Macros expands the rules and encoders named in the SQL files.
var Macros = strings.NewReplacer(
	"BLOCK_TAGS", blockTags, "VALID_EDGE", ValidEdge, "EDGE_PROBLEM", edgeProblem, "EDGE_LAMBDA", EdgeLambda, "EDGE_STRENGTH", edgeStrength,
	"STATIC_PRUNE", staticPrune, "STATIC_CANDIDATE", staticCandidate, "DECAY_CANDIDATE", decayCandidate, "MAY_BE_REMOVED", mayBeRemoved, "PLANNED_SETTLED", plannedSettled, "MAX_FINITE", maxFinite, "TEMPORAL_DECAY", temporalDecay, "REMOVAL_PHASES", RemovalPhases,
	"EDGE_EVALUATION_ALL", edgeEvaluationAll, "EDGE_EVALUATION_HASHED", edgeEvaluationHashed, "EDGE_EVALUATION", edgeEvaluation, "EDGE_DUE_ROWS", edgeDueRows, "EDGE_OBSERVED_AT", edgeObservedAt,
	"FACT_PROBLEM", factProblem, "FACT_SINCE", factSince, "BLOCK_KEY_PROBLEM", blockKeyProblem,
	"BLOCK_ANCHOR_NOT_FINITE", blockAnchorNotFinite, "BLOCK_CONFIDENCE_NOT_FINITE", blockConfidenceNotFinite,
	"EXPIRED_SWEEP", expiredSweep, "NEXT_EVENT_ID", NextEventID,
	"EDGE_ARCHIVE_COLS", archiveInsertCols("edge"), "BLOCK_ARCHIVE_COLS", archiveInsertCols("block"),
	"FACT_ARCHIVE_COLS", archiveInsertCols("fact"), "BUMP_IDS_EDGES", bumpEventIDs("@ARCHIVE_EDGES"),
	"BUMP_IDS_NODES", bumpEventIDs("@ARCHIVE_NODES"), "BUMP_IDS_FACTS", bumpEventIDs("@ARCHIVE_FACTS"),
	"CHUNK_EVENTS_NODES", chunkEvents("@ARCHIVE_NODES", "apply_rows"), "CHUNK_EVENTS_EDGES", chunkEvents("@ARCHIVE_EDGES", "apply_edge_keys"),
	"CHUNK_EVENTS_ORPHANS", chunkEvents("@ARCHIVE_NODES", "apply_block_ids"), "CHUNK_EVENTS_FACTS", chunkEvents("@ARCHIVE_FACTS", "apply_rows"),
	"RANK_INPUTS_ALL", rankInputs("@NODES b"), "RANK_INPUTS_OF_IDS", rankInputs("rank_ids r CROSS JOIN @NODES b ON b.id = r.id"),
	"RANK_SCORED", rankScored, "RANK_BOUND_KEPT", rankBoundKept, "RANKED_UNTOUCHED", rankedUntouched, "NOT_RANKED", notRanked, "ACTIVE_IN_STATE", activeInState,
	"BRIDGE_START", bridgeStart,
	"ORPHANS_PLANNED", orphansPlanned, "LOST_STRENGTHS", lostStrengths, "REINFORCE_KEPT_PROBLEM", Literal(ReinforceKeptProblem))

// orphansPlanned holds while the plan deletes an edge under a policy that
// archives its orphaned ends (orphan_blocks): one look into the partial
// index of those deletions, not a scan of the plan.
const orphansPlanned = `EXISTS (SELECT 1 FROM plan_edges q INDEXED BY plan_edges_orphan_a WHERE q.phase = 'policy' AND q.orphans = 'delete')`

// ReinforceKeptProblem names a block whose reinforcement an app's trigger
// ignored (apply_reinforce; the sweep's finish takes it off the report).
const ReinforceKeptProblem = "reinforce kept by app: its update was ignored"

// expiredSweep is a mem_sweeps row that expires with the events of its
// time: finished, started before :cutoff and older than the sweep :sweep
// (its own row stays: status reads it, later ids count from it).
const expiredSweep = `(started_at < :cutoff AND finished_at IS NOT NULL AND status != 'running' AND id < :sweep)`

// Statements holds the named statement lists of the SQL files.
var Statements = func() map[string][]string {
	named := map[string][]string{}
	files, err := fs.Glob(sqlFiles, "sql/*.sql")
	if err != nil {
		panic(err)
	}
	add := func(name, file string, list []string) {
		if _, dup := named[name]; dup {
			panic(fmt.Sprintf("worker: statement %q named twice (%s)", name, file))
		}
		named[name] = list
	}
	for _, f := range files {
		text, err := sqlFiles.ReadFile(f)
		if err != nil {
			panic(err)
		}
		for name, list := range parseNamed(string(text)) {
			if name != "empty_QUEUE" {
				add(name, f, list)
				continue
			}
			for _, q := range EmptiedWhole {
				r := strings.NewReplacer("QUEUE_KEY", q.Key, "QUEUE", q.Table)
				each := make([]string, len(list))
				for i, stmt := range list {
					each[i] = r.Replace(stmt)
				}
				add("empty_"+q.Table, f, each)
			}
		}
	}
	return named
}()

// EmptiedWhole are the tables a finished sweep may empty whole but for the
// rows queued after its mark (empty_QUEUE), each with its mark's column.
var EmptiedWhole = []struct{ Table, Key string }{
	{"mem_dirty_blocks", "seq"}, {"mem_dirty_edges", "seq"}, {"mem_dirty_facts", "seq"}, {"mem_sweep_plans", "sweep_id"},
}

// parseNamed splits "-- name: x" sections into their statements (split at a
// ';' that ends a line; no statement here has a trigger body), with the
// macros expanded.
func parseNamed(text string) map[string][]string {
	out := map[string][]string{}
	name := ""
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" && name != "" {
			out[name] = append(out[name], Macros.Replace(s))
		}
		cur.Reset()
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if n, ok := strings.CutPrefix(trimmed, "-- name:"); ok {
			flush()
			name = strings.TrimSpace(n)
			continue
		}
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			flush()
		}
	}
	flush()
	return out
}

// Stmts is the statement list of a name for memworker's own tables; a
// name that is not in the SQL files is a programming error.
func Stmts(name string) []string { return MemTables.Stmts(name) }
