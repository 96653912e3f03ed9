package worker_test

// Helpers of the mapped tests (mapped_test.go). One graph of nodes and
// links, generated or hand-made, is written in the shape of each mapping:
// memworker's own tables (the mapping mem), an app's memories and links
// declared by worker/mapping/testdata/memory.toml, and elfmem's own schema
// (the preset elfmem). A sweep through a mapping must decide what a sweep
// of the same graph in the mem_ tables decides; the states rendered here
// are what the tests compare.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// clock is when a sweep runs: hours on its hour clock, and the wall clock.
type clock struct {
	hours float64
	wall  time.Time
}

// wallHours is the clock of a mapping whose times are ISO-8601 text: its
// hour clock is the wall clock in hours (unix seconds / 3600).
func wallHours(wall time.Time) clock { return clock{float64(wall.Unix()) / 3600, wall} }

// after is the clock h hours later, on both clocks.
func (c clock) after(h float64) clock {
	return clock{c.hours + h, c.wall.Add(time.Duration(h * float64(time.Hour)))}
}

// mappedWall is the mapped graphs' wall clock: a whole hour, so a time a
// whole number of quarter hours before it is exact on the wall-hours clock.
var mappedWall = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

// gNode is a node of a test graph; Ago is how many hours before the
// graph's clock it was last used (nil: never).
type gNode struct {
	ID         int
	Kind       string // the category
	Tags       []string
	Status     string // active or inbox
	Confidence float64
	Uses       int
	Ago        *float64
}

// gLink is one link of a test graph, Src → Dst; Ago is how many hours
// before the graph's clock it was last active (nil: never).
type gLink struct {
	ID       int
	Src, Dst int
	Kind     string
	Origin   string
	Weight   float64
	Hits     int
	Ago      *float64
}

// graph is a test graph and the relation policies it is swept under.
type graph struct {
	Nodes    []gNode
	Links    []gLink
	Policies string // SQL inserting into mem_edge_policies
	pairs    map[[2]int]bool
	next     int // the next link's id
}

// add gives l the next link id and records its pair: memworker's own
// tables hold one edge per pair, so a graph every shape can hold links a
// pair once, whatever the direction.
func (g *graph) add(l gLink) gLink {
	if g.pairs == nil {
		g.pairs = map[[2]int]bool{}
	}
	if g.next == 0 {
		g.next = 1001
	}
	l.ID = g.next
	g.next++
	g.pairs[[2]int{min(l.Src, l.Dst), max(l.Src, l.Dst)}] = true
	g.Links = append(g.Links, l)
	return l
}

func (g *graph) linked(a, b int) bool { return g.pairs[[2]int{min(a, b), max(a, b)}] }

// hoursAgo is a time h hours before a graph's clock.
func hoursAgo(h float64) *float64 { return &h }

// mappedPolicies decay two relation types by policies on the hour clock
// (an app whose links have no last_observed has nothing for a wall-clock
// policy to read), one deleting the ends it leaves without an edge.
const mappedPolicies = `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
	('works_on', 'half_life', '{"half_life":"150h"}', 'active_hours', 0.2, 'delete', 'keep'),
	('chat', 'linear', '{"rate":0.01,"hold":"10h"}', 'active_hours', NULL, 'delete', 'delete')`

// linkKinds are the relation types generated links draw from.
var linkKinds = []string{"similar", "similar", "similar", "similar", "similar", "similar", "similar", "similar", "works_on", "chat"}

// genOptions says what a generated graph holds beyond the plain case.
type genOptions struct {
	directed bool // links go either way (an app's rows); else Src < Dst
	origins  bool // links of every origin (agent ones never decay by time); else similarity
	inbox    bool // a few nodes in the inbox
}

