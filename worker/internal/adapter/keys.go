package adapter

import (
	"fmt"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

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
func (a *Adapted) unshared(cols sweepsql.ColumnInfo, table, outer string, key []string) string {
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
func (a *Adapted) keyProblems(kind string, cols sweepsql.ColumnInfo, table string, key []string) string {
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
