package sweepsql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/mapping"
)

// ColumnInfo is what the adapter needs of a table's columns: their names in
// order and whether each compares as text.
type ColumnInfo struct {
	Names []string
	Text  map[string]bool
	// untyped: columns of no affinity, which compare a text id with the
	// integer they hold as different values.
	untyped map[string]bool
	// Nullable: columns that may hold NULL (no NOT NULL, not a rowid's
	// alias).
	Nullable map[string]bool
	// Defaults: the SQL default of each NOT NULL column that has one (a
	// restored row takes it where its archive holds NULL).
	Defaults map[string]string
}

func ReadColumns(ctx context.Context, q memdb.Querier, table string) (ColumnInfo, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, "notnull", pk, (SELECT count(*) FROM pragma_table_xinfo(?1) WHERE pk > 0), dflt_value
		FROM pragma_table_xinfo(?1) WHERE hidden = 0 ORDER BY cid`, table)
	if err != nil {
		return ColumnInfo{}, fmt.Errorf("mapping: reading the columns of %s: %w", table, err)
	}
	defer rows.Close()
	info := ColumnInfo{Text: map[string]bool{}, untyped: map[string]bool{}, Nullable: map[string]bool{}, Defaults: map[string]string{}}
	for rows.Next() {
		var name, declared string
		var notNull bool
		var pk, pks int
		var def sql.NullString
		if err := rows.Scan(&name, &declared, &notNull, &pk, &pks, &def); err != nil {
			return ColumnInfo{}, err
		}
		if notNull && def.Valid {
			info.Defaults[strings.ToLower(name)] = def.String
		}
		info.Names = append(info.Names, name)
		info.Text[strings.ToLower(name)] = mapping.Affinity(declared) == "TEXT"
		info.untyped[strings.ToLower(name)] = mapping.Affinity(declared) == "BLOB"
		rowidAlias := pk == 1 && pks == 1 && strings.EqualFold(declared, "INTEGER")
		info.Nullable[strings.ToLower(name)] = !notNull && !rowidAlias
	}
	return info, rows.Err()
}

// AsText is a column of alias read as text: itself when it holds text,
// else CAST to text (an index on the same expression keeps it indexed).
func (c ColumnInfo) AsText(alias, col string) string {
	name := Ident(col)
	if alias != "" {
		name = alias + "." + name
	}
	if c.Text[strings.ToLower(col)] {
		return name
	}
	return "CAST(" + name + " AS TEXT)"
}

// ByText is the column col of alias to compare with an id as memworker's
// tables hold it (text): the column itself where SQLite converts the text
// to the column's own type (a TEXT, INTEGER, REAL or NUMERIC column, so the
// table's own key finds the row), else as text (asText).
func (c ColumnInfo) ByText(alias, col string) string {
	if !c.untyped[strings.ToLower(col)] {
		if alias == "" {
			return Ident(col)
		}
		return alias + "." + Ident(col)
	}
	return c.AsText(alias, col)
}

// RowColumn is the name under which a view shows the app row's own
// column c, as it is, for its archive.
func RowColumn(c string) string { return "row." + c }

// Rows are the app row's own columns of alias, each as it is under its
// rowColumn name.
func (c ColumnInfo) Rows(alias string) string {
	fields := make([]string, len(c.Names))
	for i, n := range c.Names {
		fields[i] = alias + "." + Ident(n) + " AS " + Ident(RowColumn(n))
	}
	return strings.Join(fields, ", ")
}

// KeyTyped is true when every column of an edge key has a type that
// converts text compared with it (TEXT, INTEGER, REAL or NUMERIC): the
// key found by its text through the table's own index (byText).
func KeyTyped(cols ColumnInfo, key []string) bool {
	for _, k := range key {
		if cols.untyped[strings.ToLower(k)] {
			return false
		}
	}
	return true
}

// Snapshot is the JSON of every column of the app's row alias.
func (c ColumnInfo) Snapshot(alias string) string {
	fields := make([]string, len(c.Names))
	for i, n := range c.Names {
		fields[i] = Literal(n) + ", " + snapshotValue(alias+"."+Ident(n))
	}
	return "json_object(" + strings.Join(fields, ", ") + ")"
}
