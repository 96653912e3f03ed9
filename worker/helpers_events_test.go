package worker_test

// Reading what a sweep, a restore or feedback logged in mem_events, and
// what a sweep reported.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// event is one row of mem_events, its detail decoded.
type event struct {
	ID      int64
	SweepID sql.NullInt64
	At      int64
	Kind    string
	Subject string
	Action  string
	Reason  string
	Detail  map[string]any
}

// eventsWhere lists the events matching a WHERE clause, oldest first.
func eventsWhere(t *testing.T, db *worker.DB, where string, args ...any) []event {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT id, sweep_id, at, subject_kind, subject_id, action, coalesce(reason, ''),
		coalesce(detail, '{}') FROM mem_events WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []event
	for rows.Next() {
		var e event
		var detail string
		if err := rows.Scan(&e.ID, &e.SweepID, &e.At, &e.Kind, &e.Subject, &e.Action, &e.Reason, &detail); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
			t.Fatalf("event %d detail %q: %v", e.ID, detail, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// eventsFor lists the events of one subject (an edge's is its
// edgeSubject, a block's or a fact's its id), oldest first.
func eventsFor(t *testing.T, db *worker.DB, kind, subject string) []event {
	t.Helper()
	return eventsWhere(t, db, `subject_kind = ? AND subject_id = ?`, kind, subject)
}

// edgeEvents lists the events of one edge, oldest first.
func edgeEvents(t *testing.T, db *worker.DB, from, to string) []event {
	t.Helper()
	return eventsFor(t, db, "edge", edgeSubject(from, to))
}

// edgeSubject is the subject_id the sweep gives an edge: json_array(from, to).
func edgeSubject(from, to string) string {
	b, _ := json.Marshal([]string{from, to})
	return string(b)
}

// decayEvent returns the single decay event of edge from-to, failing the
// test when there is not exactly one.
func decayEvent(t *testing.T, db *worker.DB, from, to string) event {
	t.Helper()
	ev := edgeEvents(t, db, from, to)
	if len(ev) != 1 || ev[0].Action != "decay" {
		t.Fatalf("edge %s-%s: events %+v, want one decay event", from, to, ev)
	}
	return ev[0]
}

// restoreEvents lists the restore events of a subject, checking each
// names the event it undoes.
func restoreEvents(t *testing.T, db *worker.DB, kind, subject string) []event {
	t.Helper()
	ev := eventsWhere(t, db, `subject_kind = ? AND subject_id = ? AND action = 'restore'`, kind, subject)
	for _, e := range ev {
		from := int64(num(t, e.Detail, "from_event"))
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE id = ? AND subject_id = ? AND action IN ('archive', 'prune', 'decay', 'delete')`,
			from, subject); n != 1 {
			t.Errorf("restore event %+v points at event %d, not a removal of %s", e, from, subject)
		}
	}
	return ev
}

// eventActions is the actions of a list of events, in order.
func eventActions(events []event) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, e.Action)
	}
	return out
}

// num reads a number at a key, or a dotted path ("edge.weight"), of an
// event detail.
func num(t *testing.T, detail map[string]any, path string) float64 {
	t.Helper()
	var v any = detail
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("detail %v: %s is not an object", detail, path)
		}
		v = m[k]
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("detail %v: %s is %T, want a number", detail, path, v)
	}
	return f
}

// eventTags reads the tags snapshot of a block event, sorted. The sweep
// stores it as a JSON array or as a string holding one; both are accepted.
func eventTags(t *testing.T, detail map[string]any) []string {
	t.Helper()
	var tags []string
	switch v := detail["tags"].(type) {
	case string:
		if err := json.Unmarshal([]byte(v), &tags); err != nil {
			t.Fatalf("tags snapshot %q: %v", v, err)
		}
	case []any:
		for _, x := range v {
			s, _ := x.(string)
			tags = append(tags, s)
		}
	default:
		t.Fatalf("tags snapshot is %T", v)
	}
	slices.Sort(tags)
	return tags
}

// reportCounts is the part of a report a dry run must predict.
func reportCounts(r *worker.Report) string {
	return fmt.Sprintf("archived=%d with_blocks=%d pruned=%d decayed=%d deferred=%d before=%d after=%d reinforced=%d constitutional=%d invalid=%d sample=%v invalid_sample=%v",
		r.Archived, r.EdgesRemovedWithBlocks, r.EdgesPruned, r.EdgesDecayed, r.EdgesDeferred, r.EdgesBefore,
		r.TotalEdgesAfter, r.Reinforced, r.ConstitutionalReinforced, r.InvalidRows.Count, r.DecayedSample, r.InvalidRows.Sample)
}

// policyCount is the report's tally for one relation type.
func policyCount(t *testing.T, r *worker.Report, relation string) worker.PolicyCount {
	t.Helper()
	for _, p := range r.Policies {
		if p.RelationType == relation {
			return p
		}
	}
	t.Fatalf("report has no policy %q: %+v", relation, r.Policies)
	return worker.PolicyCount{}
}
