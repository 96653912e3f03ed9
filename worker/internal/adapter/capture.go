package adapter

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

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

// createdName finds the name of what a statement of mappedIndexes or
// captureTriggers creates.
var createdName = regexp.MustCompile(`^CREATE (?:INDEX IF NOT EXISTS main\.|TRIGGER )"((?:[^"]|"")+)"`)

// MissingObjects are the statements that create what the mapping puts on
// the app's tables (indexes, change capture) and the file lacks: a mapping
// declared by an older memworker, or objects an app dropped. Without its
// change capture a sweep would miss the app's writes, so it reads every
// row and puts them back.
func (a *Adapted) MissingObjects(ctx context.Context, q memdb.Querier) ([]string, error) {
	if a == nil {
		return nil, nil
	}
	indexes, err := mappedIndexes(ctx, q, a.Map)
	if err != nil {
		return nil, err
	}
	triggers, err := captureTriggers(ctx, q, a.Map)
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

// queueTrigger names the trigger that queues a change (op: insert, update
// or delete) of a mapped table's rows.
func queueTrigger(table, op string) string { return "mem_map_" + table + "_queue_" + op }

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
	add := func(table, queue, cols string, keys func(row string) string, watched []string, extraDelete, extraUpdate string) {
		name := func(op string) string { return sweepsql.Ident(queueTrigger(table, op)) }
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
    INSERT INTO `+queue+` (`+cols+`) VALUES `+values("OLD", "NEW")+`;`+extraUpdate+`
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
		watched := []string{n.Key[0], n.LastUsed, n.Category, n.Status, n.Confidence, n.Reinforcement, n.Pinned}
		if n.Tags != nil {
			watched = append(watched, n.Tags.Column)
		}
		add(n.Table, "mem_dirty_blocks", "id", key, watched, "", accessCapture(n, key))
		if tg := n.Tags; tg != nil && tg.Table != "" {
			node, err := text(tg.Table, tg.NodeID)
			if err != nil {
				return nil, err
			}
			add(tg.Table, "mem_dirty_blocks", "id", node, []string{tg.NodeID, tg.Tag}, "", "")
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
			"\nWHEN NOT EXISTS (SELECT 1 FROM mem_config WHERE key = 'sweep_removing')", "")
	}
	if f := m.Facts; f != nil {
		key, err := text(f.Table, f.Key[0])
		if err != nil {
			return nil, err
		}
		add(f.Table, "mem_dirty_facts", "id", key,
			[]string{f.Key[0], f.Segment, f.Tier, f.Importance, f.DecayRate, f.AccessCount, f.LastAccess, f.CreatedAt, f.Status}, "", "")
	}
	return out, nil
}
