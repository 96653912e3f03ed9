package worker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
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

// adapted is a mapping ready to sweep: its dialect and the statements that
// set its views up on a sweep's connection.
type adapted struct {
	m      *mapping.Mapping
	tables *sweepsql.Dialect
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
	// wallHours: the mapping's times of last use and activity are wall
	// times, so the sweep's hour clock is unix time in hours.
	wallHours bool
	// singleKey: an edge's key is one column (to_id is '').
	singleKey bool
	// edgeColumns: the edge table's columns, as a snapshot keeps them.
	edgeColumns []string
	edgeCols    sweepsql.ColumnInfo
	// nodeCols: the node table's columns.
	nodeCols sweepsql.ColumnInfo
	// factColumns: the fact table's columns, as a snapshot keeps them.
	factColumns []string
	factCols    sweepsql.ColumnInfo
	// keyTokens: @BLOCK_KEYS_INVALID, @EDGE_KEYS_INVALID and
	// @FACT_KEYS_INVALID, each with the rows its role's view leaves out
	// for their key (keyProblems).
	keyTokens []string
}

// ErrMappingUnsupported: a mapping this memworker can check but not yet
// sweep through.
var ErrMappingUnsupported = errors.New("mapping")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMappingUnsupported, fmt.Sprintf(format, a...))
}

// A key names one row only when it is not NULL and no other row's key
// reads as the same text id: memworker reads ids as text, and a key
// column of no type holds 1 and '1' side by side (keyTyped ones convert
// every value to their own kind). The adapter's views leave such rows
// out, so no sweep changes or removes them, and keyProblems names them
// as invalid rows.

// unshared is the condition a row of the app's table (quoted as
// a.table gives it) named outer meets when no other row's key reads as
// its text id, "AND …" to append to a WHERE; "" for a key whose columns
// all have a type. The probe goes through the index on CAST(id AS TEXT)
// that mappedIndexes declares for such columns.
func (a *adapted) unshared(cols sweepsql.ColumnInfo, table, outer string, key []string) string {
	if sweepsql.KeyTyped(cols, key) {
		return ""
	}
	same, raw := make([]string, len(key)), make([]string, len(key))
	for i, k := range key {
		same[i] = cols.AsText("x", k) + " = " + cols.AsText(outer, k)
		raw[i] = "x." + sweepsql.Ident(k) + " IS " + outer + "." + sweepsql.Ident(k)
	}
	return " AND NOT EXISTS (SELECT 1 FROM " + a.table(table) + " x WHERE " + strings.Join(same, " AND ") +
		" AND NOT (" + strings.Join(raw, " AND ") + "))"
}

// keyProblems are the rows of the app's table that the adapter's views
// leave out for their key (see unshared), as rows of sweep_invalid (kind,
// id, problem) to append to its INSERT with UNION ALL: a key that is NULL
// (in a column that may hold NULL, found through the key's index), and,
// for a key column of no type, each row whose key reads as another's
// (found through the index on CAST(id AS TEXT)), named as the app holds
// it (1, '1'). "" when no row can have either.
func (a *adapted) keyProblems(kind string, cols sweepsql.ColumnInfo, table string, key []string) string {
	t := a.table(table)
	named := func(alias string) string {
		if len(key) == 1 {
			return "quote(" + alias + "." + sweepsql.Ident(key[0]) + ")"
		}
		parts := make([]string, len(key))
		for i, k := range key {
			parts[i] = "quote(" + alias + "." + sweepsql.Ident(k) + ")"
		}
		return "'(' || " + strings.Join(parts, " || ', ' || ") + " || ')'"
	}
	var out strings.Builder
	var present, xPresent []string
	for _, k := range key {
		col := "k." + sweepsql.Ident(k)
		if cols.Nullable[strings.ToLower(k)] {
			where := append(append([]string{}, present...), col+" IS NULL")
			fmt.Fprintf(&out, "\nUNION ALL SELECT %s, %s, %s FROM %s k WHERE %s", sweepsql.Literal(kind), named("k"),
				sweepsql.Literal(table+"."+k+" is NULL"), t, strings.Join(where, " AND "))
		}
		present, xPresent = append(present, col+" IS NOT NULL"), append(xPresent, "x."+sweepsql.Ident(k)+" IS NOT NULL")
	}
	if sweepsql.KeyTyped(cols, key) {
		return out.String()
	}
	text, xText, same, order := make([]string, len(key)), make([]string, len(key)), make([]string, len(key)), make([]string, len(key))
	for i, k := range key {
		text[i], xText[i] = cols.AsText("k", k), cols.AsText("x", k)
		same[i] = xText[i] + " = " + text[i]
		order[i] = "x." + sweepsql.Ident(k)
	}
	label, one := table+"."+key[0], "id"
	if len(key) > 1 {
		label, one = table+".("+strings.Join(key, ", ")+")", "key"
	}
	fmt.Fprintf(&out, `
UNION ALL SELECT %s, %s, (SELECT %s || group_concat(v, ' and ') || ' read as one %s; '
                                || CASE count(*) WHEN 2 THEN 'both' ELSE 'all ' || count(*) END || ' skipped'
                         FROM (SELECT %s AS v FROM %s x WHERE %s ORDER BY %s))
FROM %s k WHERE (%s) IN (SELECT %s FROM %s x WHERE %s GROUP BY %s HAVING count(*) > 1)`,
		sweepsql.Literal(kind), named("k"), sweepsql.Literal(label+" "), one, named("x"), t, strings.Join(same, " AND "), strings.Join(order, ", "),
		t, strings.Join(text, ", "), strings.Join(xText, ", "), t, strings.Join(xPresent, " AND "),
		strings.Join(xText, ", "))
	return out.String()
}

// rowOwn is the app row's own columns a view of alias shows, for a
// removal's archive: its JSON snapshot, and each column as it is. The
// readers' views need none, and without them outlive the app's changes to
// its other columns.
func (a *adapted) rowOwn(cols sweepsql.ColumnInfo, alias string) string {
	if a.readersOnly {
		return "NULL AS snapshot"
	}
	return cols.Snapshot(alias) + " AS snapshot, " + cols.Rows(alias)
}

// or is col of alias, or def when the app has no such column.
func or(alias, col, def string) string {
	if col == "" {
		return def
	}
	return alias + "." + sweepsql.Ident(col)
}

