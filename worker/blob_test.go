package worker_test

// BLOBs are rows like any other (docs/sweep.md): a blob in a removed row's
// columns is archived and restored to the byte, and every other value
// comes back with its own SQLite type; a blob where an id belongs is a bad
// row, named and never touched.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// exactRow reads the named columns of the rows of table matching where as
// each value's SQLite type and exact bytes ("text:6869", "real:2.0",
// "blob:", "null:"), nil when no row matches.
func exactRow(t *testing.T, db *worker.DB, table, where string, cols []string, args ...any) map[string]string {
	t.Helper()
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = fmt.Sprintf(`typeof(%[1]s) || ':' || CASE WHEN typeof(%[1]s) IN ('text', 'blob') THEN hex(%[1]s)
			WHEN %[1]s IS NULL THEN '' ELSE quote(%[1]s) END`, c)
	}
	rows, err := db.SQL.Query(`SELECT `+strings.Join(exprs, ", ")+` FROM `+table+` WHERE `+where, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil
	}
	vals := make([]string, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for i, c := range cols {
		m[c] = vals[i]
	}
	return m
}

var (
	exactEdgeCols = []string{"from_id", "to_id", "weight", "reinforcement_count", "relation_type", "origin",
		"last_active_hours", "last_observed_at", "pinned", "note", "created_at", "excluded"}
	exactFactCols = []string{"id", "segment", "tier", "importance", "decay_rate", "access_count", "last_accessed_at",
		"status", "content", "created_at"}
)

// oddValues are values of every SQLite type that JSON holds badly or not
// at all: blobs (empty, ones SQLite ≥ 3.45 reads as JSONB null and text,
// any other bytes), texts with a NUL, with bytes that are not UTF-8 or
// that look like a tagged value, integers at the ends of the 64-bit range,
// reals that look like integers, the largest and an infinite one.
var oddValues = []string{
	`x''`, `x'00'`, `x'5768656c6c6f'`, `x'deadbeef00ff'`, `randomblob(64)`,
	`CAST(x'610062' AS TEXT)`, `CAST(x'ff41' AS TEXT)`, `'{"blob":"00"}'`, `'{"real":"9e999"}'`, `''`, `NULL`,
	`9223372036854775807`, `-9223372036854775808`, `0`,
	`2.0`, `-0.0`, `1.5`, `1e308`, `-1e308`, `1e999`, `-1e999`, `5e-324`, `0.1`,
}

