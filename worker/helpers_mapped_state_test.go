package worker_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/worker"
)

// twinWrites makes n random app writes, each the same in every shape:
// links co-retrieved, new links between active nodes, nodes used, links
// deleted, nodes retagged. New links join g.
func twinWrites(t *testing.T, rng *rand.Rand, g *graph, c clock, n int, shapes []*shape, dbs []*worker.DB) {
	t.Helper()
	for range n {
		switch rng.Intn(6) {
		case 0, 1:
			l := g.Links[rng.Intn(len(g.Links))]
			for i, s := range shapes {
				s.touch(t, dbs[i].SQL, l, c)
			}
		case 2:
			a, b := 1+rng.Intn(len(g.Nodes)), 1+rng.Intn(len(g.Nodes))
			if a == b || g.linked(a, b) || shapes[0].statusOf(t, dbs[0], a) != "active" || shapes[0].statusOf(t, dbs[0], b) != "active" {
				continue
			}
			l := g.add(gLink{Src: a, Dst: b, Kind: linkKinds[rng.Intn(len(linkKinds))], Origin: "similarity",
				Weight: float64(200+rng.Intn(800)) / 1000, Ago: hoursAgo(0)})
			for i, s := range shapes {
				s.addLink(t, dbs[i].SQL, l, s.at(c, l.Ago, l.ID))
			}
		case 3:
			id := 1 + rng.Intn(len(g.Nodes))
			for i, s := range shapes {
				s.use(t, dbs[i].SQL, id, c)
			}
		case 4:
			l := g.Links[rng.Intn(len(g.Links))]
			for i, s := range shapes {
				s.drop(t, dbs[i].SQL, l)
			}
		case 5:
			id := 1 + rng.Intn(len(g.Nodes))
			var tags []string
			if rng.Intn(2) == 0 {
				tags = []string{propTags[rng.Intn(len(propTags))]}
			}
			for i, s := range shapes {
				s.retag(t, dbs[i].SQL, id, tags)
			}
		}
	}
}

// eventCounts is mem_events counted by subject kind, action and reason:
// what a sweep through a mapping and one of mem must agree on.
const eventCounts = `SELECT 'event', subject_kind, action, coalesce(reason, ''), count(*), '' FROM mem_events GROUP BY 2, 3, 4`

// commonState renders the graph as every shape can: each link as an
// undirected pair with its kind, weight, count and time of last activity
// in hours; each node with its status, count and time of last use in
// hours; the tags of nodes not archived (where the shape keeps them in a
// table); and the events counted by kind, action and reason.
func commonState(t *testing.T, db *worker.DB, s *shape, tags bool) string {
	t.Helper()
	var lines []string
	for _, q := range append(slices.Clone(s.common), eventCounts) {
		if !tags && strings.HasPrefix(q, "SELECT 'tag'") {
			continue
		}
		rows, err := db.SQL.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			lines = append(lines, fmt.Sprintf("%v", rowValues(t, rows, 6)))
		}
		if err := errorsOf(rows); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func errorsOf(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// columnsOf lists a table's declared columns in order.
func columnsOf(q interface {
	Query(string, ...any) (*sql.Rows, error)
}, table string) ([]string, error) {
	rows, err := q.Query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, err
	}
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return nil, err
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		rows.Close()
		return nil, fmt.Errorf("no table %s", table)
	}
	return cols, errorsOf(rows)
}

// quoted is every column of table as quote() writes it, so that a value's
// type shows: 1 and 1.0 and '1' differ.
func quoted(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `quote("` + c + `")`
	}
	return strings.Join(q, ", ")
}

// readShapeState renders every row and column of the shape's tables,
// quoted, and the events counted by subject, action and reason: two files
// with the same state hold the same bytes in every row. It reads through
// any driver (a file, an rqlite node).
func readShapeState(db *worker.DB, s *shape) (string, error) {
	var b strings.Builder
	for _, tq := range s.state {
		table, order, _ := strings.Cut(tq, " ORDER BY ")
		cols, err := columnsOf(db.SQL, table)
		if err != nil {
			return "", err
		}
		rows, err := db.SQL.Query(`SELECT ` + quoted(cols) + ` FROM ` + table + ` ORDER BY ` + order)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %v\n", table, cols)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			for i, v := range vals {
				if x, ok := v.([]byte); ok {
					vals[i] = string(x)
				}
			}
			fmt.Fprintf(&b, "  %v\n", vals)
		}
		if err := errorsOf(rows); err != nil {
			return "", err
		}
	}
	rows, err := db.SQL.Query(`SELECT subject_kind, subject_id, action, coalesce(reason, ''), count(*) FROM mem_events GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`)
	if err != nil {
		return "", err
	}
	for rows.Next() {
		var kind, subject, action, reason string
		var n int64
		if err := rows.Scan(&kind, &subject, &action, &reason, &n); err != nil {
			rows.Close()
			return "", err
		}
		fmt.Fprintf(&b, "event %s %s %s %s %d\n", kind, subject, action, reason, n)
	}
	return b.String(), errorsOf(rows)
}