// edgeWeight is an edge's weight: its column (as column reads it), or
// the mapping's constant, or 1.0.
func edgeWeight(e *mapping.Edges, column func(col string) string) string {
	switch {
	case e.Weight != "":
		return column(e.Weight)
	case e.WeightConstant != nil:
		return strconv.FormatFloat(*e.WeightConstant, 'g', -1, 64)
	}
	return "1.0"
}

// orZero is a count or flag column of alias, 0 where the app leaves it
// NULL (a column with no default) or has no such column: as memworker's
// own rows start, so such a row is swept, not skipped as bad.
func orZero(alias, col string) string {
	if col == "" {
		return "0"
	}
	return "coalesce(" + alias + "." + sweepsql.Ident(col) + ", 0)"
}

// hoursOf reads a time column on clock as active hours: as it is on the
// active-hours clock; a wall time (unix seconds or ISO-8601 text) in hours
// since 1970. A value that is no time stays as it is, so the sweep names it
// as a bad row.
func hoursOf(expr, clock string) string {
	if clock == "" || clock == mapping.ClockActiveHours {
		return expr
	}
	return `(CASE WHEN typeof(` + expr + `) IN ('integer', 'real') THEN ` + expr + ` / 3600.0
	    WHEN try_unix_seconds(` + expr + `) IS NOT NULL THEN try_unix_seconds(` + expr + `) / 3600.0 ELSE ` + expr + ` END)`
}

// timeFrom writes hours (an expression) back into the column col in the
// form it holds now: on a wall clock, an integer or real of unix seconds
// or ISO-8601 UTC text (for a NULL, the clock's own form).
func timeFrom(hours, col, clock string) string {
	if clock == "" || clock == mapping.ClockActiveHours {
		return hours
	}
	secs := `CAST(round(` + hours + ` * 3600) AS INTEGER)`
	iso := `strftime('%Y-%m-%dT%H:%M:%SZ', ` + secs + `, 'unixepoch')`
	null := iso
	if clock == mapping.ClockUnixSeconds {
		null = secs
	}
	return `CASE typeof(` + col + `) WHEN 'integer' THEN ` + secs + ` WHEN 'real' THEN ` + hours + ` * 3600
	    WHEN 'text' THEN ` + iso + ` ELSE ` + null + ` END`
}

// statusWrite is the SET clause of a view trigger that writes the app's
// status column col from the view's status: archived and active as the
// app writes them, any other status left as it is.
func statusWrite(col, archived, active string) string {
	return changed(col, "status", `CASE NEW.status WHEN 'archived' THEN `+sweepsql.Literal(archived)+` WHEN 'active' THEN `+sweepsql.Literal(active)+
		` ELSE `+sweepsql.Ident(col)+` END`)
}

// changed sets col to value only when the view's column moved.
func changed(col, viewCol, value string) string {
	return sweepsql.Ident(col) + ` = CASE WHEN NEW.` + viewCol + ` IS OLD.` + viewCol + ` THEN ` + sweepsql.Ident(col) + ` ELSE ` + value + ` END`
}

// adapt builds the adapter of a mapping other than mem that the
// mapping's check (Validate) passed: what a sweep cannot go through
// (keys, statuses, clocks) is refused there, in one place.
func adapt(ctx context.Context, q memdb.Querier, m *mapping.Mapping, replica bool) (*adapted, error) {
	return adaptAs(ctx, q, &adapted{m: m, replica: replica})
}

// adaptReaders is adapt for the readers' views alone (views.go), whose
// views of the app's rows leave out the rows' own columns (rowOwn).
func adaptReaders(ctx context.Context, q memdb.Querier, m *mapping.Mapping) (*adapted, error) {
	return adaptAs(ctx, q, &adapted{m: m, readersOnly: true})
}

// reinforceKept is @REINFORCE_KEPT for the app's nodes: by the count
// where it is mapped; else by the time of use, unless it was already this
// sweep's (then an applied and an ignored reinforcement look alike, and
// it is taken as applied); with neither, a reinforcement writes nothing.
func reinforceKept(n *mapping.Nodes) string {
	switch {
	case n == nil:
		return "0"
	case n.Reinforcement != "":
		return sweepsql.ReinforceKeptByCount
	case n.LastUsed != "":
		return "n.last_reinforced_hours IS b.last AND b.last IS NOT :now"
	}
	return "0"
}

func adaptAs(ctx context.Context, q memdb.Querier, a *adapted) (*adapted, error) {
	m := a.m
	wall := func(c string) bool { return c != "" && c != mapping.ClockActiveHours }
	a.wallHours = (m.Nodes != nil && m.Nodes.LastUsed != "" && wall(m.Nodes.LastUsedClock)) ||
		(m.Edges != nil && m.Edges.LastActive != "" && wall(m.Edges.LastActiveClock))
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
		"@END_A", "end_a", "@END_B", "end_b", "@KEPT_EDGES_POSSIBLE", "1",
		"EDGE_SNAPSHOT", "json(e.snapshot)",
		"@ARCHIVE_EDGES", sweepsql.ArchiveOf(m, "edge"), "@ARCHIVE_NODES", sweepsql.ArchiveOf(m, "block"), "@ARCHIVE_FACTS", sweepsql.ArchiveOf(m, "fact"),
	}
	tokens = append(tokens, "@REINFORCE_KEPT", reinforceKept(m.Nodes))
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
	}{{"@EDGE_ROW", "e", a.edgeColumns, sweepsql.EdgeColumns}, {"@BLOCK_ROW", "b", a.nodeCols.Names, sweepsql.BlockColumns},
		{"@FACT_ROW", "f", a.factColumns, sweepsql.FactColumns}} {
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
	a.tables = sweepsql.NewDialect(append(tokens, edgeTokens...)...)
	a.tables.Teardown = a.teardown
	return a, nil
}