// randomGraph is a random graph of nNodes nodes and nLinks links, one per
// pair, last used up to 700 hours and last active up to 500 hours before
// its clock, in quarter hours, so that a sweep at its clock archives,
// prunes, decays and reinforces, and keeps rows on each side of each
// threshold. Node ids are 1…nNodes, link ids from 1001.
func randomGraph(seed int64, nNodes, nLinks int, o genOptions) *graph {
	rng := rand.New(rand.NewSource(seed))
	g := &graph{Policies: mappedPolicies}
	quarters := func(hours int) *float64 { return hoursAgo(float64(rng.Intn(hours*4+1)) / 4) }
	for i := 1; i <= nNodes; i++ {
		n := gNode{ID: i, Kind: propCategories[rng.Intn(len(propCategories))], Status: "active",
			Confidence: float64(rng.Intn(100)) / 100, Uses: rng.Intn(12)}
		if rng.Intn(4) == 0 {
			n.Tags = []string{propTags[rng.Intn(len(propTags))]}
		}
		if o.inbox && rng.Intn(25) == 0 {
			n.Status = "inbox"
		}
		if rng.Intn(25) != 0 {
			n.Ago = quarters(700)
		}
		g.Nodes = append(g.Nodes, n)
	}
	for len(g.Links) < nLinks {
		a, b := 1+rng.Intn(nNodes), 1+rng.Intn(nNodes)
		if a == b || g.linked(a, b) {
			continue
		}
		if !o.directed && a > b {
			a, b = b, a
		}
		l := gLink{Src: a, Dst: b, Kind: linkKinds[rng.Intn(len(linkKinds))], Origin: "similarity",
			Weight: float64(rng.Intn(1000)) / 1000}
		if rng.Intn(5) > 1 {
			l.Hits = rng.Intn(14)
		}
		if o.origins {
			l.Origin = []string{"similarity", "similarity", "outcome", "observed", "agent"}[rng.Intn(5)]
		}
		if rng.Intn(20) != 0 {
			l.Ago = quarters(500)
		}
		g.add(l)
	}
	return g
}

// pad is a node's id in memworker's tables and elfmem's: zero-padded
// text, so that text order is the integer order.
func pad(id int) string { return fmt.Sprintf("%04d", id) }

// ends are a link's ends as an undirected edge's key, from < to.
func ends(l gLink) (string, string) { return pad(min(l.Src, l.Dst)), pad(max(l.Src, l.Dst)) }

