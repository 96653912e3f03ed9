package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Some migrations rebuild a table to change how SQLite stores it (0006:
// mem_edges without a rowid). Plain SQL can carry over only the columns,
// indexes and triggers memdecay made, so around every migration run:
//   - a column an app added to a table a pending step rebuilds is refused
//     before anything changes (its values would be lost);
//   - the app's own indexes and triggers on such a table are read first
//     and re-created afterwards, when the rebuild dropped them.

// rebuilt names, per migration version, the table its up and down steps
// rebuild, and the columns memdecay gives it.
var rebuilt = map[uint]struct {
	table   string
	columns []string
}{
	6: {"mem_edges", []string{"from_id", "to_id", "weight", "reinforcement_count", "relation_type", "origin",
		"last_active_hours", "last_observed_at", "pinned", "note", "created_at", "excluded"}},
}

// appObject is an index or trigger an app made on a table a step rebuilds.
type appObject struct{ table, name, sql string }

// guardRebuilds checks the tables the steps from version from to version to
// rebuild, and returns what to re-create once they have run.
func guardRebuilds(ctx context.Context, conn *sql.Conn, from, to uint) ([]appObject, error) {
	lo, hi := min(from, to), max(from, to)
	var saved []appObject
	for v, r := range rebuilt {
		if v <= lo || v > hi {
			continue
		}
		cols, err := columnsOf(ctx, conn, r.table)
		if err != nil {
			return nil, err
		}
		if extra := notIn(cols, r.columns); len(extra) > 0 {
			return nil, fmt.Errorf("schema: migration %d rebuilds %s, which has columns memdecay does not know (%s): "+
				"their values would be lost; move them to a table of your own keyed like %s, then migrate%s",
				v, r.table, strings.Join(extra, ", "), r.table, nothingChanged)
		}
		objs, err := appObjects(ctx, conn, r.table)
		if err != nil {
			return nil, err
		}
		saved = append(saved, objs...)
	}
	return saved, nil
}

// recreate re-creates the saved objects the rebuild dropped (none when the
// table itself is gone: migrated all the way down).
func recreate(ctx context.Context, conn *sql.Conn, saved []appObject) error {
	for _, o := range saved {
		var skip bool
		err := conn.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)
			OR EXISTS (SELECT 1 FROM sqlite_master WHERE name = ?)`, o.table, o.name).Scan(&skip)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		if _, err := conn.ExecContext(ctx, o.sql); err != nil {
			return fmt.Errorf("schema: re-creating %s after the rebuild: %w (its SQL: %s)", o.name, err, o.sql)
		}
	}
	return nil
}

func columnsOf(ctx context.Context, conn *sql.Conn, table string) ([]string, error) {
	return texts(ctx, conn, `SELECT name FROM pragma_table_info(?)`, table)
}

// texts is the one column of query's rows.
func texts(ctx context.Context, conn *sql.Conn, query string, args ...any) ([]string, error) {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// appObjects lists the indexes and triggers on table not made by memdecay
// (whose names all start with mem_) nor by SQLite itself (no SQL).
func appObjects(ctx context.Context, conn *sql.Conn, table string) ([]appObject, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name, sql FROM sqlite_master
		WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL AND name NOT LIKE 'mem\_%' ESCAPE '\'
		ORDER BY type, name`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var objs []appObject
	for rows.Next() {
		o := appObject{table: table}
		if err := rows.Scan(&o.name, &o.sql); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, rows.Err()
}

func notIn(have, known []string) []string {
	var extra []string
	for _, c := range have {
		found := false
		for _, k := range known {
			found = found || strings.EqualFold(c, k)
		}
		if !found {
			extra = append(extra, c)
		}
	}
	return extra
}
