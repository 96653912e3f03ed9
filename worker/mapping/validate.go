package mapping

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Querier is what validation reads through: a *sql.DB, *sql.Conn or
// *sql.Tx, on a file or an rqlite node.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// column is one column of a table as the schema declares it.
type column struct {
	name, declared string
	pk             int  // position in the primary key, 0 when not in it
	generated      bool // a generated column: read only
}

// table is what validation knows of one table.
type table struct {
	name    string
	rowid   bool // a rowid table (not WITHOUT ROWID)
	columns []column
	// uniques are the column sets a row is unique by: the primary key and
	// every full (not partial) unique index; uniqueNames their names ("" for
	// the primary key).
	uniques     [][]string
	uniqueNames []string
	pk          []string // the primary key's columns, in order
}

func (t *table) column(name string) (column, bool) {
	for _, c := range t.columns {
		if strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return column{}, false
}

func (t *table) names() said {
	n := make([]string, len(t.columns))
	for i, c := range t.columns {
		n[i] = c.name
	}
	return listColumns(n)
}

// Affinities, as SQLite derives them from a declared type.
const (
	affInteger = "INTEGER"
	affText    = "TEXT"
	affBlob    = "BLOB" // no affinity: values are stored as given
	affReal    = "REAL"
	affNumeric = "NUMERIC"
)

// Affinity is the affinity SQLite gives a column declared so: INTEGER,
// TEXT, BLOB (none), REAL or NUMERIC.
func Affinity(declared string) string { return affinity(declared) }

// affinity follows SQLite's rules (datatype3.html §3.1), in their order.
func affinity(declared string) string {
	t := strings.ToUpper(declared)
	switch {
	case strings.Contains(t, "INT"):
		return affInteger
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return affText
	case t == "" || strings.Contains(t, "BLOB") || t == "ANY":
		return affBlob
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"):
		return affReal
	}
	return affNumeric
}

// numeric: a column whose values stay numbers (TEXT affinity turns every
// number written into text, which no rule can then read as a number).
func numeric(c column) bool { return affinity(c.declared) != affText }

// textual ids compare with text, numeric ids with numbers: an integer id 9
// never equals the text '9', so both ends of a join need the same kind.
func idKind(c column) string {
	switch affinity(c.declared) {
	case affInteger, affNumeric:
		return "numeric"
	case affReal: // 3.0 reads as '3.0' where an integer 3 reads as '3'
		return "real"
	case affText:
		return "text"
	}
	return "untyped"
}

// readTable reads a table's shape, or fails naming role when it is not a
// table of the main schema.
func readTable(ctx context.Context, q Querier, role, name string) (*table, error) {
	var kind string
	var withoutRowid bool
	found, err := scanOne(ctx, q, `SELECT type, wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, []any{name}, &kind, &withoutRowid)
	if err != nil {
		return nil, fmt.Errorf("mapping: %s: reading table %s: %w", role, shown(name), err)
	}
	if !found {
		return nil, bad("%s.table: the database has no table %s", role, name)
	}
	if kind != "table" {
		return nil, bad("%s.table: %s is a %s, not a table: a sweep removes and archives rows in place", role, name, kind)
	}
	t := &table{name: name, rowid: !withoutRowid}
	rows, err := q.QueryContext(ctx, `SELECT name, type, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid`, name)
	if err != nil {
		return nil, fmt.Errorf("mapping: %s: reading the columns of %s: %w", role, shown(name), err)
	}
	var pk []column
	for rows.Next() {
		var c column
		var hidden int
		if err := rows.Scan(&c.name, &c.declared, &c.pk, &hidden); err != nil {
			rows.Close()
			return nil, err
		}
		c.generated = hidden == 2 || hidden == 3
		t.columns = append(t.columns, c)
		if c.pk > 0 {
			pk = append(pk, c)
		}
	}
	if err := errorsOf(rows); err != nil {
		return nil, err
	}
	if len(pk) > 0 {
		slices.SortFunc(pk, func(a, b column) int { return a.pk - b.pk })
		cols := make([]string, len(pk))
		for i, c := range pk {
			cols[i] = c.name
		}
		t.uniques, t.uniqueNames, t.pk = append(t.uniques, cols), append(t.uniqueNames, ""), cols
	}
	idx, err := q.QueryContext(ctx, `SELECT l.name, i.name FROM pragma_index_list(?) l JOIN pragma_index_info(l.name) i
		WHERE l."unique" AND NOT l.partial ORDER BY l.name, i.seqno`, name)
	if err != nil {
		return nil, fmt.Errorf("mapping: %s: reading the indexes of %s: %w", role, shown(name), err)
	}
	byIndex := map[string][]string{}
	var order []string
	for idx.Next() {
		var index string
		var col sql.NullString // an index on an expression has no column name
		if err := idx.Scan(&index, &col); err != nil {
			idx.Close()
			return nil, err
		}
		if _, seen := byIndex[index]; !seen {
			order = append(order, index)
		}
		byIndex[index] = append(byIndex[index], col.String)
	}
	if err := errorsOf(idx); err != nil {
		return nil, err
	}
	for _, index := range order {
		if !slices.Contains(byIndex[index], "") {
			t.uniques, t.uniqueNames = append(t.uniques, byIndex[index]), append(t.uniqueNames, index)
		}
	}
	return t, nil
}

func errorsOf(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

func scanOne(ctx context.Context, q Querier, query string, args []any, dest ...any) (bool, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	return true, rows.Scan(dest...)
}

// checker collects what validation finds, role by role.
type checker struct {
	tables  map[string]*table
	written map[string]string // "table.column" -> the role that writes it
	writes  []write           // every part a sweep writes, in the mapping's order
	keys    map[string]Key    // table (lower case) -> the key the mapping gives it
}

// part is one column role: its name in the mapping, whether it must hold
// numbers, and whether sweeps write it.
type part struct {
	role    string
	column  string
	numeric bool
	written bool
	hint    string // said when the column cannot hold numbers
}

func (k *checker) parts(t *table, parts ...part) error {
	for _, p := range parts {
		if p.column == "" {
			continue
		}
		c, ok := t.column(p.column)
		if !ok {
			return bad("%s: table %s has no column %s (its columns: %s)", p.role, t.name, p.column, t.names())
		}
		if p.numeric && !numeric(c) {
			hint := "declare it REAL, INTEGER or NUMERIC"
			if p.hint != "" {
				hint = p.hint
			}
			return bad("%s: %s.%s is declared %s (TEXT affinity), which turns every number written into text; "+
				"this part needs numbers: %s", p.role, t.name, c.name, c.declared, said(hint))
		}
		if p.written {
			if c.generated {
				return bad("%s: %s.%s is a generated column, and sweeps write this part", p.role, t.name, c.name)
			}
			key := strings.ToLower(t.name + "." + c.name)
			if other, taken := k.written[key]; taken {
				return bad("%s: %s.%s already plays %s; a sweep writes both parts", p.role, t.name, c.name, other)
			}
			k.written[key] = p.role
			k.writes = append(k.writes, write{part: p.role, given: p.column, t: t, column: c.name})
		}
	}
	return nil
}

// key checks a role's key is unique in its table and returns its columns.
func (k *checker) key(role string, t *table, key Key) ([]column, error) {
	if len(key) == 1 && strings.EqualFold(key[0], RowID) {
		if !t.rowid {
			return nil, bad("%s.key: %s is a WITHOUT ROWID table, it has no rowid: name its primary key", role, t.name)
		}
		return nil, nil
	}
	cols := make([]column, len(key))
	for i, name := range key {
		c, ok := t.column(name)
		if !ok {
			return nil, bad("%s.key: table %s has no column %s (its columns: %s)", role, t.name, name, t.names())
		}
		cols[i] = c
	}
	for _, u := range t.uniques {
		if sameColumns(u, key) {
			k.keys[strings.ToLower(t.name)] = key
			return cols, nil
		}
	}
	return nil, bad("%s.key: (%s) is not unique in %s: neither its primary key nor a unique index (a sweep removes and restores rows by their key)",
		role, key, t.name)
}

func sameColumns(a []string, b Key) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range b {
		if !slices.ContainsFunc(a, func(y string) bool { return strings.EqualFold(x, y) }) {
			return false
		}
	}
	return true
}

func (k *checker) table(ctx context.Context, q Querier, role, name string, ours bool) (*table, error) {
	if !ours && strings.HasPrefix(strings.ToLower(name), "mem_") {
		return nil, bad("%s.table: %s is one of memworker's own tables; map an app's tables, or use the preset mem", role, name)
	}
	for _, t := range k.tables {
		if strings.EqualFold(t.name, name) {
			return nil, bad("%s.table: %s already plays another role", role, name)
		}
	}
	t, err := readTable(ctx, q, role, name)
	if err != nil {
		return nil, err
	}
	k.tables[role] = t
	return t, nil
}

// Validate checks the mapping against the database's real schema: every
// table and column exists, each key is unique, each column can hold its
// part, and ids compare with ids of the same kind. The first mistake is
// returned, one line naming the table and column.
func (m *Mapping) Validate(ctx context.Context, q Querier) error {
	if err := m.check(); err != nil {
		return err
	}
	ours := m.IsDefault()
	k := &checker{tables: map[string]*table{}, written: map[string]string{}, keys: map[string]Key{}}
	var nodeKey []column
	if n := m.Nodes; n != nil {
		t, err := k.table(ctx, q, "nodes", n.Table, ours)
		if err != nil {
			return err
		}
		if nodeKey, err = k.key("nodes", t, n.Key); err != nil {
			return err
		}
		if !ours {
			if err := oneColumnKey("nodes", n.Key); err != nil {
				return err
			}
		}
		hours := n.LastUsedClock == ClockActiveHours
		if err := k.parts(t,
			part{"nodes.last_used", n.LastUsed, hours, true, clockHint("nodes.last_used")},
			part{"nodes.category", n.Category, false, false, ""},
			part{"nodes.status", n.Status, false, true, ""},
			part{"nodes.archive_reason", n.ArchiveReason, false, true, ""},
			part{"nodes.confidence", n.Confidence, true, false, ""},
			part{"nodes.reinforcement_count", n.Reinforcement, true, true, ""},
			part{"nodes.pinned", n.Pinned, false, false, ""},
		); err != nil {
			return err
		}
		if tg := n.Tags; tg != nil {
			if tg.Column != "" {
				if err := k.parts(t, part{"nodes.tags", tg.Column, false, false, ""}); err != nil {
					return err
				}
			} else {
				tt, err := k.table(ctx, q, "nodes.tags", tg.Table, ours)
				if err != nil {
					return err
				}
				if err := k.parts(tt, part{"nodes.tags.node", tg.NodeID, false, false, ""}, part{"nodes.tags.tag", tg.Tag, false, false, ""}); err != nil {
					return err
				}
				if err := sameIDs("nodes.tags.node", tt, tg.NodeID, n.Table, nodeKey); err != nil {
					return err
				}
			}
		}
		for i, d := range n.Dependents {
			role := fmt.Sprintf("nodes.dependents[%d]", i)
			dt, err := k.table(ctx, q, role, d.Table, ours)
			if err != nil {
				return err
			}
			for _, c := range d.Columns {
				if err := k.parts(dt, part{role + ".columns", c, false, false, ""}); err != nil {
					return err
				}
				if err := sameIDs(role+".columns", dt, c, n.Table, nodeKey); err != nil {
					return err
				}
			}
		}
	}
	if e := m.Edges; e != nil {
		t, err := k.table(ctx, q, "edges", e.Table, ours)
		if err != nil {
			return err
		}
		if _, err := k.key("edges", t, e.Key); err != nil {
			return err
		}
		if !ours && (len(e.Key) > 2 || (len(e.Key) == 1 && strings.EqualFold(e.Key[0], RowID))) {
			return bad("edges.key: give the edges' key as one column (an INTEGER PRIMARY KEY or a unique column) or two, not rowid or more")
		}
		hours := e.LastActiveClock == ClockActiveHours
		if err := k.parts(t,
			part{"edges.from", e.From, false, false, ""},
			part{"edges.to", e.To, false, false, ""},
			part{"edges.kind", e.Kind, false, false, ""},
			part{"edges.weight", e.Weight, true, false, ""},
			part{"edges.reinforcement_count", e.Reinforcement, true, false, ""},
			part{"edges.origin", e.Origin, false, false, ""},
			part{"edges.pinned", e.Pinned, true, false, ""},
			part{"edges.excluded", e.Excluded, true, true, ""},
			part{"edges.last_active", e.LastActive, hours, false, clockHint("edges.last_active")},
			part{"edges.last_observed", e.LastObserved, false, false, ""},
		); err != nil {
			return err
		}
		if e.From == e.To {
			return bad("edges: from and to are the same column %s", e.From)
		}
		if m.Nodes != nil {
			for _, end := range []struct{ role, col string }{{"edges.from", e.From}, {"edges.to", e.To}} {
				if err := sameIDs(end.role, t, end.col, m.Nodes.Table, nodeKey); err != nil {
					return err
				}
			}
		}
	}
	if f := m.Facts; f != nil {
		t, err := k.table(ctx, q, "facts", f.Table, ours)
		if err != nil {
			return err
		}
		if _, err := k.key("facts", t, f.Key); err != nil {
			return err
		}
		if !ours {
			if err := oneColumnKey("facts", f.Key); err != nil {
				return err
			}
		}
		if err := k.parts(t,
			part{"facts.segment", f.Segment, false, false, ""},
			part{"facts.tier", f.Tier, false, false, ""},
			part{"facts.importance", f.Importance, true, true, ""},
			part{"facts.decay_rate", f.DecayRate, true, false, ""},
			part{"facts.access_count", f.AccessCount, true, true, ""},
			part{"facts.last_access", f.LastAccess, false, true, ""},
			part{"facts.created_at", f.CreatedAt, false, false, ""},
			part{"facts.status", f.Status, false, true, ""},
		); err != nil {
			return err
		}
	}
	if c := m.Clock; c != nil {
		t, err := k.table(ctx, q, "clock", c.Table, ours)
		if err != nil {
			return err
		}
		if err := k.parts(t, part{"clock.key_column", c.KeyColumn, false, false, ""}, part{"clock.value_column", c.ValueColumn, false, true, ""}); err != nil {
			return err
		}
		if _, err := k.key("clock", t, Key{c.KeyColumn}); err != nil {
			return err
		}
	}
	if ours {
		return nil
	}
	if err := m.validateAccesses(ctx, q, k, nodeKey); err != nil {
		return err
	}
	if err := m.sweepable(); err != nil {
		return err
	}
	return k.appSafe(ctx, q, m)
}

// clockHint is what to do when a time on the active-hours clock (the
// default) is in a text column.
func clockHint(role string) string {
	return fmt.Sprintf("it is on the active-hours clock; if it holds wall times, set %s_clock to %s, %s or %s",
		role, ClockISO8601, ClockUnixSeconds, ClockWall)
}

// sameIDs refuses a column of node ids whose kind differs from the nodes'
// key (an integer 9 never equals the text '9').
func sameIDs(role string, t *table, col, nodes string, nodeKey []column) error {
	if len(nodeKey) != 1 {
		return nil // rowid: an integer
	}
	c, _ := t.column(col)
	want, got := idKind(nodeKey[0]), idKind(c)
	if want == "untyped" || got == "untyped" || want == got {
		return nil
	}
	return bad("%s: %s.%s holds %s ids (declared %q) but %s.%s is %s (declared %q): the ids would never compare equal; declare both alike",
		role, t.name, c.name, got, c.declared, nodes, nodeKey[0].name, want, nodeKey[0].declared)
}
