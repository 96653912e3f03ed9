package sweepsql

import (
	"fmt"
	"strings"
	"sync"
)

// A dialect is how the sweep's statements name the rows they decide on:
// memworker's own tables (memTables), or an app's own tables through a
// declared mapping (mappedTables, adapter.go). The SQL files name them by
// tokens, expanded here after the rules' macros:
//
//	@NODES, @EDGES, @FACTS, @TAGS   the tables (@NODES_NAME, @EDGES_NAME unqualified)
//	@EDGES_SCAN                     every edge in table order, as e
//	@END_A, @END_B                  an edge's two ends (its key is from_id, to_id)
//	@KEY_A, @KEY_B                  the columns to find an edge by its key (from_id, to_id)
//	                                with: the key as the app holds it where SQLite converts
//	                                the text to it, so the app's own key finds the row
//	@ENDS_COLS, @ENDS_E, @ENDS_K    the ends as extra columns of a working table, when
//	                                they are not its key
//	@SUBJECT, @SUBJECT_E            an edge's name in events and reports
//	@ARCHIVE_EDGES, @ARCHIVE_NODES, the archives of the tables (archive.go)
//	@ARCHIVE_FACTS
//	@EDGE_ROW_COLS, @EDGE_ROW       an archived row's own columns, and their values
//	(and @BLOCK_…, @FACT_…)         from the alias e (b, f)
//	EDGE_SNAPSHOT, EDGE_NAME        the JSON of an edge row (an exclusion's event)
//	@NEW_BLOCK_DEGREE               a block's degree when it has no state yet
//	@DELETE_EDGES                   the removal of apply_edge_keys' edges
//	@QUIET_EDGE_TABLE,              the table it deletes from and memworker's own
//	@QUIET_EDGE_TRIGGERS            triggers there, as SQL literals (quiet_triggers)
//	@KEPT_EDGES_POSSIBLE            whether that removal may leave rows (an app's trigger)
//	@AND_UNPINNED                   " AND" a node row b is not pinned (a mapping's nodes.pinned)
//	@REINFORCE_KEPT                 a block whose reinforcement an app's trigger ignored
//	@DEPENDENTS, @DELETE_DEPENDENTS the rows that go with an archived node, and their removal
//	@BLOCK_KEYS_INVALID, …          rows left out for their key (NULL, or read as
//	(@EDGE_…, @FACT_…)              another's id), appended to sweep_invalid's
//	                                rows with UNION ALL: only through a mapping
//
// For memworker's tables an edge's key is its ends, so the ends' tokens
// expand to nothing or to from_id and to_id, and the statements are the
// ones memworker always ran (testdata/statements.golden).
type Dialect struct {
	tokens *strings.Replacer
	// Teardown drops the views a replicated sweep through a mapping
	// created in main (adapter.go), with its working tables.
	Teardown []string
	mu       sync.Mutex
	cache    map[string][]string
}

func NewDialect(pairs ...string) *Dialect {
	return &Dialect{tokens: strings.NewReplacer(pairs...), cache: map[string][]string{}}
}

// Stmts is the statement list of a name in this dialect; a name that is
// not in the SQL files is a programming error.
func (d *Dialect) Stmts(name string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if list, ok := d.cache[name]; ok {
		return list
	}
	base, ok := Statements[name]
	if !ok {
		panic(fmt.Sprintf("worker: no statement %q in sql/", name))
	}
	list := make([]string, len(base))
	for i, q := range base {
		list[i] = d.tokens.Replace(q)
	}
	d.cache[name] = list
	return list
}

// Expand is one query of Go code in this dialect.
func (d *Dialect) Expand(query string) string { return d.tokens.Replace(query) }

// memNewBlockDegree is the degree of a block with no state yet, from the
// strengths stored in its edges' due rows: those keyed by it, those of
// its edges from a smaller id (found through mem_edges' index on to_id),
// and those of such edges that are gone (gone_due_to).
const memNewBlockDegree = `(SELECT total(d.strength) FROM mem_edge_due d WHERE d.from_id = b.id)
                    + (SELECT total(d.strength) FROM main.mem_edges e
                       CROSS JOIN mem_edge_due d ON d.from_id = e.from_id AND d.to_id = e.to_id WHERE e.to_id = b.id)
                    + coalesce((SELECT strength FROM gone_due_to g WHERE g.id = b.id), 0)`