// nodes sets up mem_map_blocks and mem_map_block_tags (empty views when
// the mapping has no nodes).
func (a *adapted) nodes(ctx context.Context, q memdb.Querier) error {
	n := a.m.Nodes
	if n == nil {
		a.setup = append(a.setup,
			`CREATE `+a.temp()+`VIEW `+a.view("blocks")+` AS SELECT NULL AS id, NULL AS category, NULL AS status, NULL AS archive_reason,
			NULL AS confidence, 0 AS reinforcement_count, NULL AS last_reinforced_hours, NULL AS snapshot WHERE 0`,
			`CREATE `+a.temp()+`VIEW `+a.view("block_tags")+` AS SELECT NULL AS block_id, NULL AS tag WHERE 0`)
		a.setup = append(a.setup, a.nothingToWrite("blocks", "UPDATE"), a.nothingToWrite("block_tags", "DELETE"))
		return nil
	}
	cols, err := sweepsql.ReadColumns(ctx, q, n.Table)
	if err != nil {
		return err
	}
	a.nodeCols = cols
	active := sweepsql.StatusValues(n.StatusActive, "active")
	status := a.nodeStatus("n")
	key, table := n.Key[0], a.table(n.Table)
	a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("blocks")+` AS
SELECT `+cols.AsText("n", key)+` AS id, `+or("n", n.Category, "NULL")+` AS category, `+status+` AS status,
       `+or("n", n.ArchiveReason, "NULL")+` AS archive_reason, `+or("n", n.Confidence, "NULL")+` AS confidence,
       `+orZero("n", n.Reinforcement)+` AS reinforcement_count,
       `+hoursOf(or("n", n.LastUsed, "NULL"), n.LastUsedClock)+` AS last_reinforced_hours,
       n.`+sweepsql.Ident(key)+` AS key_raw, `+a.rowOwn(cols, "n")+`
FROM `+table+` n WHERE n.`+sweepsql.Ident(key)+` IS NOT NULL`+a.unshared(cols, n.Table, "n", n.Key))
	a.keyTokens = append(a.keyTokens, "@BLOCK_KEYS_INVALID", a.keyProblems("block", cols, n.Table, n.Key))
	set := []string{statusWrite(n.Status, n.StatusArchived, active[0])}
	if n.ArchiveReason != "" {
		set = append(set, changed(n.ArchiveReason, "archive_reason", "NEW.archive_reason"))
	}
	if n.Reinforcement != "" {
		set = append(set, changed(n.Reinforcement, "reinforcement_count", "NEW.reinforcement_count"))
	}
	if n.LastUsed != "" {
		set = append(set, changed(n.LastUsed, "last_reinforced_hours", timeFrom("NEW.last_reinforced_hours", sweepsql.Ident(n.LastUsed), n.LastUsedClock)))
	}
	a.setup = append(a.setup, `CREATE `+a.temp()+`TRIGGER `+a.view("blocks")+`_update INSTEAD OF UPDATE ON `+a.view("blocks")+` BEGIN
UPDATE `+table+` SET `+strings.Join(set, ",\n    ")+`
WHERE `+sweepsql.Ident(key)+` = OLD.key_raw;
END`)
	switch tg := n.Tags; {
	case tg == nil:
		a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("block_tags")+` AS SELECT NULL AS block_id, NULL AS tag WHERE 0`)
	case tg.Column != "":
		c := "n." + sweepsql.Ident(tg.Column)
		list := `'["' || replace(replace(replace(` + c + `, '\', '\\'), '"', '\"'), ',', '","') || '"]'`
		a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("block_tags")+` AS
SELECT `+cols.AsText("n", key)+` AS block_id, trim(j.value) AS tag
FROM `+table+` n, json_each(CASE WHEN json_valid(`+c+`) AND json_type(`+c+`) = 'array' THEN `+c+`
                               WHEN typeof(`+c+`) = 'text' AND trim(`+c+`) != '' THEN `+list+` ELSE '[]' END) j
WHERE j.type = 'text'`)
	default:
		tcols, err := sweepsql.ReadColumns(ctx, q, tg.Table)
		if err != nil {
			return err
		}
		a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("block_tags")+` AS
SELECT `+tcols.AsText("t", tg.NodeID)+` AS block_id, t.`+sweepsql.Ident(tg.Tag)+` AS tag FROM `+a.table(tg.Table)+` t`)
		// An archived node's tag rows go with it, as memworker's own do
		// (its archive row keeps them; restore puts them back).
		a.setup = append(a.setup, `CREATE `+a.temp()+`TRIGGER `+a.view("block_tags")+`_delete INSTEAD OF DELETE ON `+a.view("block_tags")+` BEGIN
DELETE FROM `+a.table(tg.Table)+` WHERE `+tcols.AsText("", tg.NodeID)+` = OLD.block_id AND `+sweepsql.Ident(tg.Tag)+` IS OLD.tag;
END`)
		return nil
	}
	// Tags in the node's own row stay with it (the row stays, with its
	// status archived): the sweep's removal of tags does nothing here.
	a.setup = append(a.setup, `CREATE `+a.temp()+`TRIGGER `+a.view("block_tags")+`_delete INSTEAD OF DELETE ON `+a.view("block_tags")+` BEGIN SELECT 1; END`)
	return nil
}

// dependents sets up mem_map_dependents, the rows of the nodes'
// dependent tables by the node each column names (block_id, as text; raw,
// as the table holds it) with their snapshot (row); deleting a view row
// deletes the rows of its table that name its node in its column. It
// returns the tokens @DEPENDENTS and @DELETE_DEPENDENTS (apply.sql).
func (a *adapted) dependents(ctx context.Context, q memdb.Querier) ([]string, error) {
	if a.m.Nodes == nil || len(a.m.Nodes.Dependents) == 0 {
		return sweepsql.NoDependents, nil
	}
	var arms, deletes []string
	for _, d := range a.m.Nodes.Dependents {
		cols, err := sweepsql.ReadColumns(ctx, q, d.Table)
		if err != nil {
			return nil, err
		}
		for _, c := range d.Columns {
			arms = append(arms, `SELECT `+cols.AsText("t", c)+` AS block_id, `+sweepsql.Literal(d.Table)+` AS dep_table, `+sweepsql.Literal(c)+` AS dep_column,
       t.`+sweepsql.Ident(c)+` AS raw, `+cols.Snapshot("t")+` AS row
FROM `+a.table(d.Table)+` t WHERE t.`+sweepsql.Ident(c)+` IS NOT NULL`)
			deletes = append(deletes, `DELETE FROM `+a.table(d.Table)+` WHERE OLD.dep_table = `+sweepsql.Literal(d.Table)+
				` AND OLD.dep_column = `+sweepsql.Literal(c)+` AND `+sweepsql.Ident(c)+` = OLD.raw;`)
		}
	}
	view := a.view("dependents")
	a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+view+` AS
`+strings.Join(arms, "\nUNION ALL\n"),
		`CREATE `+a.temp()+`TRIGGER `+view+`_delete INSTEAD OF DELETE ON `+view+` BEGIN
`+strings.Join(deletes, "\n")+`
END`)
	return []string{"@DEPENDENTS", view, "@DELETE_DEPENDENTS", `DELETE FROM ` + view + ` WHERE block_id IN (
    SELECT o.id FROM apply_block_ids o CROSS JOIN ` + a.view("blocks") + ` b ON b.id = o.id WHERE b.status = 'archived')`}, nil
}