// TestBlobsArchiveAndRestore: a blob in a removed row's note, content,
// tag or other snapshotted column no longer stops the sweep; every removal
// is made with its event, and restore gives back each value with its type
// and bytes (the anchors, which a restore refreshes, aside).
func TestBlobsArchiveAndRestore(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, `
		UPDATE mem_config SET value = 1000 WHERE key = 'active_hours';
		INSERT INTO mem_blocks (id, category, last_reinforced_hours, content) VALUES
			('a', 'knowledge', 1000, x'0102'), ('z', 'knowledge', 1000, NULL),
			('obs', 'observation', 0, x'5768656c6c6f');
		INSERT INTO mem_block_tags VALUES ('obs', x'00'), ('obs', 'meeting'), ('obs', x'');`)
	// For each odd value: an edge a–nN statically pruned with it as its
	// note, one a–cN as its created_at, one a–tN decayed by the default
	// curve with it as its note and real weight 2.0, and a fact pruned with
	// it as its content and segment.
	created := []string{}
	for i, v := range oddValues {
		mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('n%02[1]d', 'knowledge', 1000), ('c%02[1]d', 'knowledge', 1000), ('t%02[1]d', 'knowledge', 1000)`, i))
		mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, note, created_at)
			VALUES ('a', 'n%02[1]d', 0.05, 0, 'observed', 1000, %[2]s, 1700000000),
			       ('a', 'c%02[1]d', 0.05, 0, 'observed', 1000, 'created', coalesce(%[2]s, 0)),
			       ('a', 't%02[1]d', 2.0, 2.5, 'similarity', 0, %[2]s, 1700000001)`, i, v))
		mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count, last_accessed_at, content, created_at)
			VALUES ('f%02[1]d', coalesce(%[2]s, 'context'), 'short', 0.3, 0.5, 0, ?, %[2]s, 1700000000)`, i, v), daysAgo(fixedWall, 400))
		created = append(created, fmt.Sprintf("n%02d", i), fmt.Sprintf("c%02d", i), fmt.Sprintf("t%02d", i))
	}
	// The block obs fades, and its edges (one with a blob note) go with it.
	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, note, created_at) VALUES
		('a', 'obs', 0.5, 12, 'outcome', 1000, x'00', 1), ('obs', 'z', 0.5, 12, 'outcome', 1000, 'text', 2)`)
	created = append(created, "obs")

	edgesBefore := map[string]map[string]string{}
	for _, to := range created {
		from, to := "a", to
		if to == "obs" {
			edgesBefore["obs-z"] = exactRow(t, db, "mem_edges", "from_id = 'obs' AND to_id = 'z'", exactEdgeCols)
		}
		edgesBefore[from+"-"+to] = exactRow(t, db, "mem_edges", "from_id = ? AND to_id = ?", exactEdgeCols, from, to)
	}
	factsBefore := map[string]map[string]string{}
	for i := range oddValues {
		id := fmt.Sprintf("f%02d", i)
		factsBefore[id] = exactRow(t, db, "mem_facts", "id = ?", exactFactCols, id)
	}
	tagsBefore := exactTags(t, db, "obs")

	r, err := worker.Sweep(ctx, db, worker.SweepOptions{Now: ptr(1000.0), WallNow: &fixedWall, ChunkSize: 7})
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	n := int64(len(oddValues))
	if r.EdgesPruned != 2*n || r.EdgesDecayed != n || r.Archived != 1 || r.EdgesRemovedWithBlocks != 2 ||
		r.Facts.Pruned != n || r.InvalidRows.Count != 0 {
		t.Fatalf("sweep: %s (pruned %d, decayed %d, facts %+v, invalid %+v)", r.Summary, r.EdgesPruned, r.EdgesDecayed, r.Facts, r.InvalidRows)
	}
	for k := range edgesBefore {
		from, to, _ := strings.Cut(k, "-")
		if exactRow(t, db, "mem_edges", "from_id = ? AND to_id = ?", exactEdgeCols, from, to) != nil {
			t.Errorf("edge %s is still there", k)
		}
	}
	// The events are JSON a reader decodes, numbers as numbers.
	for _, e := range eventsWhere(t, db, `sweep_id = ?`, r.SweepID) {
		if e.Kind == "edge" {
			num(t, e.Detail, "edge.reinforcement_count")
		}
	}
	if ev := eventsFor(t, db, "block", "obs"); len(ev) != 1 || ev[0].Detail["block"].(map[string]any)["content"] == nil {
		t.Errorf("obs archive events %+v", ev)
	}

	restoreAt := fixedWall.Add(time.Minute)
	if _, err := worker.RestoreBlock(ctx, db, "obs", restoreAt); err != nil {
		t.Fatalf("restore obs: %v", err)
	}
	if got := exactTags(t, db, "obs"); !slices.Equal(got, tagsBefore) {
		t.Errorf("obs tags restored as %v, want %v", got, tagsBefore)
	}
	for k, want := range edgesBefore {
		from, to, _ := strings.Cut(k, "-")
		if from != "obs" && to != "obs" {
			if _, err := worker.RestoreEdge(ctx, db, from, to, restoreAt); err != nil {
				t.Errorf("restore %s: %v", k, err)
				continue
			}
		}
		got := exactRow(t, db, "mem_edges", "from_id = ? AND to_id = ?", exactEdgeCols, from, to)
		for _, c := range exactEdgeCols {
			if c == "last_active_hours" || c == "last_observed_at" {
				continue // anchors: refreshed
			}
			if got[c] != want[c] {
				t.Errorf("restored edge %s: %s = %s, want %s", k, c, got[c], want[c])
			}
		}
	}
	for id, want := range factsBefore {
		if _, err := worker.RestoreFact(ctx, db, id, restoreAt); err != nil {
			t.Errorf("restore %s: %v", id, err)
			continue
		}
		got := exactRow(t, db, "mem_facts", "id = ?", exactFactCols, id)
		for _, c := range exactFactCols {
			if c == "last_accessed_at" || c == "status" {
				continue
			}
			if got[c] != want[c] {
				t.Errorf("restored fact %s: %s = %s, want %s", id, c, got[c], want[c])
			}
		}
	}
}

