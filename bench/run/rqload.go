package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/memdecay/memdecay/internal/rqcluster"
)

// loadRequestBytes bounds one request of loadRows: a 1M-edge graph does
// not go through one /db/load (one Raft entry of about 160 MB, which the
// followers of a busy 2-core machine do not take within Raft's timeouts:
// the leader loses its quorum and steps down, again and again).
const loadRequestBytes = 4 << 20

// loadRowsPerStatement is the rows of one multi-row INSERT.
const loadRowsPerStatement = 2000

// loadRows copies the SQLite file at path into the cluster through
// /db/execute, in requests of about loadRequestBytes: the tables, their
// rows in storage order (as SQL literals, so every value keeps its type
// and every REAL its exact value), then the indexes, views and triggers
// (after the rows, so the triggers do not queue them). Rows are inserted
// OR REPLACE, so a request sent again after an election changes nothing.
// The result is compact, as after a VACUUM.
func loadRows(ctx context.Context, c *rqcluster.Cluster, path string) error {
	db, err := openDB(path, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	type object struct{ typ, name, sql string }
	rows, err := db.QueryContext(ctx, `SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return err
	}
	var tables, later []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.typ, &o.name, &o.sql); err != nil {
			rows.Close()
			return err
		}
		switch {
		case o.name == "sqlite_sequence":
		case strings.HasPrefix(o.name, "sqlite_"):
			rows.Close()
			return fmt.Errorf("%s: cannot copy %s", path, o.name)
		case o.typ == "table":
			tables = append(tables, o)
		default:
			later = append(later, o)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	send := &loadBatch{ctx: ctx, c: c}
	for _, t := range tables {
		send.add(t.sql)
	}
	for _, t := range tables {
		if err := copyTable(ctx, db, t.name, send); err != nil {
			return fmt.Errorf("copying %s: %w", t.name, err)
		}
	}
	for _, o := range later {
		send.add(o.sql)
	}
	// AUTOINCREMENT counters can be ahead of the rows (rows deleted).
	var seqs int
	db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'`).Scan(&seqs)
	if seqs > 0 {
		if err := copyRows(ctx, db, `SELECT 'UPDATE sqlite_sequence SET seq = ' || seq || ' WHERE name = ' || quote(name) FROM sqlite_sequence`,
			func(stmt string) { send.add(stmt) }); err != nil {
			return err
		}
	}
	return send.flush()
}

// copyTable adds a table's rows to send as multi-row INSERTs, with their
// rowids unless the table has none.
func copyTable(ctx context.Context, db *sql.DB, table string, send *loadBatch) error {
	q := quoteIdent(table)
	cols, err := columns(ctx, db, table)
	if err != nil {
		return err
	}
	names, values := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		names[i], values[i] = quoteIdent(c), "quote("+quoteIdent(c)+")"
	}
	if _, err := db.ExecContext(ctx, `SELECT rowid FROM `+q+` LIMIT 0`); err == nil {
		names, values = append([]string{"rowid"}, names...), append([]string{"rowid"}, values...)
	}
	head := "INSERT OR REPLACE INTO " + q + " (" + strings.Join(names, ", ") + ") VALUES "
	var stmt strings.Builder
	n := 0
	flush := func() {
		if n > 0 {
			send.add(stmt.String())
			stmt.Reset()
			n = 0
		}
	}
	err = copyRows(ctx, db, `SELECT '(' || `+strings.Join(values, ` || ', ' || `)+` || ')' FROM `+q, func(row string) {
		if n == 0 {
			stmt.WriteString(head)
		} else {
			stmt.WriteString(", ")
		}
		stmt.WriteString(row)
		n++
		if n == loadRowsPerStatement || stmt.Len() >= loadRequestBytes/2 {
			flush()
		}
	})
	flush()
	return err
}

// copyRows calls f with each row of a query of one text column.
func copyRows(ctx context.Context, db *sql.DB, query string, f func(string)) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		f(s)
	}
	return rows.Err()
}

func columns(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT * FROM `+quoteIdent(table)+` LIMIT 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return rows.Columns()
}

func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// loadBatch collects statements and sends them through the leader's
// /db/execute, in one transaction per request of about loadRequestBytes.
type loadBatch struct {
	ctx   context.Context
	c     *rqcluster.Cluster
	stmts []string
	size  int
	err   error
}

func (b *loadBatch) add(stmt string) {
	if b.err != nil {
		return
	}
	if b.size+len(stmt) > loadRequestBytes && len(b.stmts) > 0 {
		b.err = b.flush()
	}
	b.stmts = append(b.stmts, stmt)
	b.size += len(stmt)
}

func (b *loadBatch) flush() error {
	if b.err != nil || len(b.stmts) == 0 {
		return b.err
	}
	stmts := b.stmts
	b.stmts, b.size = nil, 0
	return untilLeader(b.ctx, b.c, func(l *rqcluster.Node) error { return executeTx(b.ctx, l.URL, stmts) })
}
