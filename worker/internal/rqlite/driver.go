package rqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rqlite/gorqlite"
)

// rqlite is the distributed SQLite engine memdecay runs on when one machine
// is not enough (Raft-replicated, an HTTP API). This file is a small
// database/sql driver over gorqlite, so the worker's queries and reports
// run unchanged against a node; rqstore.go runs the sweep on it.
//
// rqlite has no transaction that spans requests: a write transaction here
// collects its statements and sends them at COMMIT as one request, which
// rqlite applies atomically on every replica. A read inside a transaction
// that has written is refused (it could not see those writes), rather than
// answered wrongly.

// DriverName is the database/sql name of the driver.
const DriverName = "memdecay-rqlite"

func init() { sql.Register(DriverName, rqliteDriver{}) }

type rqliteDriver struct{}

func (rqliteDriver) Open(name string) (driver.Conn, error) {
	conn, err := gorqlite.OpenWithClient(name, rqliteHTTP)
	if err != nil {
		return nil, fmt.Errorf("rqlite: %s", rqliteMessage(err))
	}
	return &rqConn{conn: conn}, nil
}

// rqConn is one connection: gorqlite follows the leader; pending holds the
// writes of the transaction under way, savepoints the places in it that a
// ROLLBACK TO goes back to.
type rqConn struct {
	conn       *gorqlite.Connection
	inTx       bool
	pending    []gorqlite.ParameterizedStatement
	savepoints []savepoint
	// trials: the transaction's writes are tried as they are collected
	// (SetTrials).
	trials bool
	// committed: rows changed by each statement of the last committed
	// transaction.
	committed []int64
}

var (
	errReadAfterWrite = errors.New("rqlite: a read after a write in one transaction cannot see that write (rqlite has no transaction across requests)")
	errPendingResult  = errors.New("rqlite: a statement's result inside a transaction is known only after COMMIT")
)

func (c *rqConn) Prepare(query string) (driver.Stmt, error) {
	return nil, fmt.Errorf("rqlite: prepared statements are not supported")
}

func (c *rqConn) Close() error { c.conn.Close(); return nil }

func (c *rqConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *rqConn) BeginTx(ctx context.Context, _ driver.TxOptions) (driver.Tx, error) {
	if c.inTx {
		return nil, errors.New("rqlite: a transaction is already open")
	}
	c.inTx, c.pending, c.savepoints = true, nil, nil
	return rqTx{c}, nil
}

type rqTx struct{ c *rqConn }

func (t rqTx) Commit() error   { return t.c.commit(context.Background()) }
func (t rqTx) Rollback() error { t.c.rollback(); return nil }

func (c *rqConn) rollback() { c.inTx, c.pending, c.savepoints = false, nil, nil }

// commit sends the transaction's writes as one atomic request.
func (c *rqConn) commit(ctx context.Context) error {
	stmts := c.pending
	c.rollback()
	c.committed = nil
	if len(stmts) == 0 {
		return nil
	}
	results, err := request(ctx, c, true, func(ctx context.Context) ([]gorqlite.WriteResult, error) {
		return c.conn.WriteParameterizedContext(ctx, stmts)
	})
	for _, r := range results {
		c.committed = append(c.committed, r.RowsAffected)
	}
	return rqliteError(err, stmts, failedAt(results, func(r gorqlite.WriteResult) error { return r.Err }))
}

// CheckNamedValue converts as database/sql does, refusing what JSON cannot
// carry.
func (c *rqConn) CheckNamedValue(v *driver.NamedValue) error {
	val, err := driver.DefaultParameterConverter.ConvertValue(v.Value)
	if err != nil {
		return err
	}
	v.Value = val
	if f, ok := v.Value.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return fmt.Errorf("rqlite: %v cannot be sent as a parameter (JSON has no such number)", f)
	}
	return nil
}

// ExecContext writes, or collects the write inside a transaction. BEGIN,
// COMMIT and ROLLBACK open and close the collecting transaction.
func (c *rqConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	switch strings.ToUpper(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";"))) {
	case "BEGIN", "BEGIN IMMEDIATE", "BEGIN DEFERRED", "BEGIN EXCLUSIVE":
		_, err := c.BeginTx(ctx, driver.TxOptions{})
		return driver.ResultNoRows, err
	case "COMMIT", "END":
		return driver.ResultNoRows, c.commit(ctx)
	case "ROLLBACK":
		c.rollback()
		return driver.ResultNoRows, nil
	}
	if m := savepointSQL.FindStringSubmatch(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";"))); m != nil {
		return driver.ResultNoRows, c.savepoint(ctx, strings.ToUpper(m[1]), m[2])
	}
	stmt, err := statement(query, args)
	if err != nil {
		return nil, err
	}
	if c.inTx {
		c.pending = append(c.pending, stmt)
		return pendingResult{}, nil
	}
	// A PRAGMA that sets a connection's state (foreign_keys) is a no-op
	// inside a transaction, and gorqlite wraps every write in one: it goes
	// alone, without.
	pragma := strings.HasPrefix(strings.ToUpper(strings.TrimSpace(query)), "PRAGMA")
	if pragma {
		c.conn.SetExecutionWithTransaction(false)
		defer c.conn.SetExecutionWithTransaction(true)
	}
	results, err := request(ctx, c, true, func(ctx context.Context) ([]gorqlite.WriteResult, error) {
		return c.conn.WriteParameterizedContext(ctx, []gorqlite.ParameterizedStatement{stmt})
	})
	if err != nil {
		return nil, rqliteError(err, []gorqlite.ParameterizedStatement{stmt}, 0)
	}
	if len(results) == 0 {
		return driver.ResultNoRows, nil
	}
	return rqResult{id: results[0].LastInsertID, rows: results[0].RowsAffected}, nil
}