func shapeState(t *testing.T, db *worker.DB, s *shape) string {
	t.Helper()
	state, err := readShapeState(db, s)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// quotedRow is one row of table (where), column → quote(value); nil when
// there is no such row.
func quotedRow(t *testing.T, db *worker.DB, table, where string, args ...any) map[string]string {
	t.Helper()
	cols, err := columnsOf(db.SQL, table)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL.Query(`SELECT `+quoted(cols)+` FROM `+table+` WHERE `+where, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil
	}
	m := map[string]string{}
	for i, v := range rowValues(t, rows, len(cols)) {
		m[cols[i]] = fmt.Sprint(v)
	}
	return m
}

func (s *shape) linkRow(t *testing.T, db *worker.DB, l gLink) map[string]string {
	t.Helper()
	return quotedRow(t, db, s.links, s.linkWhere(), s.linkArgs(l)...)
}

func (s *shape) nodeRow(t *testing.T, db *worker.DB, id int) map[string]string {
	t.Helper()
	return quotedRow(t, db, s.nodes, "id = ?", s.node(id))
}

// tagsOf lists a node's tags: its tag rows, or its tags column.
func (s *shape) tagsOf(t *testing.T, db *worker.DB, id int) string {
	t.Helper()
	if s.tagTable == "" {
		return scalar[string](t, db, `SELECT quote(tags) FROM memories WHERE id = ?`, id)
	}
	return scalar[string](t, db, `SELECT coalesce(group_concat(tag, ','), '') FROM (SELECT tag FROM `+s.tagTable+
		` WHERE block_id = ? ORDER BY tag)`, pad(id))
}

// restoredTime says whether a time column a restore wrote (quoted, as
// quotedRow reads it) holds the row's time before (was), or the restore's
// clock c in the column's own form: the restore may anchor it anew, so
// the next sweep does not remove the row again at once.
func (s *shape) restoredTime(t *testing.T, db *worker.DB, was, got string, c clock) bool {
	t.Helper()
	if got == was || got == "NULL" {
		return got == was
	}
	if s.iso {
		return strings.HasPrefix(got, "'") && scalar[int](t, db, `SELECT coalesce(unix_seconds(`+got+`) = ?, 0)`, c.wall.Unix()) == 1
	}
	return !strings.HasPrefix(got, "'") && scalar[int](t, db, `SELECT coalesce(`+got+` = ?, 0)`, c.hours) == 1
}

// expectRestoredRow checks a restored row against its quoted copy from
// before it was removed or archived: byte for byte (types included) but
// for the columns in skip, and the time column anchor, which may hold the
// restore's clock.
func (s *shape) expectRestoredRow(t *testing.T, db *worker.DB, what string, before, got map[string]string, anchor string, c clock, skip ...string) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: %s is missing after the restore", s.name, what)
		return
	}
	for col, was := range before {
		switch {
		case slices.Contains(skip, col):
		case col == anchor:
			if !s.restoredTime(t, db, was, got[col], c) {
				t.Errorf("%s: restored %s: %s = %s, was %s (want it as it was, or the restore's clock)", s.name, what, col, got[col], was)
			}
		case got[col] != was:
			t.Errorf("%s: restored %s: %s = %s, was %s", s.name, what, col, got[col], was)
		}
	}
}

// eventsOfLink lists the events of one link, oldest first.
func (s *shape) eventsOfLink(t *testing.T, db *worker.DB, l gLink) []event {
	t.Helper()
	subjects := s.linkSubjects(l)
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(subjects)), ", ")
	args := []any{}
	for _, sub := range subjects {
		args = append(args, sub)
	}
	return eventsWhere(t, db, `subject_kind = 'edge' AND subject_id IN (`+marks+`)`, args...)
}

// removals keeps the events that remove a row.
func removals(ev []event) []event {
	var out []event
	for _, e := range ev {
		if slices.Contains([]string{"prune", "decay", "delete", "archive"}, e.Action) {
			out = append(out, e)
		}
	}
	return out
}

// mappedCounts is what a sweep through a mapping must report as the same
// sweep of memworker's own tables does: every count and the clocks (not
// the samples, which name rows by the shape's own keys, nor Full: a sweep
// through a mapping may evaluate every row each time).
func mappedCounts(r *worker.Report) string {
	policies := slices.Clone(r.Policies)
	slices.SortFunc(policies, func(a, b worker.PolicyCount) int { return strings.Compare(a.RelationType, b.RelationType) })
	return fmt.Sprintf("clock=%v wall=%d archived=%d orphans_archived=%d with_blocks=%d pruned=%d decayed=%d deferred=%d removed=%d "+
		"before=%d after=%d reinforced=%d constitutional=%d invalid=%d policies=%+v facts=%+v",
		r.ClockHours, r.WallTime, r.Archived, r.OrphansArchived, r.EdgesRemovedWithBlocks, r.EdgesPruned, r.EdgesDecayed, r.EdgesDeferred,
		r.EdgesRemoved, r.EdgesBefore, r.TotalEdgesAfter, r.Reinforced, r.ConstitutionalReinforced, r.InvalidRows.Count, policies, r.Facts)
}