// isoTime writes t as apps write ISO-8601, in one of five forms by
// variant: Z, Python's isoformat with microseconds, SQLite's datetime,
// an offset of +02:00, and +00:00.
func isoTime(t time.Time, variant int) string {
	switch variant % 5 {
	case 1:
		return t.UTC().Format("2006-01-02T15:04:05.000000-07:00")
	case 2:
		return t.UTC().Format("2006-01-02 15:04:05")
	case 3:
		return t.In(time.FixedZone("", 2*3600)).Format("2006-01-02T15:04:05-07:00")
	case 4:
		return t.UTC().Format("2006-01-02T15:04:05-07:00")
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// tagsJSON is a node's tags as the app's JSON array column holds them.
func tagsJSON(tags []string) any {
	if len(tags) == 0 {
		return nil
	}
	b, _ := json.Marshal(tags)
	return string(b)
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

func execOn(t *testing.T, x execer, query string, args ...any) sql.Result {
	t.Helper()
	res, err := x.Exec(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return res
}

// appSchema is the app of docs/mapping.md: its own memories and links,
// integer ids, ISO-8601 times, directed links of several kinds, foreign
// keys, and a trigger of its own that logs every link deleted.
const appSchema = `
CREATE TABLE memories (id INTEGER PRIMARY KEY, body TEXT, kind TEXT, tags TEXT, state TEXT DEFAULT 'active',
	confidence REAL DEFAULT 0.5, uses INTEGER DEFAULT 0, last_used_at TEXT, created_at TEXT);
CREATE TABLE links (id INTEGER PRIMARY KEY,
	src INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
	dst INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
	kind TEXT NOT NULL, strength REAL, hits INTEGER DEFAULT 0, touched_at TEXT,
	UNIQUE (src, dst, kind));
CREATE TABLE link_audit (link_id INTEGER, src INTEGER, dst INTEGER, kind TEXT);
CREATE TRIGGER links_audit AFTER DELETE ON links BEGIN
	INSERT INTO link_audit VALUES (OLD.id, OLD.src, OLD.dst, OLD.kind);
END;`

// elfmemSchema is elfmem's schema, the part its preset maps, with a trigger
// of the app's own that logs every edge deleted.
const elfmemSchema = `
CREATE TABLE blocks (id TEXT PRIMARY KEY, content TEXT, category TEXT,
	status TEXT CHECK (status IN ('inbox', 'active', 'archived')), archive_reason TEXT, confidence REAL,
	reinforcement_count INTEGER DEFAULT 0, last_reinforced_at REAL, decay_lambda REAL, created_at TEXT);
CREATE TABLE block_tags (block_id TEXT REFERENCES blocks (id) ON DELETE CASCADE, tag TEXT, PRIMARY KEY (block_id, tag));
CREATE TABLE edges (from_id TEXT REFERENCES blocks (id) ON DELETE CASCADE, to_id TEXT REFERENCES blocks (id) ON DELETE CASCADE,
	weight REAL, reinforcement_count INTEGER DEFAULT 0, relation_type TEXT DEFAULT 'similar', origin TEXT DEFAULT 'similarity',
	last_active_hours REAL, created_at TEXT, UNIQUE (from_id, to_id));
CREATE TABLE system_config (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE edge_audit (from_id TEXT, to_id TEXT, relation_type TEXT);
CREATE TRIGGER edges_audit AFTER DELETE ON edges BEGIN
	INSERT INTO edge_audit VALUES (OLD.from_id, OLD.to_id, OLD.relation_type);
END;`

// memoryTOML is the app's mapping, worker/mapping/testdata/memory.toml.
func memoryTOML(t *testing.T) *mapping.Mapping {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("mapping", "testdata", "memory.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("memory.toml", text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shape is how one mapping's tables hold a graph.
type shape struct {
	name   string
	schema string                                        // the app's own tables, "" for mem
	decl   func(t *testing.T) (*mapping.Mapping, string) // the mapping it declares and its source; nil for mem
	base   clock                                         // the clock its graphs are written at
	gen    genOptions
	iso    bool // times are ISO-8601 text, and sweeps run on wall hours
	intIDs bool // node and link ids are the app's integers; else zero-padded text
	ownNow bool // the hour clock is the app's own (elfmem's system_config): a sweep is given no Now
	// Tables and columns.
	nodes, status, uses, lastUsed string
	links, hits, lastActive       string
	tagTable                      string // "" when tags are a column of the nodes
	audit                         string // the app's log of deleted links
	state                         []string
	common                        []string // queries of one line per row, comparable with mem's
	addNode                       func(t *testing.T, x execer, n gNode, at any)
	addLink                       func(t *testing.T, x execer, l gLink, at any)
}

var memShape = &shape{
	name: "mem", base: clock{1000, mappedWall}, gen: genOptions{origins: true, inbox: true},
	nodes: "mem_blocks", status: "status", uses: "reinforcement_count", lastUsed: "last_reinforced_hours",
	links: "mem_edges", hits: "reinforcement_count", lastActive: "last_active_hours",
	tagTable: "mem_block_tags",
	state:    []string{"mem_blocks ORDER BY id", "mem_block_tags ORDER BY block_id, tag", "mem_edges ORDER BY from_id, to_id"},
	common: []string{
		`SELECT 'link', from_id || '-' || to_id, relation_type, quote(weight), reinforcement_count, quote(last_active_hours) FROM mem_edges`,
		`SELECT 'node', id, status, reinforcement_count, quote(last_reinforced_hours), '' FROM mem_blocks`,
		`SELECT 'tag', t.block_id, t.tag, '', '', '' FROM mem_block_tags t JOIN mem_blocks b ON b.id = t.block_id WHERE b.status != 'archived'`,
	},
	addNode: func(t *testing.T, x execer, n gNode, at any) {
		execOn(t, x, `INSERT INTO mem_blocks (id, category, status, confidence, reinforcement_count, last_reinforced_hours, content)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, pad(n.ID), n.Kind, n.Status, n.Confidence, n.Uses, at, fmt.Sprint("memory ", n.ID))
		for _, tag := range n.Tags {
			execOn(t, x, `INSERT INTO mem_block_tags (block_id, tag) VALUES (?, ?)`, pad(n.ID), tag)
		}
	},
	addLink: func(t *testing.T, x execer, l gLink, at any) {
		from, to := ends(l)
		execOn(t, x, `INSERT INTO mem_edges (from_id, to_id, relation_type, origin, weight, reinforcement_count, last_active_hours)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, from, to, l.Kind, l.Origin, l.Weight, l.Hits, at)
	},
}

var appShape = &shape{
	name: "memory.toml", schema: appSchema, base: wallHours(mappedWall), gen: genOptions{directed: true},
	decl: func(t *testing.T) (*mapping.Mapping, string) { return memoryTOML(t), "memory.toml" },
	iso:  true, intIDs: true,
	nodes: "memories", status: "state", uses: "uses", lastUsed: "last_used_at",
	links: "links", hits: "hits", lastActive: "touched_at",
	audit: "link_audit",
	state: []string{"memories ORDER BY id", "links ORDER BY id", "link_audit ORDER BY link_id, rowid"},
	common: []string{
		`SELECT 'link', printf('%04d', min(src, dst)) || '-' || printf('%04d', max(src, dst)), kind, quote(strength), hits,
			quote(unix_seconds(touched_at) / 3600.0) FROM links`,
		`SELECT 'node', printf('%04d', id), state, uses, quote(unix_seconds(last_used_at) / 3600.0), '' FROM memories`,
	},
	addNode: func(t *testing.T, x execer, n gNode, at any) {
		execOn(t, x, `INSERT INTO memories (id, body, kind, tags, state, confidence, uses, last_used_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, n.ID, fmt.Sprint("memory ", n.ID), n.Kind, tagsJSON(n.Tags), n.Status,
			n.Confidence, n.Uses, at, isoTime(mappedWall.Add(-90*24*time.Hour), n.ID))
	},
	addLink: func(t *testing.T, x execer, l gLink, at any) {
		execOn(t, x, `INSERT INTO links (id, src, dst, kind, strength, hits, touched_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			l.ID, l.Src, l.Dst, l.Kind, l.Weight, l.Hits, at)
	},
}

var elfmemShape = &shape{
	name: "elfmem", schema: elfmemSchema, base: clock{1000, mappedWall}, gen: genOptions{origins: true, inbox: true},
	decl: func(t *testing.T) (*mapping.Mapping, string) {
		m, err := mapping.Preset("elfmem")
		if err != nil {
			t.Fatal(err)
		}
		return m, "elfmem"
	},
	ownNow: true,
	nodes:  "blocks", status: "status", uses: "reinforcement_count", lastUsed: "last_reinforced_at",
	links: "edges", hits: "reinforcement_count", lastActive: "last_active_hours",
	tagTable: "block_tags", audit: "edge_audit",
	state: []string{"blocks ORDER BY id", "block_tags ORDER BY block_id, tag", "edges ORDER BY from_id, to_id",
		"system_config ORDER BY key", "edge_audit ORDER BY from_id, to_id, rowid"},
	common: []string{
		`SELECT 'link', from_id || '-' || to_id, relation_type, quote(weight), reinforcement_count, quote(last_active_hours) FROM edges`,
		`SELECT 'node', id, status, reinforcement_count, quote(last_reinforced_at), '' FROM blocks`,
		`SELECT 'tag', t.block_id, t.tag, '', '', '' FROM block_tags t JOIN blocks b ON b.id = t.block_id WHERE b.status != 'archived'`,
	},
	addNode: func(t *testing.T, x execer, n gNode, at any) {
		execOn(t, x, `INSERT INTO blocks (id, content, category, status, confidence, reinforcement_count, last_reinforced_at,
			decay_lambda, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0.01, '2026-12-01T00:00:00')`,
			pad(n.ID), fmt.Sprint("memory ", n.ID), n.Kind, n.Status, n.Confidence, n.Uses, at)
		for _, tag := range n.Tags {
			execOn(t, x, `INSERT INTO block_tags (block_id, tag) VALUES (?, ?)`, pad(n.ID), tag)
		}
	},
	addLink: func(t *testing.T, x execer, l gLink, at any) {
		from, to := ends(l)
		execOn(t, x, `INSERT INTO edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours,
			created_at) VALUES (?, ?, ?, ?, ?, ?, ?, '2026-12-01T00:00:00')`, from, to, l.Weight, l.Hits, l.Kind, l.Origin, at)
	},
}

// every shape, memworker's own tables first (the baseline the tests hold
// the mappings to).
var allShapes = []*shape{memShape, appShape, elfmemShape}

// at is a time ago hours before c as the shape's time columns hold it:
// ISO-8601 text (in one of isoTime's forms, by variant) or hours.
func (s *shape) at(c clock, ago *float64, variant int) any {
	if ago == nil {
		return nil
	}
	if s.iso {
		return isoTime(c.wall.Add(-time.Duration(*ago*float64(time.Hour))), variant)
	}
	return c.hours - *ago
}

// node is a node's key as the shape holds it.
func (s *shape) node(id int) any {
	if s.intIDs {
		return id
	}
	return pad(id)
}

// linkWhere finds a link by its key, linkArgs.
func (s *shape) linkWhere() string {
	if s.intIDs {
		return "id = ?"
	}
	return "from_id = ? AND to_id = ?"
}

func (s *shape) linkArgs(l gLink) []any {
	if s.intIDs {
		return []any{l.ID}
	}
	from, to := ends(l)
	return []any{from, to}
}

// restoreKey is a link as RestoreEdge takes it: a key of one column and
// "", or the two ends.
func (s *shape) restoreKey(l gLink) (string, string) {
	if s.intIDs {
		return strconv.Itoa(l.ID), ""
	}
	return ends(l)
}

// nodeSubject is a node's subject_id in mem_events.
func (s *shape) nodeSubject(id int) string {
	if s.intIDs {
		return strconv.Itoa(id)
	}
	return pad(id)
}

// linkSubjects are the subject_ids that name a link in mem_events: the
// two ends of an edge keyed by them; a link keyed by one column, its key,
// written as text or as a JSON array (alone, or with "" for a second part).
func (s *shape) linkSubjects(l gLink) []string {
	if s.intIDs {
		id := strconv.Itoa(l.ID)
		return []string{id, "[" + id + "]", `["` + id + `"]`, `["` + id + `",""]`}
	}
	return []string{edgeSubject(ends(l))}
}

// write writes g's rows, at clock c, and its policies.
func (s *shape) write(t *testing.T, x execer, g *graph, c clock) {
	t.Helper()
	for _, n := range g.Nodes {
		s.addNode(t, x, n, s.at(c, n.Ago, n.ID))
	}
	for _, l := range g.Links {
		s.addLink(t, x, l, s.at(c, l.Ago, l.ID))
	}
	if g.Policies != "" {
		execOn(t, x, g.Policies)
	}
}

// setClock sets the app's own hour clock (elfmem's total_active_hours).
func (s *shape) setClock(t *testing.T, db *worker.DB, c clock) {
	t.Helper()
	if s.ownNow {
		mustExec(t, db, `INSERT INTO system_config (key, value) VALUES ('total_active_hours', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatFloat(c.hours, 'f', -1, 64))
	}
}

// opt is a sweep at c: on the shape's own clock, or given Now.
func (s *shape) opt(c clock, opt worker.SweepOptions) worker.SweepOptions {
	wall := c.wall
	opt.WallNow = &wall
	if !s.iso && !s.ownNow {
		hours := c.hours
		opt.Now = &hours
	}
	return opt
}

// shapedMemory writes g at clock c into a new migrated file in the shape
// s and declares its mapping, and returns the file open as the worker
// opens it (closed at cleanup) and its path.
func shapedMemory(t *testing.T, s *shape, g *graph, c clock) (*worker.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	db := createMemory(t, path, s.schema)
	tx, err := db.SQL.Begin()
	if err != nil {
		t.Fatal(err)
	}
	s.write(t, tx, g, c)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if s.ownNow {
		s.setClock(t, db, c)
		mustExec(t, db, `INSERT INTO system_config (key, value) VALUES ('last_curate_at', ?)`, strconv.FormatFloat(c.hours-40, 'f', -1, 64))
	}
	if s.decl != nil {
		m, source := s.decl(t)
		if err := worker.DeclareMapping(context.Background(), db, m, source, c.wall); err != nil {
			t.Fatalf("declaring %s: %v", source, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return openAsWorker(t, path), path
}

// sweepShape sweeps db at c as the shape is swept.
func sweepShape(t *testing.T, s *shape, db *worker.DB, c clock, opt worker.SweepOptions) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, s.opt(c, opt))
	if err != nil {
		t.Fatalf("%s: sweep at %v / %s: %v", s.name, c.hours, c.wall.Format(time.RFC3339), err)
	}
	return r
}

// The app's writes, in the shape's own columns: a link co-retrieved
// (count + 1, active at c), a link deleted, a node used at c (while
// active), a node retagged.
func (s *shape) touch(t *testing.T, x execer, l gLink, c clock) {
	execOn(t, x, fmt.Sprintf(`UPDATE %s SET %s = %s + 1, %s = ? WHERE %s`, s.links, s.hits, s.hits, s.lastActive, s.linkWhere()),
		append([]any{s.at(c, hoursAgo(0), l.ID)}, s.linkArgs(l)...)...)
}

func (s *shape) drop(t *testing.T, x execer, l gLink) {
	execOn(t, x, fmt.Sprintf(`DELETE FROM %s WHERE %s`, s.links, s.linkWhere()), s.linkArgs(l)...)
}

func (s *shape) use(t *testing.T, x execer, id int, c clock) {
	execOn(t, x, fmt.Sprintf(`UPDATE %s SET %s = %s + 1, %s = ? WHERE id = ? AND %s = 'active'`, s.nodes, s.uses, s.uses, s.lastUsed, s.status),
		s.at(c, hoursAgo(0), id), s.node(id))
}

func (s *shape) retag(t *testing.T, x execer, id int, tags []string) {
	if s.tagTable == "" {
		execOn(t, x, `UPDATE memories SET tags = ? WHERE id = ?`, tagsJSON(tags), id)
		return
	}
	execOn(t, x, `DELETE FROM `+s.tagTable+` WHERE block_id = ?`, pad(id))
	for _, tag := range tags {
		execOn(t, x, `INSERT INTO `+s.tagTable+` (block_id, tag) VALUES (?, ?)`, pad(id), tag)
	}
}

// statusOf is a node's status (active, inbox or archived).
func (s *shape) statusOf(t *testing.T, db *worker.DB, id int) string {
	t.Helper()
	return scalar[string](t, db, fmt.Sprintf(`SELECT %s FROM %s WHERE id = ?`, s.status, s.nodes), s.node(id))
}

// hasLink says whether the link is there.
func (s *shape) hasLink(t *testing.T, db *worker.DB, l gLink) bool {
	t.Helper()
	return scalar[int](t, db, fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s`, s.links, s.linkWhere()), s.linkArgs(l)...) == 1
}

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
