package worker

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed sweep.sql
var sweepSQL string

// edgeSnapshot is the JSON snapshot of an edge row e kept in mem_events, so
// restore can bring the row back exactly.
const edgeSnapshot = `json_object('from_id', e.from_id, 'to_id', e.to_id, 'weight', e.weight,
	'reinforcement_count', e.reinforcement_count, 'relation_type', e.relation_type, 'origin', e.origin,
	'last_active_hours', e.last_active_hours, 'last_observed_at', e.last_observed_at, 'pinned', e.pinned,
	'note', e.note, 'created_at', e.created_at, 'excluded', e.excluded)`

// blockSnapshot and blockTags are the JSON snapshot of a block row b.
const blockSnapshot = `json_object('id', b.id, 'category', b.category, 'status', b.status,
	'archive_reason', b.archive_reason, 'confidence', b.confidence, 'reinforcement_count', b.reinforcement_count,
	'last_reinforced_hours', b.last_reinforced_hours, 'content', b.content, 'created_at', b.created_at)`

const blockTags = `json((SELECT json_group_array(t.tag) FROM main.mem_block_tags t WHERE t.block_id = b.id))`

// statements holds the named statement lists of sweep.sql.
var statements = withEdgeRefreshes(parseNamed(sweepSQL))

// withEdgeRefreshes makes the forms of the edge refresh and of the edge
// evaluation from the one computation of each in sweep.sql: refresh_edges
// and evaluate_edges read queued or scoped edges through the primary key;
// evaluate_edges_all reads every edge in table order, refresh_edges_invalid
// the edges whose numbers are not numbers, and refresh_edges_all takes the
// others' due times from what evaluate_edges_all computed (each edge read
// once, its ends' tiers looked up once, and from temp tables only, so it
// runs after the plan's read snapshot has ended). Edges the plan prunes or
// decays get no due time: their removal settles them, and an app's write
// that saves one queues it for the next refresh.
func withEdgeRefreshes(named map[string][]string) map[string][]string {
	const token = "EDGES_TO_REFRESH"
	chunk := named["refresh_edges"]
	named["refresh_edges_all"] = []string{strings.Replace(chunk[0], token, snapshots.Replace(`(
		SELECT from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours, last_observed_at,
		       pinned, excluded, lambda
		FROM sweep_edges
		WHERE edge_rowid NOT IN (SELECT edge_rowid FROM plan_edges WHERE phase IN REMOVAL_PHASES)) e`), 1)}
	named["refresh_edges_invalid"] = []string{strings.Replace(chunk[0], token, snapshots.Replace(`(
		SELECT e.*, NULL AS lambda FROM main.mem_edges e NOT INDEXED WHERE NOT VALID_EDGE) e`), 1)}
	for i := range chunk {
		chunk[i] = strings.Replace(chunk[i], token, snapshots.Replace(`(
			SELECT e.*, CASE WHEN VALID_EDGE THEN EDGE_LAMBDA END AS lambda
			FROM refresh_edges r CROSS JOIN main.mem_edges e
			     ON e.from_id = r.from_id AND e.to_id = r.to_id AND r.seq BETWEEN :lo AND :hi
			LEFT JOIN mem_block_state ta ON ta.id = e.from_id
			LEFT JOIN mem_block_state tb ON tb.id = e.to_id) e`), 1)
	}
	scope := named["evaluate_edges"]
	named["evaluate_edges_all"] = []string{strings.Replace(scope[0], "EDGES_IN_SCOPE", "valid_edges_scan e", 1)}
	named["evaluate_edges"] = []string{strings.Replace(scope[0], "EDGES_IN_SCOPE",
		"scope_edges s CROSS JOIN valid_edges e ON e.from_id = s.from_id AND e.to_id = s.to_id", 1)}
	return named
}

// validEdge is the test an edge row e passes when its numbers are numbers;
// the others are reported and never touched.
const validEdge = `(typeof(e.weight) IN ('integer', 'real') AND e.weight >= 0
	AND typeof(e.reinforcement_count) IN ('integer', 'real') AND e.reinforcement_count >= 0
	AND (e.last_active_hours IS NULL OR typeof(e.last_active_hours) IN ('integer', 'real'))
	AND (e.last_observed_at IS NULL OR typeof(e.last_observed_at) IN ('integer', 'real')))`

// edgeLambda is an edge e's decay rate from its ends' block states ta and
// tb (a block with none is standard).
const edgeLambda = `lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count, :established)`

// removalPhases are the plan_edges phases whose edges the apply removes
// (the others are removed with their block).
const removalPhases = `('static', 'temporal', 'policy')`

var snapshots = strings.NewReplacer("EDGE_SNAPSHOT", edgeSnapshot, "BLOCK_SNAPSHOT", blockSnapshot, "BLOCK_TAGS", blockTags,
	"VALID_EDGE", validEdge, "EDGE_LAMBDA", edgeLambda, "REMOVAL_PHASES", removalPhases)

// parseNamed splits "-- name: x" sections into their statements (split at a
// ';' that ends a line; no statement here has a trigger body).
func parseNamed(text string) map[string][]string {
	out := map[string][]string{}
	name := ""
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" && name != "" {
			out[name] = append(out[name], snapshots.Replace(s))
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

func stmts(name string) []string {
	s, ok := statements[name]
	if !ok {
		panic(fmt.Sprintf("worker: no statement %q in sweep.sql", name))
	}
	return s
}