// edges sets up mem_map_edges, and returns the tokens that name an edge.
func (a *adapted) edges(ctx context.Context, q memdb.Querier) ([]string, error) {
	e := a.m.Edges
	if e == nil {
		a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("edges")+` AS SELECT '' AS from_id, '' AS to_id, NULL AS end_a, NULL AS end_b,
			1.0 AS weight, 0 AS reinforcement_count, NULL AS relation_type, NULL AS origin, NULL AS last_active_hours,
			NULL AS last_observed_at, 0 AS pinned, 0 AS excluded, NULL AS note, NULL AS created_at, NULL AS snapshot WHERE 0`,
			a.nothingToWrite("edges", "DELETE"), a.nothingToWrite("edges", "UPDATE"))
		a.singleKey = true
		return []string{"@SUBJECT_E", "e.from_id", "@SUBJECT", "from_id", "EDGE_NAME", "from_id", "@DELETE_EDGES", "SELECT 0",
			"@KEY_A", "from_id", "@KEY_B", "to_id"}, nil
	}
	cols, err := sweepsql.ReadColumns(ctx, q, e.Table)
	if err != nil {
		return nil, err
	}
	a.edgeColumns, a.edgeCols = cols.Names, cols
	table := a.table(e.Table)
	weight := edgeWeight(e, func(col string) string { return "l." + sweepsql.Ident(col) })
	k1, k2, raw2, where := cols.AsText("l", e.Key[0]), "''", "''", sweepsql.Ident(e.Key[0])+" = OLD.key_raw"
	if len(e.Key) == 2 {
		k2, raw2 = cols.AsText("l", e.Key[1]), "l."+sweepsql.Ident(e.Key[1])
		where += " AND " + sweepsql.Ident(e.Key[1]) + " = OLD.key_raw2"
	}
	a.singleKey = len(e.Key) == 1
	// An edge is found by its key as the app holds it (key_raw, key_raw2:
	// the table's own key), where the key's columns convert the text
	// memworker holds ids as (keyTyped); else by the text (from_id, to_id,
	// through the index on CAST(id AS TEXT)).
	keyA, keyB := "from_id", "to_id"
	if sweepsql.KeyTyped(cols, e.Key) {
		keyA, keyB = "key_raw", "key_raw2"
	}
	// A row with a NULL key, or one whose key reads as another's, can be
	// named by no event: the sweep skips it, and names it (keyProblems).
	notNull := "l." + sweepsql.Ident(e.Key[0]) + " IS NOT NULL"
	if !a.singleKey {
		notNull += " AND l." + sweepsql.Ident(e.Key[1]) + " IS NOT NULL"
	}
	notNull += a.unshared(cols, e.Table, "l", e.Key)
	a.keyTokens = append(a.keyTokens, "@EDGE_KEYS_INVALID", a.keyProblems("edge", cols, e.Table, e.Key))
	// The sweep's removals go to the app's table itself, by its key: a
	// view's trigger would run a program per row, and the view's key read
	// as text would find each row through an index on CAST(id AS TEXT)
	// rather than the table's own key.
	deleteEdges := `DELETE FROM ` + table + ` WHERE ` + cols.ByText("", e.Key[0]) + ` IN (SELECT from_id FROM apply_edge_keys)`
	if !a.singleKey {
		deleteEdges = `DELETE FROM ` + table + ` WHERE (` + cols.ByText("", e.Key[0]) + `, ` + cols.ByText("", e.Key[1]) + `) IN (SELECT from_id, to_id FROM apply_edge_keys)`
	}
	// (By text, a key of no type would find every row that reads as it.)
	deleteEdges += a.unshared(cols, e.Table, table, e.Key)
	a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("edges")+` AS
SELECT `+k1+` AS from_id, `+k2+` AS to_id, `+cols.AsText("l", e.From)+` AS end_a, `+cols.AsText("l", e.To)+` AS end_b,
       `+weight+` AS weight, `+orZero("l", e.Reinforcement)+` AS reinforcement_count, `+or("l", e.Kind, "NULL")+` AS relation_type,
       `+or("l", e.Origin, "NULL")+` AS origin, `+hoursOf(or("l", e.LastActive, "NULL"), e.LastActiveClock)+` AS last_active_hours,
       `+or("l", e.LastObserved, "NULL")+` AS last_observed_at, `+orZero("l", e.Pinned)+` AS pinned, `+orZero("l", e.Excluded)+` AS excluded,
       NULL AS note, NULL AS created_at, l.`+sweepsql.Ident(e.Key[0])+` AS key_raw, `+raw2+` AS key_raw2, `+a.rowOwn(cols, "l")+`
FROM `+table+` l WHERE `+notNull+``,
		`CREATE `+a.temp()+`TRIGGER `+a.view("edges")+`_delete INSTEAD OF DELETE ON `+a.view("edges")+` BEGIN
DELETE FROM `+table+` WHERE `+where+`;
END`)
	// A sweep writes an edge only to exclude or readmit it (apply_flags).
	if e.Excluded != "" {
		a.setup = append(a.setup, `CREATE `+a.temp()+`TRIGGER `+a.view("edges")+`_update INSTEAD OF UPDATE ON `+a.view("edges")+` BEGIN
UPDATE `+table+` SET `+changed(e.Excluded, "excluded", "NEW.excluded")+` WHERE `+where+`;
END`)
	} else {
		a.setup = append(a.setup, a.nothingToWrite("edges", "UPDATE"))
	}
	if a.singleKey {
		return []string{"@SUBJECT_E", "e.from_id", "@SUBJECT", "from_id", "EDGE_NAME", "from_id", "@DELETE_EDGES", deleteEdges,
			"@KEY_A", keyA, "@KEY_B", keyB}, nil
	}
	return []string{"@SUBJECT_E", "json_array(e.from_id, e.to_id)", "@SUBJECT", "json_array(from_id, to_id)", "EDGE_NAME", sweepsql.EdgeName,
		"@DELETE_EDGES", deleteEdges, "@KEY_A", keyA, "@KEY_B", keyB}, nil
}