// policyDecayed is the edges every policy removed.
func policyDecayed(r *worker.Report) int64 {
	var n int64
	for _, p := range r.Policies {
		n += p.Decayed
	}
	return n
}

// removedAny is every row a sweep removed or archived.
func removedAny(r *worker.Report) int64 {
	return r.Archived + r.OrphansArchived + r.EdgesRemoved + r.Facts.Archived + r.Facts.Pruned
}

// appIntact fails unless the file is sound and no row breaks the app's
// foreign keys.
func appIntact(t *testing.T, db *worker.DB) {
	t.Helper()
	integrityOK(t, db.SQL)
	rows, err := db.SQL.Query(`PRAGMA foreign_key_check`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		t.Errorf("foreign key broken: %v", rowValues(t, rows, len(cols)))
	}
}

// openAppFK opens a file as an app that enforces its foreign keys: WAL,
// a busy timeout, one connection.
func openAppFK(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL&_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// checkLinksLogged checks, against the app's memory at origPath, that
// every link and memory sweeps newer than base removed or archived has
// exactly one event naming it, and that none names a row still there.
func checkLinksLogged(t *testing.T, db *sql.DB, origPath string, base int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS orig`, origPath); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `DETACH DATABASE orig`)
	// A link is named by its key as text, or as a JSON array (linkSubjects).
	linkEvents := func(id string) string {
		return fmt.Sprintf(`(SELECT count(*) FROM main.mem_events v WHERE v.sweep_id > ?1 AND v.subject_kind = 'edge'
			AND v.action IN ('prune', 'decay', 'delete') AND v.subject_id IN (CAST(%[1]s AS TEXT), json_array(%[1]s),
			json_array(CAST(%[1]s AS TEXT)), json_array(CAST(%[1]s AS TEXT), '')))`, id)
	}
	memoryEvents := func(id string) string {
		return fmt.Sprintf(`(SELECT count(*) FROM main.mem_events v WHERE v.sweep_id > ?1 AND v.subject_kind = 'block'
			AND v.action = 'archive' AND v.subject_id = CAST(%s AS TEXT))`, id)
	}
	for _, c := range []struct{ what, query string }{
		{"removed links without exactly one event", `SELECT o.id FROM orig.links o
			WHERE NOT EXISTS (SELECT 1 FROM main.links l WHERE l.id = o.id) AND ` + linkEvents("o.id") + ` != 1`},
		// A key the app reuses (an INTEGER PRIMARY KEY takes the largest id
		// again once that row is gone) names a new link: only an event of
		// this very link counts.
		{"links still there with a removal event", `SELECT l.id FROM main.links l WHERE ` + strings.Replace(linkEvents("l.id"),
			"v.sweep_id > ?1", "v.sweep_id > ?1 AND v.detail ->> '$.edge.src' IS l.src AND v.detail ->> '$.edge.dst' IS l.dst AND v.detail ->> '$.edge.kind' IS l.kind", 1) + ` > 0`},
		{"archived memories without exactly one event", `SELECT o.id FROM orig.memories o JOIN main.memories m ON m.id = o.id
			WHERE o.state = 'active' AND m.state = 'archived' AND ` + memoryEvents("o.id") + ` != 1`},
		{"active memories with an archive event", `SELECT m.id FROM main.memories m
			WHERE m.state = 'active' AND ` + memoryEvents("m.id") + ` > 0`},
	} {
		rows, err := conn.QueryContext(ctx, c.query, base)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		var bad []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			bad = append(bad, id)
		}
		rows.Close()
		if len(bad) > 0 {
			t.Errorf("%s: %d, e.g. %v", c.what, len(bad), bad[:min(5, len(bad))])
		}
	}
}

// expectEveryNodeHolds waits until every running node's copy reads as
// want (readShapeState); a node that cannot answer yet is asked again.
func expectEveryNodeHolds(t *testing.T, c *rqcluster.Cluster, s *shape, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Running() {
		for {
			got, err := nodeShapeState(n, s)
			if err == nil && got == want {
				break
			}
			if time.Now().After(deadline) {
				if err != nil {
					t.Fatalf("node %s: %v", n.ID, err)
				}
				t.Fatalf("node %s differs from the local sweep\nlocal only:\n%s\nnode only:\n%s", n.ID, diffLines(want, got), diffLines(got, want))
			}
			time.Sleep(200 * time.Millisecond) // polling a replica that catches up, not an assertion
		}
	}
}

func nodeShapeState(n *rqcluster.Node, s *shape) (string, error) {
	db, err := worker.OpenRqlite(context.Background(), n.URL+"?level=none&disableClusterDiscovery=true")
	if err != nil {
		return "", err
	}
	defer db.Close()
	return readShapeState(db, s)
}

// notesMapping maps an app's notes table (integer ids, ISO-8601 times,
// statuses of its own) as the facts.
const notesMapping = `[facts]
table = "notes"
key = "id"
segment = "segment"
importance = "importance"
access_count = "access_count"
last_access = "last_access"
last_access_clock = "iso8601"
created_at = "created_at"
created_at_clock = "iso8601"
status = "status"
status_active = ["live"]
status_confirmed = ["pinned"]
status_archived = "archived"
`
