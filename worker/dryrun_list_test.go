package worker_test

// sweep --dry-run --list: every row the sweep would change, one a line,
// is exactly what the real sweep at the same clocks then changes: the
// rows its events name (action and reason alike) and the blocks it
// reinforces; a row an app's foreign key holds is in neither.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// listFixture is richFixture with every other kind of change beside it,
// each with a row on the other side of its threshold, and the app's
// foreign keys holding some:
//
//   - static prune: k5–k6 (0.09) goes, k6–k7 (0.11) stays;
//   - policy fade_del (linear, delete, orphans delete): k1–k2 dies and
//     leaves k2 orphaned (k1 keeps k1–k5); k3–k4 dies but edge_notes
//     references it, so it stays and neither end is orphaned;
//   - policy cites (exclude): c1–c2 is excluded, c3–c4 (excluded,
//     re-observed) readmitted, c5–c6 (fresh) left alone;
//   - temporal decay: py1–py2 would decay, but edge_notes references it;
//   - facts either side of 0.15 and 0.05 (short and long), one pruned
//     fact referenced by fact_links.
func listFixture(wall time.Time) string {
	imp, rate := 0.4, 0.08
	d15, d05 := factCrossing(imp, rate, 0, 0.15), factCrossing(imp, rate, 0, 0.05)
	var b strings.Builder
	b.WriteString(richFixture)
	b.WriteString(knowledgeBlocks("k1", "k2", "k3", "k4", "k5", "k6", "k7", "c1", "c2", "c3", "c4", "c5", "c6"))
	b.WriteString(`
		INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
			('fade_del', 'linear', '{"rate":1}', 'active_hours', NULL, 'delete', 'delete'),
			('cites', 'half_life', '{"half_life":"10h"}', 'active_hours', 0.10, 'exclude', 'keep');
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours, excluded) VALUES
			('k1', 'k5', 0.9, 0, 'similar', 'observed', 500, 0),
			('k5', 'k6', 0.09, 0, 'similar', 'observed', 500, 0),
			('k6', 'k7', 0.11, 0, 'similar', 'observed', 500, 0),
			('k1', 'k2', 0.5, 0, 'fade_del', 'observed', 499, 0),
			('k3', 'k4', 0.5, 0, 'fade_del', 'observed', 499, 0),
			('c1', 'c2', 1.0, 0, 'cites', 'observed', 0, 0),
			('c3', 'c4', 1.0, 0, 'cites', 'observed', 500, 1),
			('c5', 'c6', 1.0, 0, 'cites', 'observed', 500, 0);
		CREATE TABLE edge_notes (a TEXT, b TEXT, body TEXT, FOREIGN KEY (a, b) REFERENCES mem_edges (from_id, to_id));
		INSERT INTO edge_notes VALUES ('py1', 'py2', 'keep'), ('k3', 'k4', 'keep');
		CREATE TABLE fact_links (fact_id TEXT REFERENCES mem_facts (id));
		INSERT INTO fact_links VALUES ('short-held');
`)
	for _, f := range []struct {
		id, tier string
		days     float64
	}{{"short-above-0.15", "short", d15 - 0.5}, {"short-below-0.15", "short", d15 + 0.5}, {"short-below-0.05", "short", d05 + 0.5},
		{"short-held", "short", d05 + 1}, {"long-above-0.05", "long", d05 - 0.5}, {"long-below-0.05", "long", d05 + 0.5}} {
		fmt.Fprintf(&b, `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count, last_accessed_at, content)
			VALUES ('%s', 'context', '%s', %v, %v, 0, %d, 'fact');`+"\n", f.id, f.tier, imp, rate, daysAgo(wall, f.days))
	}
	return b.String()
}

// dryRunList plans a sweep at opt's clocks and returns its list.
func dryRunList(t *testing.T, db *worker.DB, opt worker.SweepOptions) (*worker.Report, []worker.PlannedChange) {
	t.Helper()
	opt.DryRun, opt.List = true, true
	r := sweepWith(t, db, opt)
	if r.Planned == nil {
		t.Fatal("a dry run with List lists nothing, not even an empty list")
	}
	return r, r.Planned
}

// listedChanges names the listed rows the sweep writes an event for, as
// sweepChanges names the events, sorted.
func listedChanges(planned []worker.PlannedChange) []string {
	var out []string
	for _, p := range planned {
		if p.Action != "reinforce" {
			out = append(out, p.Kind+" "+p.Subject+" "+p.Action+" "+p.Reason)
		}
	}
	slices.Sort(out)
	return out
}

