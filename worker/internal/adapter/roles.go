package adapter

import (
	"context"
	"strconv"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// rowOwn is the app row's own columns a view of alias shows, for a
// removal's archive: its JSON snapshot, and each column as it is. The
// readers' views need none, and without them outlive the app's changes to
// its other columns.
func (a *Adapted) rowOwn(cols sweepsql.ColumnInfo, alias string) string {
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

// EdgeWeight is an edge's weight: its column (as column reads it), or
// the mapping's constant, or 1.0.
func EdgeWeight(e *mapping.Edges, column func(col string) string) string {
	switch {
	case e.Weight != "":
		return column(e.Weight)
	case e.WeightConstant != nil:
		return strconv.FormatFloat(*e.WeightConstant, 'g', -1, 64)
	}
	return "1.0"
}

// nodePinned is whether a node row n is pinned (its pinned column holds a
// value other than 0 or NULL), 0 without such a column.
func nodePinned(col string) string {
	if col == "" {
		return "0"
	}
	return "(coalesce(n." + sweepsql.Ident(col) + ", 0) NOT IN (0, '0'))"
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

// nodes sets up mem_map_blocks and mem_map_block_tags (empty views when
// the mapping has no nodes).
func (a *Adapted) nodes(ctx context.Context, q memdb.Querier) error {
	n := a.Map.Nodes
	if n == nil {
		a.setup = append(a.setup,
			`CREATE `+a.temp()+`VIEW `+a.view("blocks")+` AS SELECT NULL AS id, NULL AS category, NULL AS status, NULL AS archive_reason,
			NULL AS confidence, 0 AS reinforcement_count, NULL AS last_reinforced_hours, 0 AS pinned, NULL AS snapshot WHERE 0`,
			`CREATE `+a.temp()+`VIEW `+a.view("block_tags")+` AS SELECT NULL AS block_id, NULL AS tag WHERE 0`)
		a.setup = append(a.setup, a.nothingToWrite("blocks", "UPDATE"), a.nothingToWrite("block_tags", "DELETE"))
		return nil
	}
	cols, err := sweepsql.ReadColumns(ctx, q, n.Table)
	if err != nil {
		return err
	}
	a.NodeCols = cols
	active := sweepsql.StatusValues(n.StatusActive, "active")
	status := a.NodeStatus("n")
	key, table := n.Key[0], a.table(n.Table)
	a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("blocks")+` AS
SELECT `+cols.AsText("n", key)+` AS id, `+or("n", n.Category, "NULL")+` AS category, `+status+` AS status,
       `+or("n", n.ArchiveReason, "NULL")+` AS archive_reason, `+or("n", n.Confidence, "NULL")+` AS confidence,
       `+orZero("n", n.Reinforcement)+` AS reinforcement_count,
       `+hoursOf(or("n", n.LastUsed, "NULL"), n.LastUsedClock)+` AS last_reinforced_hours,
       `+nodePinned(n.Pinned)+` AS pinned, n.`+sweepsql.Ident(key)+` AS key_raw, `+a.rowOwn(cols, "n")+`
FROM `+table+` n WHERE n.`+sweepsql.Ident(key)+` IS NOT NULL`+a.unshared(cols, n.Table, "n", n.Key))
	a.keyTokens = append(a.keyTokens, "@BLOCK_KEYS_INVALID", a.keyProblems("block", cols, n.Table, n.Key))
	set := []string{statusWrite(n.Status, n.StatusArchived, active[0])}
	// The parts the app lets a sweep write (nodes.writes), where it has them.
	if n.ArchiveReason != "" && n.MayWrite(mapping.WriteArchiveReason) {
		set = append(set, changed(n.ArchiveReason, "archive_reason", "NEW.archive_reason"))
	}
	if n.Reinforcement != "" && n.MayWrite(mapping.WriteReinforcement) {
		set = append(set, changed(n.Reinforcement, "reinforcement_count", "NEW.reinforcement_count"))
	}
	if n.LastUsed != "" && n.MayWrite(mapping.WriteLastUsed) {
		if a.lastUsedForm, err = a.textTimeForm(ctx, q, n.Table, n.LastUsed, n.LastUsedClock); err != nil {
			return err
		}
		set = append(set, changed(n.LastUsed, "last_reinforced_hours",
			timeLike("NEW.last_reinforced_hours", sweepsql.Ident(n.LastUsed), a.lastUsedForm, n.LastUsedClock)))
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
func (a *Adapted) dependents(ctx context.Context, q memdb.Querier) ([]string, error) {
	if a.Map.Nodes == nil || len(a.Map.Nodes.Dependents) == 0 {
		return sweepsql.NoDependents, nil
	}
	var arms, deletes []string
	for _, d := range a.Map.Nodes.Dependents {
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
func (a *Adapted) edges(ctx context.Context, q memdb.Querier) ([]string, error) {
	e := a.Map.Edges
	if e == nil {
		a.setup = append(a.setup, `CREATE `+a.temp()+`VIEW `+a.view("edges")+` AS SELECT '' AS from_id, '' AS to_id, NULL AS end_a, NULL AS end_b,
			1.0 AS weight, 0 AS reinforcement_count, NULL AS relation_type, NULL AS origin, NULL AS last_active_hours,
			NULL AS last_observed_at, 0 AS pinned, 0 AS excluded, NULL AS note, NULL AS created_at, NULL AS snapshot WHERE 0`,
			a.nothingToWrite("edges", "DELETE"), a.nothingToWrite("edges", "UPDATE"))
		a.SingleKey = true
		return []string{"@SUBJECT_E", "e.from_id", "@SUBJECT", "from_id", "EDGE_NAME", "from_id", "@DELETE_EDGES", "SELECT 0",
			"@KEY_A", "from_id", "@KEY_B", "to_id", "@QUIET_EDGE_TABLE", "''", "@QUIET_EDGE_TRIGGERS", "''"}, nil
	}
	cols, err := sweepsql.ReadColumns(ctx, q, e.Table)
	if err != nil {
		return nil, err
	}
	a.EdgeColumns, a.EdgeCols = cols.Names, cols
	table := a.table(e.Table)
	weight := EdgeWeight(e, func(col string) string { return "l." + sweepsql.Ident(col) })
	k1, k2, raw2, where := cols.AsText("l", e.Key[0]), "''", "''", sweepsql.Ident(e.Key[0])+" = OLD.key_raw"
	if len(e.Key) == 2 {
		k2, raw2 = cols.AsText("l", e.Key[1]), "l."+sweepsql.Ident(e.Key[1])
		where += " AND " + sweepsql.Ident(e.Key[1]) + " = OLD.key_raw2"
	}
	a.SingleKey = len(e.Key) == 1
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
	if !a.SingleKey {
		notNull += " AND l." + sweepsql.Ident(e.Key[1]) + " IS NOT NULL"
	}
	notNull += a.unshared(cols, e.Table, "l", e.Key)
	a.keyTokens = append(a.keyTokens, "@EDGE_KEYS_INVALID", a.keyProblems("edge", cols, e.Table, e.Key))
	// The sweep's removals go to the app's table itself, by its key: a
	// view's trigger would run a program per row, and the view's key read
	// as text would find each row through an index on CAST(id AS TEXT)
	// rather than the table's own key.
	deleteEdges := `DELETE FROM ` + table + ` WHERE ` + cols.ByText("", e.Key[0]) + ` IN (SELECT from_id FROM apply_edge_keys)`
	if !a.SingleKey {
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
	// Memworker's own triggers on the table: the removals may run with
	// the connection's triggers off while no other is there (quiet_triggers).
	quiet := []string{"@QUIET_EDGE_TABLE", sweepsql.Literal(e.Table), "@QUIET_EDGE_TRIGGERS", sweepsql.Literal(queueTrigger(e.Table, "insert")) + ", " +
		sweepsql.Literal(queueTrigger(e.Table, "update")) + ", " + sweepsql.Literal(queueTrigger(e.Table, "delete"))}
	if a.SingleKey {
		return append([]string{"@SUBJECT_E", "e.from_id", "@SUBJECT", "from_id", "EDGE_NAME", "from_id", "@DELETE_EDGES", deleteEdges,
			"@KEY_A", keyA, "@KEY_B", keyB}, quiet...), nil
	}
	return append([]string{"@SUBJECT_E", "json_array(e.from_id, e.to_id)", "@SUBJECT", "json_array(from_id, to_id)", "EDGE_NAME", sweepsql.EdgeName,
		"@DELETE_EDGES", deleteEdges, "@KEY_A", keyA, "@KEY_B", keyB}, quiet...), nil
}

// facts sets up mem_map_facts (an empty view when the mapping has none).
// A part the app lacks takes its segment's default (mem_segments), as a
// fact inserted into mem_facts does.
func (a *Adapted) facts(ctx context.Context, q memdb.Querier) error {
	f := a.Map.Facts
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
	if f.LastAccess != "" {
		if a.lastAccessForm, err = a.textTimeForm(ctx, q, f.Table, f.LastAccess, f.LastAccessClock); err != nil {
			return err
		}
	}
	a.FactColumns, a.FactCols = cols.Names, cols
	a.keyTokens = append(a.keyTokens, "@FACT_KEYS_INVALID", a.keyProblems("fact", cols, f.Table, f.Key))
	status := a.FactStatus("f")
	segment := mapping.MappedValues(or("f", f.Segment, "NULL"), f.SegmentMap)
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

func (a *Adapted) factWrites() []string {
	f := a.Map.Facts
	set := []string{statusWrite(f.Status, f.StatusArchived, sweepsql.StatusValues(f.StatusActive, "active")[0])}
	if f.Importance != "" {
		set = append(set, changed(f.Importance, "importance", "NEW.importance"))
	}
	if f.AccessCount != "" {
		set = append(set, changed(f.AccessCount, "access_count", "NEW.access_count"))
	}
	if f.LastAccess != "" {
		set = append(set, changed(f.LastAccess, "last_accessed_at",
			timeLike("NEW.last_accessed_at / 3600.0", sweepsql.Ident(f.LastAccess), a.lastAccessForm, f.LastAccessClock)))
	}
	return set
}
