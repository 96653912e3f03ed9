package adapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// A sweep through a mapping runs the same statements as a sweep of
// memworker's own tables, on views of the app's tables (the adapter):
// temp views and triggers on the sweep's connection only, so the file
// holds none of them and an app's connections never see them.
//
//	mem_map_blocks      the nodes, with mem_blocks' columns
//	mem_map_block_tags  their tags (a table, or a column's JSON array or list)
//	mem_map_edges       the edges: from_id, to_id their key (to_id '' for
//	                    a key of one column), end_a and end_b their ends
//	mem_map_facts       the facts, with mem_facts' columns
//
// Each view also has the app row's own columns as a JSON snapshot
// (snapshot), which events keep and restore puts back, and its key as it
// is (key_raw…). What a sweep writes goes to the app's own rows through
// INSTEAD OF triggers: a removal deletes the app's row; an archival, a
// restore and a reinforcement write the app's own status, count and time
// columns, each time in the form it already has (unix seconds, ISO-8601
// text or active hours).
//
// Ids are compared as text, as memworker's own tables hold them: an app
// whose ids are numbers is read through CAST(id AS TEXT), which the
// indexes mappedIndexes declares keep indexed.

// Adapted is a mapping ready to sweep: its dialect and the statements that
// set its views up on a sweep's connection.
type Adapted struct {
	Map    *mapping.Mapping
	Tables *sweepsql.Dialect
	setup  []string
	// On a replica (rqlite), which keeps no temp schema across requests,
	// the views and triggers are main objects named mem_work_map_…,
	// created under the sweep's lease and dropped with its working tables
	// (teardown); on a file they are temp objects of the sweep's
	// connection.
	replica  bool
	teardown []string
	// readersOnly: the views of the readers' views (adaptReaders), with
	// none of the app rows' own columns.
	readersOnly bool
	// WallHours: the mapping's times of last use and activity are wall
	// times, so the sweep's hour clock is unix time in hours.
	WallHours bool
	// SingleKey: an edge's key is one column (to_id is '').
	SingleKey bool
	// EdgeColumns: the edge table's columns, as a snapshot keeps them.
	EdgeColumns []string
	EdgeCols    sweepsql.ColumnInfo
	// NodeCols: the node table's columns.
	NodeCols sweepsql.ColumnInfo
	// FactColumns: the fact table's columns, as a snapshot keeps them.
	FactColumns []string
	FactCols    sweepsql.ColumnInfo
	// keyTokens: @BLOCK_KEYS_INVALID, @EDGE_KEYS_INVALID and
	// @FACT_KEYS_INVALID, each with the rows its role's view leaves out
	// for their key (keyProblems).
	keyTokens []string
	// lastUsedForm, lastAccessForm: the ISO-8601 form a time written where
	// the node's last use (a fact's last access) is NULL takes
	// (prevailingTimeForm), or "".
	lastUsedForm, lastAccessForm string
}

// ErrMappingUnsupported: a mapping this memworker can check but not yet
// sweep through.
var ErrMappingUnsupported = errors.New("mapping")

func Unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMappingUnsupported, fmt.Sprintf(format, a...))
}

// adapt builds the adapter of a mapping other than mem that the
// mapping's check (Validate) passed: what a sweep cannot go through
// (keys, statuses, clocks) is refused there, in one place.
func adapt(ctx context.Context, q memdb.Querier, m *mapping.Mapping, replica bool) (*Adapted, error) {
	return adaptAs(ctx, q, &Adapted{Map: m, replica: replica})
}

// adaptReaders is adapt for the readers' views alone (views.go), whose
// views of the app's rows leave out the rows' own columns (rowOwn).
func adaptReaders(ctx context.Context, q memdb.Querier, m *mapping.Mapping) (*Adapted, error) {
	return adaptAs(ctx, q, &Adapted{Map: m, readersOnly: true})
}

