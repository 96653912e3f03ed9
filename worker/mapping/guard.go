package mapping

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// What a sweep through a mapping needs of it, and what it must never do to
// the app (SPEC §3): checked with the rest of the mapping when it is
// declared and before every use, so a mapping that is accepted sweeps.

// write is one part a sweep writes: the part as the mapping names it, the
// column given for it and the column as the table declares it.
type write struct {
	part, given string
	t           *table
	column      string
}

// oneColumnKey refuses a key of nodes or facts a sweep cannot go through:
// several columns, or rowid.
func oneColumnKey(role string, key Key) error {
	if len(key) != 1 || strings.EqualFold(key[0], RowID) {
		return bad("%s.key: give the %s' key column (an INTEGER PRIMARY KEY or a unique column), not rowid", role, role)
	}
	return nil
}

// statusSweepable refuses nodes or facts without a status to archive by,
// or whose archived value is also one that keeps a row (others): each
// sweep would archive the same row again.
func statusSweepable(role, one, status, archived string, others []string) error {
	if status == "" || archived == "" {
		return bad("%s.status: a sweep archives a %s by writing its status; name the status column and status_archived", role, one)
	}
	if slices.Contains(others, archived) {
		return bad("%s.status_archived: %q is also a value that keeps a %s (status_active or status_confirmed); every sweep would archive it again: give status_archived a value of its own",
			role, archived, one)
	}
	return nil
}

// sweepable refuses what a sweep cannot go through whatever the schema:
// nodes or facts without a status to archive by, or whose archived value
// also keeps a row; times it cannot read on one clock (oneClock).
func (m *Mapping) sweepable() error {
	if n := m.Nodes; n != nil {
		if err := statusSweepable("nodes", "node", n.Status, n.StatusArchived, n.StatusActive); err != nil {
			return err
		}
	}
	if f := m.Facts; f != nil {
		if err := statusSweepable("facts", "fact", f.Status, f.StatusArchived, append(slices.Clone(f.StatusActive), f.StatusConfirmed...)); err != nil {
			return err
		}
	}
	return m.oneClock()
}

// oneClock refuses times a sweep cannot read on one clock: the nodes' on
// active hours and the edges' on the wall clock (or the other way), or a
// mapping of wall times that names an active-hours clock table.
func (m *Mapping) oneClock() error {
	wall := func(c string) bool { return c != "" && c != ClockActiveHours }
	var nodesClock, edgesClock string
	if n := m.Nodes; n != nil && n.LastUsed != "" {
		nodesClock = n.LastUsedClock
	}
	if e := m.Edges; e != nil && e.LastActive != "" {
		edgesClock = e.LastActiveClock
	}
	if nodesClock != "" && edgesClock != "" && wall(nodesClock) != wall(edgesClock) {
		return bad("nodes.last_used is on the %s clock but edges.last_active on the %s clock: a sweep reads both on one clock (active hours, or wall time)",
			nodesClock, edgesClock)
	}
	if (wall(nodesClock) || wall(edgesClock)) && m.Clock != nil {
		return bad("clock: the mapping's times are wall times, so it keeps no active-hours clock; drop its [clock] table")
	}
	return nil
}

// foreignKey is one column of a foreign key of the database: child.from
// references parent.to ("" for the parent's primary key).
type foreignKey struct {
	child, from, parent, to, onDelete string
}

// foreignKeys reads every foreign key of every table of the main schema.
func foreignKeys(ctx context.Context, q Querier) ([]foreignKey, error) {
	rows, err := q.QueryContext(ctx, `SELECT m.name, f."from", f."table", f."to", upper(f.on_delete)
		FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq`)
	if err != nil {
		return nil, fmt.Errorf("mapping: reading the foreign keys: %w", err)
	}
	var out []foreignKey
	for rows.Next() {
		var fk foreignKey
		var to sql.NullString
		if err := rows.Scan(&fk.child, &fk.from, &fk.parent, &to, &fk.onDelete); err != nil {
			rows.Close()
			return nil, err
		}
		fk.to = to.String
		out = append(out, fk)
	}
	return out, errorsOf(rows)
}

