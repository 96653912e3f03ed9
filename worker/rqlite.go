package worker

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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

// rqliteDriverName is the database/sql name of the driver.
const rqliteDriverName = "memdecay-rqlite"

func init() { sql.Register(rqliteDriverName, rqliteDriver{}) }

// IsRqliteURL reports whether --db names an rqlite node rather than a file.
func IsRqliteURL(db string) bool {
	return strings.HasPrefix(db, "http://") || strings.HasPrefix(db, "https://")
}

// ErrNoExtension: a node answers without memdecay's functions.
var ErrNoExtension = errors.New("the rqlite node has not loaded memdecay")

// OpenRqlite connects to the rqlite cluster of the node at rawURL (any node:
// requests follow the leader) and checks that it answers with memdecay's
// functions. Basic auth comes from the URL or from MEMWORKER_RQLITE_USER and
// MEMWORKER_RQLITE_PASSWORD.
func OpenRqlite(ctx context.Context, rawURL string) (*DB, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("--db %s: not a node's address (want http://HOST:PORT)", redactURL(rawURL))
	}
	if u.User == nil {
		if user := os.Getenv("MEMWORKER_RQLITE_USER"); user != "" {
			u.User = url.UserPassword(user, os.Getenv("MEMWORKER_RQLITE_PASSWORD"))
		}
	}
	if q := u.Query(); q.Get("timeout") == "" {
		q.Set("timeout", strconv.Itoa(int(rqliteTimeout/time.Second)))
		u.RawQuery = q.Encode()
	}
	name := redactURL(rawURL)
	db, err := sql.Open(rqliteDriverName, u.String())
	if err != nil {
		return nil, err
	}
	var probe float64
	err = db.QueryRowContext(ctx, `SELECT effective_weight(1.0, 0.0, 0.0)`).Scan(&probe)
	if err != nil {
		db.Close()
		if strings.Contains(err.Error(), "no such function") {
			return nil, fmt.Errorf("%s: %w (%v): start every node with -extensions-path pointing at memdecay.so (nothing was changed)",
				name, ErrNoExtension, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &DB{SQL: db, Path: name, Rqlite: true, url: u.String()}, nil
}

// rqliteTimeout is how long a request waits for its answer when --db sets
// no timeout= (gorqlite's own default is 10 s). A request that times out
// is sent again to the next node, which forwards it to the leader: a write
// still running there would be applied twice. A first sweep of 1M edges
// has single requests of more than 10 s on a 2-core machine
// (bench/RESULTS.md), so the bound is far above any request's time.
const rqliteTimeout = 10 * time.Minute

// redactURL hides a password in messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, set := u.User.Password(); set {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

type rqliteDriver struct{}

func (rqliteDriver) Open(name string) (driver.Conn, error) {
	conn, err := gorqlite.Open(name)
	if err != nil {
		return nil, fmt.Errorf("rqlite %s: %w", redactURL(name), err)
	}
	return &rqConn{conn: conn}, nil
}

// rqConn is one connection: gorqlite follows the leader; pending holds the
// writes of the transaction under way.
type rqConn struct {
	conn    *gorqlite.Connection
	inTx    bool
	pending []gorqlite.ParameterizedStatement
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
	c.inTx, c.pending = true, nil
	return rqTx{c}, nil
}

type rqTx struct{ c *rqConn }

func (t rqTx) Commit() error   { return t.c.commit(context.Background()) }
func (t rqTx) Rollback() error { t.c.inTx, t.c.pending = false, nil; return nil }

// commit sends the transaction's writes as one atomic request.
func (c *rqConn) commit(ctx context.Context) error {
	stmts := c.pending
	c.inTx, c.pending, c.committed = false, nil, nil
	if len(stmts) == 0 {
		return nil
	}
	results, err := retried(ctx, c, func() ([]gorqlite.WriteResult, error) { return c.conn.WriteParameterizedContext(ctx, stmts) })
	for _, r := range results {
		c.committed = append(c.committed, r.RowsAffected)
	}
	return rqliteError(err, stmts)
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
		c.inTx, c.pending = false, nil
		return driver.ResultNoRows, nil
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
	results, err := retried(ctx, c, func() ([]gorqlite.WriteResult, error) {
		return c.conn.WriteParameterizedContext(ctx, []gorqlite.ParameterizedStatement{stmt})
	})
	if err != nil {
		return nil, rqliteError(err, []gorqlite.ParameterizedStatement{stmt})
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

// QueryContext reads at the leader.
func (c *rqConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.inTx && len(c.pending) > 0 {
		return nil, errReadAfterWrite
	}
	stmt, err := statement(query, args)
	if err != nil {
		return nil, err
	}
	if writes(query) {
		// A write that returns rows (RETURNING): the unified endpoint
		// sends it through the log like any write.
		if c.inTx {
			return nil, errPendingResult
		}
		results, err := retried(ctx, c, func() ([]gorqlite.RequestResult, error) {
			return c.conn.RequestParameterizedContext(ctx, []gorqlite.ParameterizedStatement{stmt})
		})
		if err != nil {
			return nil, rqliteError(err, []gorqlite.ParameterizedStatement{stmt})
		}
		if len(results) == 0 || results[0].Query == nil {
			return &rqRows{}, nil
		}
		return &rqRows{qr: *results[0].Query}, nil
	}
	results, err := retried(ctx, c, func() ([]gorqlite.QueryResult, error) {
		return c.conn.QueryParameterizedContext(ctx, []gorqlite.ParameterizedStatement{stmt})
	})
	if err != nil {
		return nil, rqliteError(err, []gorqlite.ParameterizedStatement{stmt})
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

// rqliteError names the first statement that failed.
func rqliteError(err error, stmts []gorqlite.ParameterizedStatement) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	// gorqlite counts the statement errors on a line of its own; the
	// messages themselves are what a reader needs, on one line.
	var se gorqlite.StatementErrors
	if errors.As(err, &se) && len(se) > 0 {
		msgs := make([]string, len(se))
		for i, e := range se {
			msgs[i] = e.Error()
		}
		msg = strings.Join(msgs, "; ")
	}
	if len(stmts) == 1 {
		return fmt.Errorf("rqlite: %s", msg)
	}
	return fmt.Errorf("rqlite: in a request of %d statements: %s (the request was rolled back)", len(stmts), msg)
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

// lastTxRows is the rows each statement of a connection's last committed
// transaction changed.
func lastTxRows(ctx context.Context, conn *sql.Conn) (rows []int64, err error) {
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*rqConn)
		if !ok {
			return errors.New("not an rqlite connection")
		}
		rows = c.committed
		return nil
	})
	return rows, err
}

// dryRunCopy runs a dry run against a copy of the cluster's database
// (rqlite's backup, read at the leader): on a replica even the working
// tables would be writes, and a dry run changes no byte.
func dryRunCopy(ctx context.Context, db *DB, opt SweepOptions) (*Report, error) {
	dir, err := os.MkdirTemp("", "memworker-dry-run-")
	if err != nil {
		return nil, fmt.Errorf("sweep --dry-run: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "copy.db")
	if err := backupRqlite(ctx, db, path); err != nil {
		return nil, fmt.Errorf("sweep --dry-run: copying %s: %w", db.Path, err)
	}
	copied, err := OpenMemory(path, true)
	if err != nil {
		return nil, fmt.Errorf("sweep --dry-run: %w", err)
	}
	defer copied.Close()
	return Sweep(ctx, copied, opt)
}

// backupRqlite writes the cluster's database, as the leader has it, to path.
func backupRqlite(ctx context.Context, db *DB, path string) error {
	u, err := url.Parse(db.url)
	if err != nil {
		return err
	}
	u.Path, u.RawQuery = "/db/backup", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		req.SetBasicAuth(u.User.Username(), pass)
		u.User = nil
		req.URL = u
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("backup: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// realJSON sends a float64 as a JSON number rqlite binds as REAL: with a
// decimal point even when integral (2.0, not 2, which binds as INTEGER).
type realJSON float64

func (r realJSON) MarshalJSON() ([]byte, error) {
	b := strconv.AppendFloat(nil, float64(r), 'g', -1, 64)
	if !bytes.ContainsAny(b, ".eE") {
		b = append(b, ".0"...)
	}
	return b, nil
}

// failoverWait bounds how long a request waits for the cluster to elect a
// new leader (a few seconds with rqlite's defaults).
const failoverWait = 20 * time.Second

// retried runs call again, with the cluster's leader looked up afresh,
// while it fails only because no node could take it: every node it tried
// refused the connection or had no leader, so nothing was applied and
// trying again cannot apply it twice.
func retried[T any](ctx context.Context, c *rqConn, call func() (T, error)) (T, error) {
	deadline := time.Now().Add(failoverWait)
	for {
		v, err := call()
		if err == nil || !notApplied(err) || time.Now().After(deadline) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(250 * time.Millisecond):
		}
		c.conn.Leader() // refreshes the peer list; an error shows on the next call
	}
}

// notApplied reports whether every attempt of a request failed before any
// node could apply it.
func notApplied(err error) bool {
	msg := err.Error()
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	found := false
	for _, l := range lines {
		if !strings.Contains(l, "failed due to") {
			continue
		}
		found = true
		if !strings.Contains(l, "connection refused") && !strings.Contains(l, "leader not found") &&
			!strings.Contains(l, "503 Service Unavailable") {
			return false
		}
	}
	// No peer known yet (the node had not learned its cluster when the
	// connection opened): nothing was sent.
	return found || strings.Contains(msg, "connection refused") || msg == "don't have any cluster info"
}