// exactTags is a block's tags as exactRow gives values, sorted.
func exactTags(t *testing.T, db *worker.DB, id string) []string {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT typeof(tag) || ':' || hex(tag) FROM mem_block_tags WHERE block_id = ? ORDER BY 1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestRestorePlainSnapshots: events written before snapshots told types
// apart (plain JSON values) restore as they did.
func TestRestorePlainSnapshots(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, knowledgeBlocks("a", "b")+`UPDATE mem_config SET value = 10 WHERE key = 'active_hours';`)
	mustExec(t, db, `INSERT INTO mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail) VALUES
		(NULL, 1, 10, 'edge', json_array('a', 'b'), 'prune', 'static', json_object('edge', json_object('from_id', 'a', 'to_id', 'b',
			'weight', 0.05, 'reinforcement_count', 0, 'relation_type', 'similar', 'origin', 'observed', 'last_active_hours', 3.5,
			'pinned', 0, 'note', 'old note', 'created_at', 1700000000, 'excluded', 0), 'effective_weight', 0.05)),
		(NULL, 1, 10, 'fact', 'f', 'prune', 'faded', json_object('fact', json_object('id', 'f', 'segment', 'context', 'tier', 'short',
			'importance', 0.3, 'decay_rate', 0.5, 'access_count', 2, 'last_accessed_at', 1, 'status', 'active',
			'content', 'old content', 'created_at', 1700000000), 'score', 0.01))`)
	// Tags as a JSON array, and as a string holding one.
	mustExec(t, db, `INSERT INTO mem_blocks (id, category, status, archive_reason, last_reinforced_hours) VALUES
		('old1', 'observation', 'archived', 'decayed', 0), ('old2', 'observation', 'archived', 'decayed', 0);
		INSERT INTO mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail) VALUES
		(NULL, 1, 10, 'block', 'old1', 'archive', 'decayed', json_object('block', json_object('id', 'old1'), 'tags', json('["x","y"]'))),
		(NULL, 1, 10, 'block', 'old2', 'archive', 'decayed', json_object('block', json_object('id', 'old2'), 'tags', '["z"]'))`)
	for id, want := range map[string][]string{"old1": {"text:78", "text:79"}, "old2": {"text:7A"}} {
		if _, err := worker.RestoreBlock(ctx, db, id, fixedWall); err != nil {
			t.Fatal(err)
		}
		if got := exactTags(t, db, id); !slices.Equal(got, want) {
			t.Errorf("%s tags from a plain snapshot: %v, want %v", id, got, want)
		}
	}
	if _, err := worker.RestoreEdge(ctx, db, "a", "b", fixedWall); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"weight": "real:0.05", "reinforcement_count": "integer:0", "relation_type": "text:" + hexOf("similar"),
		"origin": "text:" + hexOf("observed"), "last_active_hours": "real:10.0", "last_observed_at": "null:", "pinned": "integer:0",
		"note": "text:" + hexOf("old note"), "created_at": "integer:1700000000"}
	got := exactRow(t, db, "mem_edges", "from_id = 'a' AND to_id = 'b'", exactEdgeCols)
	for c, w := range want {
		if got[c] != w {
			t.Errorf("edge from a plain snapshot: %s = %s, want %s", c, got[c], w)
		}
	}
	if _, err := worker.RestoreFact(ctx, db, "f", fixedWall); err != nil {
		t.Fatal(err)
	}
	got = exactRow(t, db, "mem_facts", "id = 'f'", exactFactCols)
	for c, w := range map[string]string{"content": "text:" + hexOf("old content"), "importance": "real:0.3", "access_count": "integer:2",
		"created_at": "integer:1700000000", "last_accessed_at": fmt.Sprintf("integer:%d", fixedWall.Unix())} {
		if got[c] != w {
			t.Errorf("fact from a plain snapshot: %s = %s, want %s", c, got[c], w)
		}
	}
}