// appSafe refuses a mapping through which a sweep would break the app's
// own rules: a written part on a key, an edge end or a column a foreign
// key references (a written column that holds a foreign key is the app's
// rule to enforce: the sweep skips and names a write it refuses); a removal that cascades, through a foreign
// key, to rows no archive keeps; keys whose rows memworker cannot tell
// apart; a policy that excludes edges with no column to record it in.
func (k *checker) appSafe(ctx context.Context, q Querier, m *Mapping) error {
	fks, err := foreignKeys(ctx, q)
	if err != nil {
		return err
	}
	for _, w := range k.writes {
		why := k.notWritable(w, m, fks)
		if why == "" {
			continue
		}
		role, part := w.part, w.part
		if i := strings.LastIndex(w.part, "."); i >= 0 {
			role, part = w.part[:i], w.part[i+1:]
		}
		return bad("%s: %s = %q %s; a sweep writes %s, so it cannot be a key, an edge end or a referenced column",
			role, part, w.given, why, part)
	}
	// A sweep deletes the rows of edges it removes, of facts it prunes and
	// the dependents of nodes it archives; nodes it archives by their status.
	deletes := []struct{ role, table string }{{"edges", edgesTable(m)}, {"facts", factsTable(m)}}
	if m.Nodes != nil {
		for _, d := range m.Nodes.Dependents {
			deletes = append(deletes, struct{ role, table string }{"nodes.dependents", d.Table})
		}
	}
	for _, r := range deletes {
		if r.table == "" {
			continue
		}
		if err := noCascade(r.role, r.table, fks); err != nil {
			return err
		}
	}
	if err := captureNamesFree(ctx, q, m); err != nil {
		return err
	}
	if err := ExcludeRecorded(ctx, q, m); err != nil {
		return err
	}
	// Last: a declared mapping in use passes every other check (Validate
	// of Declared).
	return k.distinctKeys(ctx, q, m)
}

// collidingKeys is distinctKeys' refusal: the last a mapping's check
// makes, so a declared mapping that meets only it passes all the others.
type collidingKeys struct{ error }

func (c collidingKeys) Unwrap() error { return c.error }

// Validate checks the declared mapping before it is used (a sweep, a
// reader, map show) as Mapping.Validate checks one being declared, but
// for rows whose keys read as one id: those the app wrote since are
// invalid rows a sweep skips and names (it reads ids as text), not a
// reason to stop decay. Declaring a mapping over such rows is refused.
func (d *Declared) Validate(ctx context.Context, q Querier) error {
	err := d.Mapping.Validate(ctx, q)
	if c := (collidingKeys{}); errors.As(err, &c) {
		return nil
	}
	return err
}

// NameTaken is the refusal of a mapping whose change capture or index
// (mem_map_…) would take the name of the app's own trigger or index.
func NameTaken(kind, name, table string) error {
	return bad("the app's %s %q on %q has the name of one memworker puts on the app's tables when it declares this mapping "+
		"(mem_map_…: change capture, indexes); rename the app's %s, then declare the mapping again", kind, name, table, said(kind))
}

