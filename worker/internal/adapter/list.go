package adapter

import "strings"

// ListedTable is the table a row of kind (block, edge or fact) is in, as
// a dry run's list names it: the app's own through a mapping, else
// memworker's.
func (a *Adapted) ListedTable(kind string) string {
	if t := a.TableOf(kind); t != "" {
		return t
	}
	return map[string]string{"block": "mem_blocks", "edge": "mem_edges", "fact": "mem_facts"}[kind]
}

// ListedKey is the key of a row of kind read through alias (memworker's
// table, or the adapter's view of the app's) as its table holds it: SQL
// for the JSON array of its values, and the names of its columns.
// memworker's own tables key a block and a fact by id, an edge by its
// ends; through a mapping the view keeps the app's key as it is
// (key_raw, key_raw2).
func (a *Adapted) ListedKey(kind, alias string) (values string, columns []string) {
	var cols []string
	switch m := a.mapping(); {
	case m == nil && kind == "edge":
		return jsonKey(alias, "from_id", "to_id"), []string{"from_id", "to_id"}
	case m == nil:
		return jsonKey(alias, "id"), []string{"id"}
	case kind == "block" && m.Nodes != nil:
		cols = m.Nodes.Key
	case kind == "edge" && m.Edges != nil:
		cols = m.Edges.Key
	case kind == "fact" && m.Facts != nil:
		cols = m.Facts.Key
	default:
		return "NULL", nil
	}
	raw := []string{"key_raw", "key_raw2"}[:min(len(cols), 2)] // the views keep two
	return jsonKey(alias, raw...), cols
}

// jsonKey is the JSON array of alias's columns (a blob as its SQL
// literal, which JSON cannot hold).
func jsonKey(alias string, cols ...string) string {
	vals := make([]string, len(cols))
	for i, c := range cols {
		v := alias + "." + c
		vals[i] = "CASE typeof(" + v + ") WHEN 'blob' THEN quote(" + v + ") ELSE " + v + " END"
	}
	return "json_array(" + strings.Join(vals, ", ") + ")"
}