func hexOf(s string) string { return strings.ToUpper(fmt.Sprintf("%x", s)) }

// TestBlobIDsAreInvalid: a blob where a block, edge end or fact id
// belongs is a bad row: every sweep skips it, counts it and names it, and
// never changes it; the other rows are swept as usual.
func TestBlobIDsAreInvalid(t *testing.T) {
	db, _ := newMemory(t, `
		UPDATE mem_config SET value = 1000 WHERE key = 'active_hours';
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a', 'knowledge', 1000), ('b', 'knowledge', 1000), (x'62', 'knowledge', 1000), (x'6f6273', 'observation', 0),
			('obs', 'observation', 0);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours) VALUES
			('a', x'62', 0.05, 0, 'observed', 1000), (x'62', x'63', 0.05, 0, 'observed', 1000), ('a', 'b', 0.05, 0, 'observed', 1000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours) VALUES
			('a', 'obs', 0.05, 0, x'6b696e64', 'observed', 1000);`)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count, last_accessed_at, content) VALUES
		(x'66', 'context', 'short', 0.3, 0.5, 0, ?, 'x'), ('g', 'context', 'short', 0.3, 0.5, 0, ?, 'y')`,
		daysAgo(fixedWall, 400), daysAgo(fixedWall, 400))
	// A blob id reads as its bytes; the problem names it as it is.
	want := []worker.InvalidRow{
		{Kind: "block", ID: "b", Problem: "id is blob X'62'"},
		{Kind: "block", ID: "obs", Problem: "id is blob X'6F6273'"},
		{Kind: "edge", ID: `["X'62'","X'63'"]`, Problem: "from_id is blob X'62'"},
		{Kind: "edge", ID: `["a","X'62'"]`, Problem: "to_id is blob X'62'"},
		{Kind: "edge", ID: `["a","obs"]`, Problem: "relation_type is blob X'6B696E64'"},
		{Kind: "fact", ID: "f", Problem: "id is blob X'66'"},
	}
	for i, now := range []float64{1000, 1001, 1002} {
		r := sweepAtWall(t, db, now, fixedWall)
		if r.InvalidRows.Count != int64(len(want)) || !slices.Equal(r.InvalidRows.Sample, want) {
			t.Errorf("sweep %d: invalid rows %+v, want %+v", i, r.InvalidRows, want)
		}
		if i == 0 && (r.EdgesPruned != 1 || r.Archived != 1 || r.Facts.Pruned != 1) {
			t.Errorf("sweep %d: %s, facts %+v; want a–b pruned, obs archived, g pruned", i, r.Summary, r.Facts)
		}
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM mem_edges WHERE from_id = 'a' AND to_id = 'b'`:                                                        0,
		`SELECT count(*) FROM mem_edges WHERE typeof(from_id) = 'blob' OR typeof(to_id) = 'blob' OR typeof(relation_type) = 'blob'`: 3,
		`SELECT count(*) FROM mem_blocks WHERE typeof(id) = 'blob' AND status = 'active'`:                                           2,
		`SELECT count(*) FROM mem_facts WHERE typeof(id) = 'blob'`:                                                                  1,
		`SELECT count(*) FROM mem_events WHERE typeof(subject_id) = 'blob' OR detail LIKE '%blob%'`:                                 0,
	} {
		if got := scalar[int](t, db, q); got != want {
			t.Errorf("%s: %d, want %d", q, got, want)
		}
	}
}