type pendingResult struct{}

func (pendingResult) LastInsertId() (int64, error) { return 0, errPendingResult }
func (pendingResult) RowsAffected() (int64, error) { return 0, errPendingResult }

type rqResult struct{ id, rows int64 }

func (r rqResult) LastInsertId() (int64, error) { return r.id, nil }
func (r rqResult) RowsAffected() (int64, error) { return r.rows, nil }

// QueryContext reads at the leader; inside a transaction that has written
// and tries its writes (SetTrials), after them.
func (c *rqConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.inTx && len(c.pending) > 0 && !c.trials {
		return nil, errReadAfterWrite
	}
	stmt, err := statement(query, args)
	if err != nil {
		return nil, err
	}
	if c.inTx && len(c.pending) > 0 {
		if writes(query) {
			return nil, errPendingResult
		}
		qr, err := c.trial(ctx, &stmt)
		if err != nil {
			return nil, err
		}
		return &rqRows{qr: *qr}, nil
	}
	if writes(query) {
		// A write that returns rows (RETURNING): the unified endpoint
		// sends it through the log like any write.
		if c.inTx {
			return nil, errPendingResult
		}
		results, err := request(ctx, c, true, func(ctx context.Context) ([]gorqlite.RequestResult, error) {
			return c.conn.RequestParameterizedContext(ctx, []gorqlite.ParameterizedStatement{stmt})
		})
		if err != nil {
			return nil, rqliteError(err, []gorqlite.ParameterizedStatement{stmt}, 0)
		}
		if len(results) == 0 || results[0].Query == nil {
			return &rqRows{}, nil
		}
		return &rqRows{qr: *results[0].Query}, nil
	}
	results, err := request(ctx, c, false, func(ctx context.Context) ([]gorqlite.QueryResult, error) {
		return c.conn.QueryParameterizedContext(ctx, []gorqlite.ParameterizedStatement{stmt})
	})
	if err != nil {
		return nil, rqliteError(err, []gorqlite.ParameterizedStatement{stmt}, 0)
	}
	if len(results) == 0 {
		return nil, errors.New("rqlite: no result")
	}
	return &rqRows{qr: results[0]}, nil
}

// writes reports whether a statement read as a query writes.
func writes(query string) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(query), " ")
	switch strings.ToUpper(strings.TrimSpace(word)) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE":
		return true
	}
	return false
}

// statement binds the arguments: positional ones as a list, named ones as
// one object (rqlite binds :name, @name and $name from it).
func statement(query string, args []driver.NamedValue) (gorqlite.ParameterizedStatement, error) {
	stmt := gorqlite.ParameterizedStatement{Query: query}
	named := map[string]any{}
	for _, a := range args {
		v := a.Value
		switch x := v.(type) {
		case []byte:
			v = string(x)
		case float64:
			v = realJSON(x)
		}
		if a.Name != "" {
			named[a.Name] = v
			continue
		}
		if len(named) > 0 {
			return stmt, fmt.Errorf("rqlite: a statement takes positional or named parameters, not both: %s", query)
		}
		stmt.Arguments = append(stmt.Arguments, v)
	}
	if len(named) > 0 {
		if len(stmt.Arguments) > 0 {
			return stmt, fmt.Errorf("rqlite: a statement takes positional or named parameters, not both: %s", query)
		}
		stmt.Arguments = []any{named}
	}
	return stmt, nil
}

// rqRows turns rqlite's JSON values back into SQLite's types: numbers come
// as JSON numbers, told apart by the column's reported type.
type rqRows struct {
	qr gorqlite.QueryResult
}

func (r *rqRows) Columns() []string { return r.qr.Columns() }
func (r *rqRows) Close() error      { return nil }

func (r *rqRows) Next(dest []driver.Value) error {
	if !r.qr.Next() {
		return io.EOF
	}
	row, err := r.qr.Slice()
	if err != nil {
		return err
	}
	types := r.qr.Types()
	for i, v := range row {
		typ := ""
		if i < len(types) {
			typ = strings.ToLower(types[i])
		}
		dest[i] = sqliteValue(v, typ)
	}
	return nil
}

// sqliteValue maps a decoded JSON value to what SQLite would have given:
// a number is a float64 in a column of REAL affinity (rqlite reports an
// expression's REAL value as "real"), and otherwise an int64 when integral.
func sqliteValue(v any, typ string) any {
	f, ok := v.(float64)
	if !ok {
		return v
	}
	realType := strings.Contains(typ, "real") || strings.Contains(typ, "floa") || strings.Contains(typ, "doub")
	if !realType && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return int64(f)
	}
	return f
}