// sweepChanges names the events of sweep id (but the dependent rows that
// went with a block), sorted.
func sweepChanges(t *testing.T, db *worker.DB, id int64) []string {
	t.Helper()
	var out []string
	for _, e := range eventsWhere(t, db, `sweep_id = ? AND action != 'remove_row'`, id) {
		out = append(out, e.Kind+" "+e.Subject+" "+e.Action+" "+e.Reason)
	}
	slices.Sort(out)
	return out
}

// listedReinforced counts the listed reinforcements of each block.
func listedReinforced(planned []worker.PlannedChange) map[string]int {
	out := map[string]int{}
	for _, p := range planned {
		if p.Action == "reinforce" {
			out[p.Subject]++
		}
	}
	return out
}

// expectSameChanges fails unless the listed rows are the ones the sweep
// changed.
func expectSameChanges(t *testing.T, listed, done []string) {
	t.Helper()
	if !slices.Equal(listed, done) {
		t.Errorf("the list and the sweep differ\nlisted only:\n%s\nswept only:\n%s",
			diffLines(strings.Join(listed, "\n"), strings.Join(done, "\n")), diffLines(strings.Join(done, "\n"), strings.Join(listed, "\n")))
	}
}

// findPlanned is the listed row of subject with action, failing the test
// when there is none.
func findPlanned(t *testing.T, planned []worker.PlannedChange, action, subject string) worker.PlannedChange {
	t.Helper()
	for _, p := range planned {
		if p.Action == action && p.Subject == subject {
			return p
		}
	}
	t.Fatalf("no %s of %s listed", action, subject)
	return worker.PlannedChange{}
}

// notListed fails when a listed change of kind names one of subjects
// (any change but a reinforcement).
func notListed(t *testing.T, planned []worker.PlannedChange, kind string, subjects ...string) {
	t.Helper()
	for _, p := range planned {
		if p.Kind == kind && p.Action != "reinforce" && slices.Contains(subjects, p.Subject) {
			t.Errorf("%s %s listed (%s %s)", p.Kind, p.Subject, p.Action, p.Reason)
		}
	}
}

