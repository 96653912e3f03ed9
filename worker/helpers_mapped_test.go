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
	"strconv"
	"testing"
	"time"

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
CREATE TABLE contradictions (block_a_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE,
	block_b_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE, score REAL NOT NULL, resolved INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL, UNIQUE (block_a_id, block_b_id));
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