// facts sets up mem_map_facts (an empty view when the mapping has none).
// A part the app lacks takes its segment's default (mem_segments), as a
// fact inserted into mem_facts does.
func (a *adapted) facts(ctx context.Context, q memdb.Querier) error {
	f := a.m.Facts
	if f == nil {
		a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("facts")+` AS SELECT NULL AS id, NULL AS segment, NULL AS tier, NULL AS importance,
			NULL AS decay_rate, 0 AS access_count, NULL AS last_accessed_at, NULL AS status, NULL AS content, NULL AS created_at,
			NULL AS snapshot WHERE 0`,
			a.nothingToWrite("facts", "DELETE"), a.nothingToWrite("facts", "UPDATE"))
		return nil
	}
	cols, err := sweepsql.ReadColumns(ctx, q, f.Table)
	if err != nil {
		return err
	}
	a.factColumns, a.factCols = cols.Names, cols
	a.keyTokens = append(a.keyTokens, "@FACT_KEYS_INVALID", a.keyProblems("fact", cols, f.Table, f.Key))
	status := a.factStatus("f")
	segment := or("f", f.Segment, "NULL")
	fromSegment := func(part, col string) string {
		return `coalesce(` + or("f", col, "NULL") + `, (SELECT s.` + part + ` FROM mem_segments s WHERE s.segment = ` + segment + `))`
	}
	key, table := f.Key[0], a.table(f.Table)
	a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("facts")+` AS
SELECT `+cols.AsText("f", key)+` AS id, `+segment+` AS segment, `+fromSegment("tier", f.Tier)+` AS tier,
       `+fromSegment("importance", f.Importance)+` AS importance, `+fromSegment("decay_rate", f.DecayRate)+` AS decay_rate,
       `+orZero("f", f.AccessCount)+` AS access_count, `+or("f", f.LastAccess, "NULL")+` AS last_accessed_at, `+status+` AS status,
       NULL AS content, `+or("f", f.CreatedAt, "NULL")+` AS created_at, f.`+sweepsql.Ident(key)+` AS key_raw, `+a.rowOwn(cols, "f")+`
FROM `+table+` f WHERE f.`+sweepsql.Ident(key)+` IS NOT NULL`+a.unshared(cols, f.Table, "f", f.Key),
		`CREATE `+a.temp()+`TRIGGER `+a.view("facts")+`_delete INSTEAD OF DELETE ON `+a.view("facts")+` BEGIN
DELETE FROM `+table+` WHERE `+sweepsql.Ident(key)+` = OLD.key_raw;
END`,
		`CREATE `+a.temp()+`TRIGGER `+a.view("facts")+`_update INSTEAD OF UPDATE ON `+a.view("facts")+` BEGIN
UPDATE `+table+` SET `+strings.Join(a.factWrites(), ",\n    ")+`
WHERE `+sweepsql.Ident(key)+` = OLD.key_raw;
END`)
	return nil
}