func TestDryRunListOwnTables(t *testing.T) {
	db, path := newMemory(t, listFixture(fixedWall))
	clock := 500.0
	opt := worker.SweepOptions{Now: &clock, WallNow: &fixedWall}
	before := fileHash(t, path)
	dry, planned := dryRunList(t, db, opt)
	if fileHash(t, path) != before {
		t.Fatal("the dry run's list changed the file")
	}
	counts := worker.SweepOptions{Now: opt.Now, WallNow: opt.WallNow, DryRun: true}
	if plain := sweepWith(t, db, counts); plain.Planned != nil || reportCounts(plain) != reportCounts(dry) {
		t.Errorf("without List: %s, planned %v; with it %s", reportCounts(plain), plain.Planned, reportCounts(dry))
	}
	// The order is stable: the same list from the same file.
	first, _ := json.Marshal(planned)
	if _, again := dryRunList(t, db, opt); string(must(json.Marshal(again))) != string(first) {
		t.Errorf("a second dry run lists\n%s\nthe first\n%s", must(json.Marshal(again)), first)
	}
	countsBefore := blockCounts(t, db)

	r := sweepWith(t, db, opt)
	expectSameChanges(t, listedChanges(planned), sweepChanges(t, db, r.SweepID))
	reinforced := map[string]int{}
	for id, c := range blockCounts(t, db) {
		if c != countsBefore[id] {
			reinforced[id] = c - countsBefore[id]
		}
	}
	if want := listedReinforced(planned); fmt.Sprint(want) != fmt.Sprint(reinforced) || len(want) == 0 {
		t.Errorf("listed reinforcements %v, the sweep reinforced %v", want, reinforced)
	}
	if n := int64(len(planned) - len(listedChanges(planned))); n != r.Reinforced+r.ConstitutionalReinforced {
		t.Errorf("%d reinforcements listed, the report counts %d + %d", n, r.Reinforced, r.ConstitutionalReinforced)
	}

	// Rows the app's foreign keys hold are listed nowhere and stay; so do
	// the ends of a held edge, which the plan before the holds took for
	// orphans.
	notListed(t, planned, "edge", edgeSubject("py1", "py2"), edgeSubject("k3", "k4"))
	notListed(t, planned, "block", "k3", "k4")
	notListed(t, planned, "fact", "short-held")
	expectEdges(t, db, []string{"py1-py2", "k3-k4", "k6-k7", "c5-c6"}, []string{"k5-k6", "k1-k2", "db2-py2", "db1-ds2"})
	expectStatus(t, db, "active", "k3", "k4", "k1")
	expectStatus(t, db, "archived", "k2", "obs1", "obs2")
	if dry.OrphansArchived != 1 || r.OrphansArchived != 1 {
		t.Errorf("orphans: dry run %d, sweep %d, want 1", dry.OrphansArchived, r.OrphansArchived)
	}

	// The numbers that decided each row, as its event keeps them.
	decay := findPlanned(t, planned, "decay", edgeSubject("db2", "py2"))
	ev := decayEvent(t, db, "db2", "py2")
	if decay.Table != "mem_edges" || decay.Kind != "edge" || fmt.Sprint(decay.Key) != "[db2 py2]" ||
		!slices.Equal(decay.KeyColumns, []string{"from_id", "to_id"}) || decay.Reason != "temporal" || decay.From != "db2" || decay.To != "py2" {
		t.Errorf("decay row %+v", decay)
	}
	if *decay.Effective != num(t, ev.Detail, "effective_weight") || *decay.Lambda != num(t, ev.Detail, "lambda") ||
		*decay.Elapsed != 350 || decay.ElapsedUnit != "hours" || *decay.Threshold != 0.1 || *decay.Effective >= *decay.Threshold {
		t.Errorf("decay numbers %+v, event %v", decay, ev.Detail)
	}
	prune := findPlanned(t, planned, "prune", edgeSubject("k5", "k6"))
	if *prune.Weight != 0.09 || *prune.Threshold != 0.10 || prune.Reason != "static" {
		t.Errorf("prune row %+v", prune)
	}
	archived := findPlanned(t, planned, "archive", "obs1")
	if archived.Reason != "decayed" || archived.Table != "mem_blocks" || *archived.Recency >= *archived.Threshold || archived.Tier == "" ||
		*archived.Recency != num(t, eventsFor(t, db, "block", "obs1")[0].Detail, "recency") {
		t.Errorf("archive row %+v", archived)
	}
	with := findPlanned(t, planned, "delete", edgeSubject("obs1", "py2"))
	if with.Reason != "block_archived" || with.Block != "obs1" {
		t.Errorf("edge going with its block %+v", with)
	}
	orphan := findPlanned(t, planned, "archive", "k2")
	if orphan.Reason != "orphaned" {
		t.Errorf("orphan row %+v", orphan)
	}
	policy := findPlanned(t, planned, "decay", edgeSubject("k1", "k2"))
	if policy.Reason != "policy:fade_del" || *policy.Effective > 0 || *policy.Threshold != 0 || *policy.Elapsed != 1 {
		t.Errorf("policy row %+v", policy)
	}
	excl := findPlanned(t, planned, "exclude", edgeSubject("c1", "c2"))
	readmit := findPlanned(t, planned, "readmit", edgeSubject("c3", "c4"))
	if excl.Reason != "below_minimum:cites" || *excl.Effective >= 0.1 || readmit.Reason != "reobserved:cites" || *readmit.Effective < 0.1 {
		t.Errorf("flags %+v, %+v", excl, readmit)
	}
	for id, action := range map[string]string{"short-below-0.15": "archive", "short-below-0.05": "prune", "long-below-0.05": "archive"} {
		f := findPlanned(t, planned, action, id)
		if f.Table != "mem_facts" || f.Reason != "faded" || *f.Score >= *f.Threshold || f.ElapsedUnit != "days" {
			t.Errorf("fact row %+v", f)
		}
	}
	notListed(t, planned, "fact", "short-above-0.15", "long-above-0.05")
	notListed(t, planned, "edge", edgeSubject("k6", "k7"), edgeSubject("c5", "c6"), edgeSubject("db1", "py1"))
	notListed(t, planned, "block", "hub", "pin") // a bridge, and a block with a pinned edge
	top := findPlanned(t, planned, "reinforce", "goal")
	if top.Reason != "top" || top.Rank == 0 || top.Score == nil {
		t.Errorf("top-N row %+v", top)
	}
	if c := findPlanned(t, planned, "reinforce", "core"); c.Reason != "constitutional" && c.Reason != "top" {
		t.Errorf("core %+v", c)
	}

	// At the clock already swept, nothing is left to list.
	if _, relisted := dryRunList(t, db, opt); len(relisted) != 0 {
		t.Errorf("a dry run at the clock swept lists %v", relisted)
	}
}