// memEdgesMayStay holds while a delete from mem_edges may leave a row in
// place: only a trigger of the app's (RAISE(IGNORE)) can, so without one
// a removal needs no look for the rows it kept (one probe per removed
// edge). Through a mapping the app's table is always looked at.
const memEdgesMayStay = `EXISTS (SELECT 1 FROM main.sqlite_master WHERE type = 'trigger' AND tbl_name = 'mem_edges'
    AND name NOT IN ('mem_edges_queue_insert', 'mem_edges_queue_update', 'mem_edges_queue_delete'))`

// ReinforceKeptByCount holds for a block (n, as it is after
// apply_reinforce; b, as it was before) whose reinforcement an app's
// trigger ignored: every applied reinforcement raises the count.
const ReinforceKeptByCount = "n.reinforcement_count IS b.count"

// NoDependents are @DEPENDENTS and @DELETE_DEPENDENTS where nodes have no
// dependent rows (memworker's own blocks): no rows, and a statement that
// deletes nothing.
var NoDependents = []string{"@DEPENDENTS", "(SELECT NULL AS block_id, NULL AS dep_table, NULL AS row WHERE 0)",
	"@DELETE_DEPENDENTS", "DELETE FROM apply_block_ids WHERE 0"}

// MemTables is the dialect of memworker's own tables (the mapping mem).
// Longer tokens come first: at each place the first that matches wins.
var MemTables = NewDialect(append([]string{
	"@QUIET_EDGE_TABLE", "'mem_edges'", "@QUIET_EDGE_TRIGGERS", "'mem_edges_queue_insert', 'mem_edges_queue_update', 'mem_edges_queue_delete'",
	"@EDGES_SCAN", "main.mem_edges e NOT INDEXED", "@EDGES_NAME", "mem_edges", "@EDGES", "main.mem_edges",
	"@NODES_NAME", "mem_blocks", "@NODES", "main.mem_blocks", "@FACTS", "main.mem_facts", "@TAGS", "main.mem_block_tags",
	"@ENDS_COLS", "", "@ENDS_E", "", "@ENDS_K", "", "@ENDS_N", "", "@ENDS_MOVED", "", "@ENDS_UNMOVED", "", "@END_PROBLEMS", "", "@ENDS_PRESENT", "",
	"@END_A", "from_id", "@END_B", "to_id", "@KEY_A", "from_id", "@KEY_B", "to_id",
	"@NEW_BLOCK_DEGREE", memNewBlockDegree,
	"@BLOCK_KEYS_INVALID", "", "@EDGE_KEYS_INVALID", "", "@FACT_KEYS_INVALID", "",
	"@DELETE_EDGES", "DELETE FROM main.mem_edges WHERE (from_id, to_id) IN (SELECT from_id, to_id FROM apply_edge_keys)",
	"@KEPT_EDGES_POSSIBLE", memEdgesMayStay, "@REINFORCE_KEPT", ReinforceKeptByCount, "@AND_UNPINNED", "",
	"@SUBJECT_E", "json_array(e.from_id, e.to_id)", "@SUBJECT", "json_array(from_id, to_id)",
	"EDGE_SNAPSHOT", edgeSnapshot, "EDGE_NAME", EdgeName,
	"@ARCHIVE_EDGES", ArchiveOf(nil, "edge"), "@ARCHIVE_NODES", ArchiveOf(nil, "block"), "@ARCHIVE_FACTS", ArchiveOf(nil, "fact"),
	"@EDGE_ROW_COLS", strings.Join(EdgeColumns, ", "), "@EDGE_ROW", ColumnsOf("e", EdgeColumns),
	"@BLOCK_ROW_COLS", strings.Join(BlockColumns, ", "), "@BLOCK_ROW", ColumnsOf("b", BlockColumns),
	"@FACT_ROW_COLS", strings.Join(FactColumns, ", "), "@FACT_ROW", ColumnsOf("f", FactColumns),
}, append(DecayTokens("", ""), NoDependents...)...)...)

// ColumnsOf is the columns cols of a row alias, separated by commas.
func ColumnsOf(alias string, cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = alias + "." + c
	}
	return strings.Join(out, ", ")
}

// MemSQL is a query of Go code on memworker's own tables, its rules'
// macros and tables' tokens expanded.
func MemSQL(query string) string { return MemTables.Expand(Macros.Replace(query)) }