// captureNamesFree refuses a mapping while an app's own trigger has the
// name of its change capture on a mapped table (mem_map_<table>_queue_…,
// which queues into mem_dirty_…): declaring would replace the app's
// trigger, and a sweep would take it for the change capture and miss the
// app's writes.
func captureNamesFree(ctx context.Context, q Querier, m *Mapping) error {
	var tables []string
	if n := m.Nodes; n != nil {
		tables = append(tables, n.Table)
		if n.Tags != nil && n.Tags.Table != "" {
			tables = append(tables, n.Tags.Table)
		}
	}
	if e := m.Edges; e != nil {
		tables = append(tables, e.Table)
	}
	if f := m.Facts; f != nil {
		tables = append(tables, f.Table)
	}
	rows, err := q.QueryContext(ctx, `SELECT name, tbl_name, coalesce(sql, '') FROM sqlite_master
		WHERE type = 'trigger' AND name LIKE 'mem\_map\_%\_queue\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return fmt.Errorf("mapping: reading the triggers on the app's tables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, table, body string
		if err := rows.Scan(&name, &table, &body); err != nil {
			return err
		}
		if strings.Contains(body, "mem_dirty_") {
			continue // memworker's own
		}
		for _, t := range tables {
			for _, op := range []string{"insert", "update", "delete"} {
				if strings.EqualFold(name, "mem_map_"+t+"_queue_"+op) {
					return NameTaken("trigger", name, table)
				}
			}
		}
	}
	return rows.Err()
}

func edgesTable(m *Mapping) string {
	if m.Edges == nil {
		return ""
	}
	return m.Edges.Table
}

func factsTable(m *Mapping) string {
	if m.Facts == nil {
		return ""
	}
	return m.Facts.Table
}

// notWritable says why a sweep may not write w's column ("" when it may).
func (k *checker) notWritable(w write, m *Mapping, fks []foreignKey) said {
	t, col := w.t, w.column
	has := func(cols []string) bool {
		return slices.ContainsFunc(cols, func(c string) bool { return strings.EqualFold(c, col) })
	}
	for i, u := range t.uniques {
		if has(u) && (t.uniqueNames[i] == "" || sameColumns(u, k.keys[strings.ToLower(t.name)])) {
			return "is the table's key"
		}
	}
	if e := m.Edges; e != nil && strings.EqualFold(t.name, e.Table) {
		for _, end := range []struct{ part, col string }{{"edges.from", e.From}, {"edges.to", e.To}} {
			if strings.EqualFold(end.col, col) {
				return said(fmt.Sprintf("is an edge end (%s)", end.part))
			}
		}
	}
	for i, u := range t.uniques {
		if has(u) {
			return said(fmt.Sprintf("is a key of the table (its unique index %s)", shown(t.uniqueNames[i])))
		}
	}
	for _, fk := range fks {
		if strings.EqualFold(fk.parent, t.name) && (strings.EqualFold(fk.to, col) || (fk.to == "" && has(t.pk))) {
			return said(fmt.Sprintf("is referenced by a foreign key of %s (%s)", shown(fk.child), shown(fk.from)))
		}
	}
	return ""
}

// noCascade refuses a table a sweep deletes rows from that is the parent
// of a foreign key whose ON DELETE changes other rows: SQLite would
// delete or change them with the sweep's removal, and no archive keeps
// them for restore.
func noCascade(role, table string, fks []foreignKey) error {
	for _, fk := range fks {
		if !strings.EqualFold(fk.parent, table) {
			continue
		}
		var effect string
		switch fk.onDelete {
		case "CASCADE":
			effect = fmt.Sprintf("delete the %s rows that reference it", shown(fk.child))
		case "SET NULL":
			effect = fmt.Sprintf("set %s.%s to NULL in the rows that reference it", shown(fk.child), shown(fk.from))
		case "SET DEFAULT":
			effect = fmt.Sprintf("set %s.%s to its default in the rows that reference it", shown(fk.child), shown(fk.from))
		default: // RESTRICT, NO ACTION: the removal is refused, nothing else changes
			continue
		}
		return bad("%s: the foreign key %s.%s references %s ON DELETE %s: a sweep that removes a %s row would make SQLite %s, and no archive keeps them; "+
			"declare %s.%s ON DELETE RESTRICT or NO ACTION (a sweep then keeps a row that is still referenced)",
			role, fk.child, fk.from, table, fk.onDelete, table, said(effect), fk.child, fk.from)
	}
	return nil
}

// distinctKeys refuses a key a column of which has no type, when two of
// its rows hold values memworker reads as one id: it reads ids as text,
// and 1, '1' and x'31' are all '1' (a column of a type converts each to
// its own kind, so its values never collide). Only when the mapping is
// declared: rows the app writes later are skipped and named by sweeps.
func (k *checker) distinctKeys(ctx context.Context, q Querier, m *Mapping) error {
	type keyed struct {
		role string
		key  Key
	}
	var roles []keyed
	if n := m.Nodes; n != nil {
		roles = append(roles, keyed{"nodes", n.Key})
	}
	if e := m.Edges; e != nil {
		roles = append(roles, keyed{"edges", e.Key})
	}
	if f := m.Facts; f != nil {
		roles = append(roles, keyed{"facts", f.Key})
	}
	for _, r := range roles {
		t := k.tables[r.role]
		i := slices.IndexFunc(r.key, func(name string) bool {
			c, ok := t.column(name)
			return ok && affinity(c.declared) == affBlob
		})
		if i < 0 {
			continue
		}
		untyped, _ := t.column(r.key[i])
		asText, notNull, values := make([]string, len(r.key)), make([]string, len(r.key)), make([]string, len(r.key))
		for i, name := range r.key {
			asText[i] = "CAST(" + Ident(name) + " AS TEXT)"
			notNull[i] = Ident(name) + " IS NOT NULL"
			values[i] = "quote(" + Ident(name) + ")"
		}
		value := values[0]
		if len(values) > 1 {
			value = "'(' || " + strings.Join(values, " || ', ' || ") + " || ')'"
		}
		var rows string
		found, err := scanOne(ctx, q, `SELECT group_concat(`+value+`, ' and ') FROM main.`+Ident(t.name)+`
			WHERE `+strings.Join(notNull, " AND ")+` GROUP BY `+strings.Join(asText, ", ")+` HAVING count(*) > 1 LIMIT 1`, nil, &rows)
		if err != nil {
			return fmt.Errorf("mapping: %s.key: reading the keys of %s: %w", r.role, shown(t.name), err)
		}
		if found {
			return collidingKeys{bad("%s.key: %s.%s has no type (declared %q), and rows hold %s, which memworker reads as one id (it reads ids as text): "+
				"a sweep cannot tell them apart; give them distinct ids, or declare the key INTEGER or TEXT", r.role, t.name, untyped.name, untyped.declared, rows)}
		}
	}
	return nil
}

// ExcludeRecorded refuses a mapping without edges.excluded while a
// relation policy softly excludes edges: the flag has nowhere to go. The
// check runs with the others, and again in a sweep's transaction (a policy
// may be added between the two).
func ExcludeRecorded(ctx context.Context, q Querier, m *Mapping) error {
	if m.Edges != nil && m.Edges.Excluded != "" {
		return nil
	}
	var policies int
	if _, err := scanOne(ctx, q, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'mem_edge_policies'`, nil, &policies); err != nil || policies == 0 {
		return err
	}
	var kind string
	found, err := scanOne(ctx, q, `SELECT relation_type FROM main.mem_edge_policies WHERE action = 'exclude' ORDER BY 1 LIMIT 1`, nil, &kind)
	if err != nil || !found {
		return err
	}
	return bad("the policy for %q softly excludes edges (action exclude), and the mapping names no column to record it in (edges.excluded, a 0/1 column); "+
		"name one, or use action delete", kind)
}

// Ident quotes an SQL identifier.
func Ident(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