// mappedIndexes are the indexes a mapping of numeric ids needs on the
// app's tables, so the sweep's lookups by id (read as text) stay indexed:
// CREATE INDEX IF NOT EXISTS statements, and the names they create.
func mappedIndexes(ctx context.Context, q memdb.Querier, m *mapping.Mapping) ([]string, error) {
	var out []string
	add := func(table string, col string) error {
		cols, err := sweepsql.ReadColumns(ctx, q, table)
		if err != nil {
			return err
		}
		if col == "" || col == mapping.RowID || cols.Text[strings.ToLower(col)] {
			return nil
		}
		name := fmt.Sprintf("mem_map_%d_%s_%s_text", len(table), table, col) // the length: no two tables and columns give one name
		out = append(out, `CREATE INDEX IF NOT EXISTS main.`+sweepsql.Ident(name)+` ON `+sweepsql.Ident(table)+` (CAST(`+sweepsql.Ident(col)+` AS TEXT))`)
		return nil
	}
	if n := m.Nodes; n != nil {
		if err := add(n.Table, n.Key[0]); err != nil {
			return nil, err
		}
		if n.Tags != nil && n.Tags.Table != "" {
			if err := add(n.Tags.Table, n.Tags.NodeID); err != nil {
				return nil, err
			}
		}
	}
	if e := m.Edges; e != nil {
		cols, err := sweepsql.ReadColumns(ctx, q, e.Table)
		if err != nil {
			return nil, err
		}
		indexed := []string{e.From, e.To}
		if !sweepsql.KeyTyped(cols, e.Key) { // else an edge is found by its own key (@KEY_A)
			indexed = append(indexed, e.Key...)
		}
		for _, c := range indexed {
			if err := add(e.Table, c); err != nil {
				return nil, err
			}
		}
	}
	if f := m.Facts; f != nil {
		if err := add(f.Table, f.Key[0]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// adaptMapping reads the database's mapping and, when it is not mem,
// checks it against the schema as it is now and builds its adapter (for
// a replica: main views, see adapted); nil for memworker's own tables.
func adaptMapping(ctx context.Context, db *DB, replica bool) (*adapted, error) {
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

// install creates the adapter's views and triggers on the sweep's
// connection (nothing for memworker's own tables). A policy that softly
// excludes edges, added since the mapping was checked, is refused here,
// in the sweep's transaction, before anything changes.
func (a *adapted) install(ctx context.Context, q memdb.Querier) error {
	if a == nil {
		return nil
	}
	if err := mapping.ExcludeRecorded(ctx, q, a.m); err != nil {
		return err
	}
	return a.setUp(ctx, q)
}

// setUp makes the adapter's views and triggers on q's connection (none
// for memworker's own tables).
func (a *adapted) setUp(ctx context.Context, q memdb.Querier) error {
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

// createdName finds the name of what a statement of mappedIndexes or
// captureTriggers creates.
var createdName = regexp.MustCompile(`^CREATE (?:INDEX IF NOT EXISTS main\.|TRIGGER )"((?:[^"]|"")+)"`)

// missingObjects are the statements that create what the mapping puts on
// the app's tables (indexes, change capture) and the file lacks: a mapping
// declared by an older memworker, or objects an app dropped. Without its
// change capture a sweep would miss the app's writes, so it reads every
// row and puts them back.
func (a *adapted) missingObjects(ctx context.Context, q memdb.Querier) ([]string, error) {
	if a == nil {
		return nil, nil
	}
	indexes, err := mappedIndexes(ctx, q, a.m)
	if err != nil {
		return nil, err
	}
	triggers, err := captureTriggers(ctx, q, a.m)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE name LIKE 'mem\_map\_%' ESCAPE '\'`)
	if err != nil {
		return nil, err
	}
	there := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		there[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var missing []string
	for _, stmt := range append(indexes, triggers...) {
		m := createdName.FindStringSubmatch(stmt)
		if m == nil {
			return nil, fmt.Errorf("mapping: no name in %.60s", stmt)
		}
		if !there[strings.ReplaceAll(m[1], `""`, `"`)] {
			missing = append(missing, stmt)
		}
	}
	return missing, nil
}

// hours is the sweep's hour clock through a mapping when no --now is
// given: unix time in hours for a mapping of wall times, the app's own
// active-hours clock where it keeps one; ok is false for neither (the
// clock in mem_config).
func (a *adapted) hours(ctx context.Context, q memdb.Querier, wall time.Time) (h float64, ok bool, err error) {
	switch {
	case a == nil:
		return 0, false, nil
	case a.wallHours:
		return float64(wall.Unix()) / 3600, true, nil
	case a.m.Clock != nil:
		c := a.m.Clock
		var v sql.NullFloat64
		err := q.QueryRowContext(ctx, appClockValue(c, "?"), c.ActiveHoursKey).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !v.Valid) {
			return 0, false, fmt.Errorf("mapping: clock: %s has no %s = %q row holding the active hours", c.Table, c.KeyColumn, c.ActiveHoursKey)
		}
		return v.Float64, err == nil, err
	}
	return 0, false, nil
}

// appClockValue is the query of the value of key (an SQL expression) in
// the app's own clock table, as a number.
func appClockValue(c *mapping.Clock, key string) string {
	return `SELECT CAST(` + sweepsql.Ident(c.ValueColumn) + ` AS REAL) FROM main.` + sweepsql.Ident(c.Table) + ` WHERE ` + sweepsql.Ident(c.KeyColumn) + ` = ` + key
}

// recordCurate writes the sweep's clock where the app keeps the time of
// its last sweep (elfmem's last_curate_at), in the sweep's last
// transaction.
func (a *adapted) recordCurate(ctx context.Context, q memdb.Querier, hours float64) error {
	if a == nil || a.m.Clock == nil || a.m.Clock.LastCurateKey == "" {
		return nil
	}
	c := a.m.Clock
	// One statement (a replica's transaction cannot read its own writes);
	// the key column is unique (checked with the mapping).
	_, err := q.ExecContext(ctx, `INSERT INTO `+a.table(c.Table)+` (`+sweepsql.Ident(c.KeyColumn)+`, `+sweepsql.Ident(c.ValueColumn)+`) VALUES (?, ?)
		ON CONFLICT (`+sweepsql.Ident(c.KeyColumn)+`) DO UPDATE SET `+sweepsql.Ident(c.ValueColumn)+` = excluded.`+sweepsql.Ident(c.ValueColumn),
		c.LastCurateKey, strconv.FormatFloat(hours, 'f', -1, 64))
	return err
}

// view is the name of the adapter's view of a role's rows.
func (a *adapted) view(role string) string {
	if a.replica {
		return "mem_work_map_" + role
	}
	return "mem_map_" + role
}

// qualified is the view's name with its schema, for DROP.
func (a *adapted) qualified(role string) string {
	if a.replica {
		return "main." + a.view(role)
	}
	return "temp." + a.view(role)
}

// temp is what CREATE says before VIEW or TRIGGER.
func (a *adapted) temp() string {
	if a.replica {
		return ""
	}
	return "TEMP "
}

// table names an app's table from the adapter's views and triggers: a
// main object's trigger may not name a schema.
func (a *adapted) table(name string) string {
	if a.replica {
		return sweepsql.Ident(name)
	}
	return "main." + sweepsql.Ident(name)
}

// captureTriggers are the triggers a mapping puts on the app's tables so
// a sweep reads only what changed, as memworker's own tables' triggers do
// (schema step 3): plain SQL that queues keys into mem_dirty_blocks,
// mem_dirty_edges and mem_dirty_facts, so the app's connections need no
// extension. A key is queued as text, as the sweep reads it; a NULL key
// (a row no sweep can name) as the empty text, so an app's write never
// fails on it.
// An edge the sweep removes itself is settled in its transaction and not
// queued (the sweep_removing row, as on mem_edges).
func captureTriggers(ctx context.Context, q memdb.Querier, m *mapping.Mapping) ([]string, error) {
	var out []string
	add := func(table, queue, cols string, keys func(row string) string, watched []string, extraDelete string) {
		name := func(op string) string { return sweepsql.Ident("mem_map_" + table + "_queue_" + op) }
		values := func(rows ...string) string {
			v := make([]string, len(rows))
			for i, r := range rows {
				v[i] = "(" + keys(r) + ")"
			}
			return strings.Join(v, ", ")
		}
		var of []string
		seen := map[string]bool{}
		for _, c := range watched {
			if c != "" && c != mapping.RowID && !seen[strings.ToLower(c)] {
				seen[strings.ToLower(c)] = true
				of = append(of, sweepsql.Ident(c))
			}
		}
		out = append(out,
			`CREATE TRIGGER `+name("insert")+` AFTER INSERT ON `+sweepsql.Ident(table)+` BEGIN
    INSERT INTO `+queue+` (`+cols+`) VALUES `+values("NEW")+`;
END`,
			`CREATE TRIGGER `+name("update")+` AFTER UPDATE OF `+strings.Join(of, ", ")+` ON `+sweepsql.Ident(table)+` BEGIN
    INSERT INTO `+queue+` (`+cols+`) VALUES `+values("OLD", "NEW")+`;
END`,
			`CREATE TRIGGER `+name("delete")+` AFTER DELETE ON `+sweepsql.Ident(table)+extraDelete+` BEGIN
    INSERT INTO `+queue+` (`+cols+`) VALUES `+values("OLD")+`;
END`)
	}
	text := func(table, col string) (func(row string) string, error) {
		cols, err := sweepsql.ReadColumns(ctx, q, table)
		if err != nil {
			return nil, err
		}
		return func(row string) string {
			if cols.Text[strings.ToLower(col)] {
				return "ifnull(" + row + "." + sweepsql.Ident(col) + ", '')"
			}
			return "ifnull(CAST(" + row + "." + sweepsql.Ident(col) + " AS TEXT), '')"
		}, nil
	}
	if n := m.Nodes; n != nil {
		key, err := text(n.Table, n.Key[0])
		if err != nil {
			return nil, err
		}
		watched := []string{n.Key[0], n.LastUsed, n.Category, n.Status, n.Confidence, n.Reinforcement}
		if n.Tags != nil {
			watched = append(watched, n.Tags.Column)
		}
		add(n.Table, "mem_dirty_blocks", "id", key, watched, "")
		if tg := n.Tags; tg != nil && tg.Table != "" {
			node, err := text(tg.Table, tg.NodeID)
			if err != nil {
				return nil, err
			}
			add(tg.Table, "mem_dirty_blocks", "id", node, []string{tg.NodeID, tg.Tag}, "")
		}
	}
	if e := m.Edges; e != nil {
		k1, err := text(e.Table, e.Key[0])
		if err != nil {
			return nil, err
		}
		keys := func(row string) string { return k1(row) + ", ''" }
		if len(e.Key) == 2 {
			k2, err := text(e.Table, e.Key[1])
			if err != nil {
				return nil, err
			}
			keys = func(row string) string { return k1(row) + ", " + k2(row) }
		}
		watched := append([]string{e.From, e.To, e.Kind, e.Weight, e.Reinforcement, e.Origin, e.Pinned, e.Excluded, e.LastActive, e.LastObserved}, e.Key...)
		add(e.Table, "mem_dirty_edges", "from_id, to_id", keys, watched,
			"\nWHEN NOT EXISTS (SELECT 1 FROM mem_config WHERE key = 'sweep_removing')")
	}
	if f := m.Facts; f != nil {
		key, err := text(f.Table, f.Key[0])
		if err != nil {
			return nil, err
		}
		add(f.Table, "mem_dirty_facts", "id", key,
			[]string{f.Key[0], f.Segment, f.Tier, f.Importance, f.DecayRate, f.AccessCount, f.LastAccess, f.CreatedAt, f.Status}, "")
	}
	return out, nil
}

// factStatus is the fact row alias's status as a sweep reads it: active,
// confirmed, archived or other.
func (a *adapted) factStatus(alias string) string {
	f := a.m.Facts
	st := alias + "." + sweepsql.Ident(f.Status)
	return `CASE WHEN ` + st + ` IN (` + sweepsql.SQLList(sweepsql.StatusValues(f.StatusActive, "active")) + `) THEN 'active' WHEN ` + st + ` IN (` +
		sweepsql.SQLList(sweepsql.StatusValues(f.StatusConfirmed, "confirmed")) +
		`) THEN 'confirmed' WHEN ` + st + ` = ` + sweepsql.Literal(f.StatusArchived) + ` THEN 'archived' ELSE 'other' END`
}

// statusCounts are status's queries of the app's rows: each role's rows
// by status (into blocks and facts), and the edges' count.
func (a *adapted) statusCounts(blocks, facts map[string]int) (map[string]map[string]int, string) {
	counts := map[string]map[string]int{}
	if a.m.Nodes != nil {
		counts[`SELECT `+a.nodeStatus("b")+`, count(*) FROM `+a.nodeTable()+` b GROUP BY 1`] = blocks
	}
	if a.m.Facts != nil {
		counts[`SELECT `+a.factStatus("f")+`, count(*) FROM main.`+sweepsql.Ident(a.m.Facts.Table)+` f GROUP BY 1`] = facts
	}
	edges := "SELECT 0"
	if a.m.Edges != nil {
		edges = "SELECT count(*) FROM main." + sweepsql.Ident(a.m.Edges.Table)
	}
	return counts, edges
}

// nodeTable, nodeKey and nodeKey0 name the app's node table and key
// column (quoted, and as the mapping has it).
func (a *adapted) nodeTable() string { return "main." + sweepsql.Ident(a.m.Nodes.Table) }
func (a *adapted) nodeKey() string   { return sweepsql.Ident(a.m.Nodes.Key[0]) }
func (a *adapted) nodeKey0() string  { return a.m.Nodes.Key[0] }

// nodeStatus is the node row alias's status as a sweep reads it: active,
// archived or inbox (any other value).
func (a *adapted) nodeStatus(alias string) string {
	n := a.m.Nodes
	col := alias + "." + sweepsql.Ident(n.Status)
	return `CASE WHEN ` + col + ` IN (` + sweepsql.SQLList(sweepsql.StatusValues(n.StatusActive, "active")) + `) THEN 'active' WHEN ` + col + ` = ` +
		sweepsql.Literal(n.StatusArchived) + ` THEN 'archived' ELSE 'inbox' END`
}

// nodeArchived holds for a node row alias the mapping calls archived.
func (a *adapted) nodeArchived(alias string) string {
	return alias + "." + sweepsql.Ident(a.m.Nodes.Status) + " = " + sweepsql.Literal(a.m.Nodes.StatusArchived)
}

// nothingToWrite is the trigger that lets the sweep's statements write to
// the empty view of a role the mapping does not have (SQLite refuses any
// write to a view without one, even of no rows).
func (a *adapted) nothingToWrite(role, op string) string {
	return `CREATE ` + a.temp() + `TRIGGER ` + a.view(role) + `_` + strings.ToLower(op) + ` INSTEAD OF ` + op + ` ON ` + a.view(role) +
		` BEGIN SELECT 1; END`
}

// appNames names, in a bad row's problem, the app's own table and column
// where the sweep's rules name memworker's (weight is text → links.strength
// is text); the problem as it is for memworker's own tables.
func (a *adapted) appNames(kind, problem string) string {
	if a == nil {
		return problem
	}
	var table string
	var parts [][2]string
	switch m := a.m; {
	case kind == "edge" && m.Edges != nil:
		e := m.Edges
		table = e.Table
		parts = [][2]string{{"from", e.From}, {"to", e.To}, {"weight", e.Weight}, {"reinforcement_count", e.Reinforcement}, {"relation_type", e.Kind},
			{"last_active_hours", e.LastActive}, {"last_observed_at", e.LastObserved}, {"pinned", e.Pinned}, {"excluded", e.Excluded}}
	case kind == "block" && m.Nodes != nil:
		n := m.Nodes
		table = n.Table
		parts = [][2]string{{"last_reinforced_hours", n.LastUsed}, {"confidence", n.Confidence}, {"reinforcement_count", n.Reinforcement},
			{"id", n.Key[0]}}
	case kind == "fact" && m.Facts != nil:
		f := m.Facts
		table = f.Table
		parts = [][2]string{{"importance", f.Importance}, {"decay_rate", f.DecayRate}, {"access_count", f.AccessCount},
			{"last_accessed_at", f.LastAccess}, {"created_at", f.CreatedAt}, {"tier", f.Tier}, {"id", f.Key[0]}}
	}
	for _, p := range parts {
		if rest, ok := strings.CutPrefix(problem, p[0]+" is "); ok && p[1] != "" {
			return table + "." + p[1] + " is " + rest
		}
	}
	return problem
}

// tableOf is the app's table a row of kind (block, edge or fact) is in;
// "" for memworker's own tables.
func (a *adapted) tableOf(kind string) string {
	switch m := a.mapping(); {
	case m == nil:
	case kind == "block" && m.Nodes != nil:
		return m.Nodes.Table
	case kind == "edge" && m.Edges != nil:
		return m.Edges.Table
	case kind == "fact" && m.Facts != nil:
		return m.Facts.Table
	}
	return ""
}

// mapping is the adapter's mapping, nil for memworker's own tables.
func (a *adapted) mapping() *mapping.Mapping {
	if a == nil {
		return nil
	}
	return a.m
}

// sweepConfig is mem_config with the clock a sweep through the database's
// mapping runs on (the wall clock in hours, at wall or the pinned
// wall_clock, or the app's own clock), so "a sweep is due" and "hours
// since the last sweep" read alike for status, run --when-due and the
// sweep; mapped is nil for memworker's own tables.
func sweepConfig(ctx context.Context, db *DB, wall time.Time) (cfg Config, mapped *adapted, err error) {
	if cfg, err = LoadConfig(ctx, db.SQL); err != nil {
		return cfg, nil, err
	}
	if mapped, err = adaptMapping(ctx, db, db.Rqlite); err != nil {
		return cfg, nil, err
	}
	clock, err := settings.CommandClock(cfg, wall) // a pinned wall_clock wins over wall
	if err != nil {
		return cfg, nil, err
	}
	if h, ok, err := mapped.hours(ctx, db.SQL, clock.Wall); err != nil {
		return cfg, nil, err
	} else if ok {
		cfg.ActiveHours = h
	}
	return cfg, mapped, nil
}

// throughMapping runs read with the tables named as the database's mapping
// names them: memworker's own, or the app's through the adapter's temp
// views, made on the connection read is given and dropped after (on a
// file; on rqlite, which keeps no temp view across requests, read's
// queries carry the views as common table expressions: readOnly).
func throughMapping(ctx context.Context, db *DB, read func(q memdb.Querier, tables *sweepsql.Dialect) error) error {
	a, err := adaptMapping(ctx, db, false)
	if err != nil || a == nil {
		if err != nil {
			return err
		}
		return read(db.SQL, sweepsql.MemTables)
	}
	return a.readThrough(ctx, db, nil, nil, func(q memdb.Querier) error { return read(q, a.tables) })
}

// factWrites are the SET clauses of the facts view's UPDATE trigger: the
// status a sweep archives by, and what fact feedback writes (importance,
// access count, time of last access, each where the app has the column;
// the time in the column's own form).
// factUpdate is fact feedback's change written to the app's facts table
// itself, not through the view's trigger (on rqlite, which keeps no
// view's trigger across requests): importance :after, and when reset the
// access count up by one and the time of last access :now (unix seconds)
// in the column's own form, on the row of key :id; the caller appends its
// condition (AND …).
func (a *adapted) factUpdate(reset bool) string {
	f := a.m.Facts
	var set []string
	if f.Importance != "" {
		set = append(set, sweepsql.Ident(f.Importance)+` = :after`)
	}
	if reset && f.AccessCount != "" {
		set = append(set, sweepsql.Ident(f.AccessCount)+` = coalesce(`+sweepsql.Ident(f.AccessCount)+`, 0) + 1`)
	}
	if reset && f.LastAccess != "" {
		set = append(set, sweepsql.Ident(f.LastAccess)+` = `+timeFrom(":now / 3600.0", sweepsql.Ident(f.LastAccess), f.LastAccessClock))
	}
	if len(set) == 0 { // a recall with nothing to write: the event alone
		set = append(set, sweepsql.Ident(f.Key[0])+` = `+sweepsql.Ident(f.Key[0]))
	}
	return `UPDATE ` + a.table(f.Table) + ` SET ` + strings.Join(set, ", ") + ` WHERE ` + a.factCols.ByText("", f.Key[0]) + ` = :id`
}

func (a *adapted) factWrites() []string {
	f := a.m.Facts
	set := []string{statusWrite(f.Status, f.StatusArchived, sweepsql.StatusValues(f.StatusActive, "active")[0])}
	if f.Importance != "" {
		set = append(set, changed(f.Importance, "importance", "NEW.importance"))
	}
	if f.AccessCount != "" {
		set = append(set, changed(f.AccessCount, "access_count", "NEW.access_count"))
	}
	if f.LastAccess != "" {
		set = append(set, changed(f.LastAccess, "last_accessed_at", timeFrom("NEW.last_accessed_at / 3600.0", sweepsql.Ident(f.LastAccess), f.LastAccessClock)))
	}
	return set
}