// must is v, or a panic.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// blockCounts reads every block's reinforcement count.
func blockCounts(t *testing.T, db *worker.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, row := range column(t, db, `SELECT id || ' ' || reinforcement_count FROM mem_blocks`) {
		id, n, _ := strings.Cut(row, " ")
		var c int
		if _, err := fmt.Sscan(n, &c); err != nil {
			t.Fatal(err)
		}
		out[id] = c
	}
	return out
}

// TestDryRunListMapped: through a mapping the list names the app's tables
// and keys (the notes' and links' integer ids), and is what the sweep then
// does to the app's rows; a link the app's foreign key holds is not listed.
func TestDryRunListMapped(t *testing.T) {
	db, _ := rulesDB(t, `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id), body TEXT);
		INSERT INTO link_notes (link_id, body) VALUES (2, 'x');`)
	// Either side of the static prune's threshold.
	mustExec(t, db, fmt.Sprintf(`INSERT INTO links (id, a, b, w, t) VALUES (7, 2, 4, 0.11, %d), (8, 3, 5, 0.09, %d)`, recent, recent))
	opt := worker.SweepOptions{WallNow: &reviewWall}
	_, planned := dryRunList(t, db, opt)
	notes := scalar[string](t, db, `SELECT group_concat(id || '=' || hits, ' ') FROM (SELECT id, hits FROM notes ORDER BY id)`)

	r := sweepWith(t, db, opt)
	expectSameChanges(t, listedChanges(planned), sweepChanges(t, db, r.SweepID))
	expectNamed(t, r, "edge 2: prune refused: ")
	notListed(t, planned, "edge", "2", "7")
	var lines []string
	for _, p := range planned {
		key, _ := json.Marshal(p.Key)
		lines = append(lines, fmt.Sprintf("%s %s %s %s %s %v %s", p.Action, p.Kind, p.Table, key, p.KeyColumns, p.Subject, p.Reason))
	}
	want := []string{
		"archive block notes [7] [id] 7 decayed",
		"prune edge links [1] [id] 1 static",
		"prune edge links [3] [id] 3 static",
		"prune edge links [4] [id] 4 static",
		"prune edge links [5] [id] 5 static",
		"delete edge links [6] [id] 6 block_archived",
		"prune edge links [8] [id] 8 static",
	}
	if got := lines[:min(len(lines), len(want))]; !slices.Equal(got, want) {
		t.Errorf("listed\n%s\nwant first\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// The rest are the reinforcements, which the notes' hits show.
	after := scalar[string](t, db, `SELECT group_concat(id || '=' || hits, ' ') FROM (SELECT id, hits FROM notes ORDER BY id)`)
	var grown []string
	for i, f := range strings.Fields(after) {
		if f != strings.Fields(notes)[i] {
			grown = append(grown, strings.Split(f, "=")[0])
		}
	}
	var listed []string
	for id := range listedReinforced(planned) {
		listed = append(listed, id)
	}
	slices.Sort(listed)
	if !slices.Equal(grown, listed) || len(listed) == 0 {
		t.Errorf("listed reinforced %v, the sweep reinforced %v (hits %s → %s)", listed, grown, notes, after)
	}
	if got := linkIDs(t, db); got != "2,7" {
		t.Errorf("links left %s, want 2,7", got)
	}
	if got := scalar[string](t, db, `SELECT state FROM notes WHERE id = 7`); got != "gone" {
		t.Errorf("note 7 is %s", got)
	}
	if _, err := worker.Sweep(context.Background(), db, worker.SweepOptions{List: true}); err == nil {
		t.Error("List without DryRun: no error")
	}
}

// TestDryRunListRqlite: on rqlite a dry run plans on a copy of the
// cluster's database; its list is the one a file lists, and what the
// sweep through the cluster then does.
func TestDryRunListRqlite(t *testing.T) {
	_, orig := newMemory(t, listFixture(fixedWall))
	c := startCluster(t, 1, orig)
	node := openNode(t, c.Nodes()[0])
	clock := 500.0
	opt := worker.SweepOptions{Now: &clock, WallNow: &fixedWall}
	_, planned := dryRunList(t, node, opt)
	_, onFile := dryRunList(t, openAsWorker(t, copyMemory(t, orig)), opt)
	if got, want := must(json.Marshal(planned)), must(json.Marshal(onFile)); string(got) != string(want) {
		t.Errorf("rqlite lists\n%s\na file\n%s", got, want)
	}
	r := sweepWith(t, node, opt)
	expectSameChanges(t, listedChanges(planned), sweepChanges(t, node, r.SweepID))
}