// reinforceKept is @REINFORCE_KEPT for the app's nodes: by the count
// where a sweep writes it; else by the time of use, unless it was already
// this sweep's (then an applied and an ignored reinforcement look alike,
// and it is taken as applied); with neither, a sweep reinforces nothing
// (mapping.Reinforces).
func reinforceKept(n *mapping.Nodes) string {
	switch {
	case n == nil:
		return "0"
	case n.Reinforcement != "" && n.MayWrite(mapping.WriteReinforcement):
		return sweepsql.ReinforceKeptByCount
	case n.LastUsed != "" && n.MayWrite(mapping.WriteLastUsed):
		return "n.last_reinforced_hours IS b.last AND b.last IS NOT :now"
	}
	return "0"
}

func adaptAs(ctx context.Context, q memdb.Querier, a *Adapted) (*Adapted, error) {
	m := a.Map
	a.WallHours = m.WallClock()
	tokens := []string{
		"@EDGES_SCAN", a.view("edges") + " e", "@EDGES_NAME", a.view("edges"), "@EDGES", a.view("edges"),
		"@NODES_NAME", a.view("blocks"), "@NODES", a.view("blocks"), "@FACTS", a.view("facts"), "@TAGS", a.view("block_tags"),
		"@ENDS_COLS", "end_a, end_b, ", "@ENDS_E", "e.end_a, e.end_b, ", "@ENDS_K", "k.end_a, k.end_b, ", "@ENDS_N", "n.end_a, n.end_b, ",
		"@ENDS_MOVED", "\n   OR m.end_a IS NOT n.end_a OR m.end_b IS NOT n.end_b",
		// An edge the app moved to other ends after the plan stays: its
		// ends are not its key here.
		"@ENDS_UNMOVED", " AND e.end_a IS p.end_a AND e.end_b IS p.end_b",
		// An edge whose end is NULL joins nothing: a bad row.
		"@END_PROBLEMS", "WHEN e.end_a IS NULL THEN 'from is NULL' WHEN e.end_b IS NULL THEN 'to is NULL'\n\t",
		"@ENDS_PRESENT", "e.end_a IS NOT NULL AND e.end_b IS NOT NULL AND ",
		// A block with no state yet: the strengths its edges' due rows
		// keep for it, at either end.
		"@NEW_BLOCK_DEGREE", `(SELECT total(d.strength) FROM mem_edge_due d WHERE d.end_a = b.id)
                    + (SELECT total(d.strength) FROM mem_edge_due d WHERE d.end_b = b.id)`,
		"@END_A", "end_a", "@END_B", "end_b", "@KEPT_EDGES_POSSIBLE", "1", "@AND_UNPINNED", " AND NOT b.pinned",
		"EDGE_SNAPSHOT", "json(e.snapshot)",
		"@ARCHIVE_EDGES", sweepsql.ArchiveOf(m, "edge"), "@ARCHIVE_NODES", sweepsql.ArchiveOf(m, "block"), "@ARCHIVE_FACTS", sweepsql.ArchiveOf(m, "fact"),
	}
	tokens = append(tokens, "@REINFORCE_KEPT", reinforceKept(m.Nodes))
	tokens = append(tokens, sweepsql.DecayTokens(m.HalfLives(), m.CategoryTiersJSON())...)
	for _, v := range []string{"blocks", "block_tags", "dependents", "edges", "facts"} {
		drop := "DROP VIEW IF EXISTS " + a.qualified(v)
		a.setup, a.teardown = append(a.setup, drop), append(a.teardown, drop)
	}
	if err := a.nodes(ctx, q); err != nil {
		return nil, err
	}
	dependentTokens, err := a.dependents(ctx, q)
	if err != nil {
		return nil, err
	}
	tokens = append(tokens, dependentTokens...)
	edgeTokens, err := a.edges(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := a.facts(ctx, q); err != nil {
		return nil, err
	}
	row := func(prefix string, cols []string) []string {
		names, values := make([]string, len(cols)), make([]string, len(cols))
		for i, c := range cols {
			names[i], values[i] = sweepsql.Ident(c), prefix+"."+sweepsql.Ident(sweepsql.RowColumn(c))
		}
		return []string{strings.Join(names, ", "), strings.Join(values, ", ")}
	}
	for _, r := range []struct {
		token, alias string
		cols, own    []string
	}{{"@EDGE_ROW", "e", a.EdgeColumns, sweepsql.EdgeColumns}, {"@BLOCK_ROW", "b", a.NodeCols.Names, sweepsql.BlockColumns},
		{"@FACT_ROW", "f", a.FactColumns, sweepsql.FactColumns}} {
		nv := row(r.alias, r.cols)
		if len(r.cols) == 0 { // no such role: its empty view archives nothing, into memworker's own archive
			nv = []string{strings.Join(r.own, ", "), strings.TrimSuffix(strings.Repeat("NULL, ", len(r.own)), ", ")}
		}
		tokens = append(tokens, r.token+"_COLS", nv[0], r.token, nv[1])
	}
	for _, token := range []string{"@BLOCK_KEYS_INVALID", "@EDGE_KEYS_INVALID", "@FACT_KEYS_INVALID"} {
		if !slices.Contains(a.keyTokens, token) {
			tokens = append(tokens, token, "") // no such role
		}
	}
	tokens = append(tokens, a.keyTokens...)
	a.Tables = sweepsql.NewDialect(append(tokens, edgeTokens...)...)
	a.Tables.Teardown = a.teardown
	return a, nil
}

// AdaptMapping reads the database's mapping and, when it is not mem,
// checks it against the schema as it is now and builds its adapter (for
// a replica: main views, see adapted); nil for memworker's own tables.
func AdaptMapping(ctx context.Context, db *memdb.DB, replica bool) (*Adapted, error) {
	d, err := mapping.Load(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	if d.IsDefault() {
		return nil, nil
	}
	if err := d.Validate(ctx, db.SQL); err != nil {
		return nil, err
	}
	return adapt(ctx, db.SQL, d.Mapping, replica)
}

// Install creates the adapter's views and triggers on the sweep's
// connection (nothing for memworker's own tables). A policy that softly
// excludes edges, added since the mapping was checked, is refused here,
// in the sweep's transaction, before anything changes.
func (a *Adapted) Install(ctx context.Context, q memdb.Querier) error {
	if a == nil {
		return nil
	}
	if err := mapping.ExcludeRecorded(ctx, q, a.Map); err != nil {
		return err
	}
	return a.SetUp(ctx, q)
}

// SetUp makes the adapter's views and triggers on q's connection (none
// for memworker's own tables).
func (a *Adapted) SetUp(ctx context.Context, q memdb.Querier) error {
	if a == nil {
		return nil
	}
	for _, stmt := range a.setup {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("mapping: setting up the views of the app's tables: %w", err)
		}
	}
	return nil
}

// view is the name of the adapter's view of a role's rows.
func (a *Adapted) view(role string) string {
	if a.replica {
		return "mem_work_map_" + role
	}
	return "mem_map_" + role
}

// qualified is the view's name with its schema, for DROP.
func (a *Adapted) qualified(role string) string {
	if a.replica {
		return "main." + a.view(role)
	}
	return "temp." + a.view(role)
}

// temp is what CREATE says before VIEW or TRIGGER.
func (a *Adapted) temp() string {
	if a.replica {
		return ""
	}
	return "TEMP "
}

// table names an app's table from the adapter's views and triggers: a
// main object's trigger may not name a schema.
func (a *Adapted) table(name string) string {
	if a.replica {
		return sweepsql.Ident(name)
	}
	return "main." + sweepsql.Ident(name)
}

// nothingToWrite is the trigger that lets the sweep's statements write to
// the empty view of a role the mapping does not have (SQLite refuses any
// write to a view without one, even of no rows).
func (a *Adapted) nothingToWrite(role, op string) string {
	return `CREATE ` + a.temp() + `TRIGGER ` + a.view(role) + `_` + strings.ToLower(op) + ` INSTEAD OF ` + op + ` ON ` + a.view(role) +
		` BEGIN SELECT 1; END`
}

// mapping is the adapter's mapping, nil for memworker's own tables.
func (a *Adapted) mapping() *mapping.Mapping {
	if a == nil {
		return nil
	}
	return a.Map
}
