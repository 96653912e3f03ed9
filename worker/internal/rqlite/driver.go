package rqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// DriverName is the database/sql name of the driver.
const DriverName = "memdecay-rqlite"

func init() { sql.Register(DriverName, rqliteDriver{}) }

// The bounds of one request to a node. gorqlite sends a request that
// fails to the next node it knows, which forwards it to the leader: after
// a timeout of the HTTP client's own, a write still running at the leader
// would be applied twice. So the client has no timeout of its own (the
// URL's timeout= is refused, parseNodeURL); each request runs under a
// deadline on its context instead, and once that passes gorqlite tries no
// other node.
//
// A read (and the client's own look-up of the leader) answers within
// rqliteReadTimeout. A write, the sweep's among them, is excepted: it may
// hold the leader a long while (a first sweep of 1M edges has single
// requests of more than 10 s on a 2-core machine, bench/RESULTS.md), so
// its bound, rqliteWriteTimeout, is far above any request's time. No
// answer may be longer than rqliteMaxResponse (the dry run's download of
// the database excepted): an endpoint that streams without end fails the
// request instead of filling the memory. Tests shorten them.
var (
	rqliteConnectTimeout       = 10 * time.Second
	rqliteReadTimeout          = time.Minute
	rqliteWriteTimeout         = 10 * time.Minute
	rqliteMaxResponse    int64 = 256 << 20
)

// SetLimits shortens the bounds of every request (for tests); restore puts
// them back.
func SetLimits(read, write time.Duration, maxResponse int64) (restore func()) {
	oldRead, oldWrite, oldMax := rqliteReadTimeout, rqliteWriteTimeout, rqliteMaxResponse
	rqliteReadTimeout, rqliteWriteTimeout, rqliteMaxResponse = read, write, maxResponse
	return func() { rqliteReadTimeout, rqliteWriteTimeout, rqliteMaxResponse = oldRead, oldWrite, oldMax }
}

// noAnswerError: a request's deadline passed before its answer came.
type noAnswerError struct {
	after time.Duration
	write bool
}

func (e *noAnswerError) Error() string {
	if e.write {
		return fmt.Sprintf("no answer within %v (the write may yet be applied; it was not sent again)", e.after)
	}
	return fmt.Sprintf("no answer within %v", e.after)
}

// tooLargeError: an answer longer than rqliteMaxResponse.
type tooLargeError struct{ max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("answer larger than %s: memworker reads no answer that large (is this an rqlite node?)", sizeText(e.max))
}

// Context keys: the cancel of the request under way, which an answer too
// large calls so that gorqlite tries no other node; and a request whose
// answer is not capped.
type (
	abortKey    struct{}
	uncappedKey struct{}
)

// rqliteHTTP is the HTTP client of every request to a node: connections
// made within rqliteConnectTimeout, each request bounded (boundedTransport).
var rqliteHTTP = &http.Client{Transport: boundedTransport{base: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{Timeout: rqliteConnectTimeout, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
	}
	t.TLSHandshakeTimeout = rqliteConnectTimeout
	return t
}()}}

// boundedTransport bounds a request that has no deadline of its own (the
// client's look-ups of the leader) by rqliteReadTimeout, and caps every
// answer at rqliteMaxResponse.
type boundedTransport struct{ base http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	ctx, cancel := parent, context.CancelFunc(func() {})
	if _, ok := parent.Deadline(); !ok {
		ctx, cancel = context.WithTimeoutCause(parent, rqliteReadTimeout, &noAnswerError{after: rqliteReadTimeout})
	}
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if tries, ok := parent.Value(triesKey{}).(*tries); ok {
		tries.record(req, resp, err)
	}
	if err != nil {
		err = ownCause(parent, ctx, err)
		cancel()
		return nil, err
	}
	left := rqliteMaxResponse
	if ctx.Value(uncappedKey{}) != nil {
		left = math.MaxInt64
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, parent: parent, ctx: ctx, cancel: cancel, left: left}
	return resp, nil
}

// ownCause is the reason of a request's failure when it is the request's
// own deadline or cap, not its caller's.
func ownCause(parent, ctx context.Context, err error) error {
	if parent.Err() == nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// boundedBody is an answer read within its request's bounds.
type boundedBody struct {
	io.ReadCloser
	parent, ctx context.Context
	cancel      context.CancelFunc
	left        int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		err := &tooLargeError{max: rqliteMaxResponse}
		if abort, ok := b.ctx.Value(abortKey{}).(context.CancelCauseFunc); ok {
			abort(err)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if err != nil && err != io.EOF {
		err = ownCause(b.parent, b.ctx, err)
	}
	return n, err
}

func (b *boundedBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// request runs one request of a connection (retried) within its bound:
// a write's, or a read's. When the bound passes, or the answer is too
// large, gorqlite stops and the error says which.
func request[T any](ctx context.Context, c *rqConn, write bool, call func(ctx context.Context) (T, error)) (T, error) {
	bound := rqliteReadTimeout
	if write {
		bound = rqliteWriteTimeout
	}
	rctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	rctx, cancel := context.WithTimeoutCause(rctx, bound, &noAnswerError{after: bound, write: write})
	defer cancel()
	rctx = context.WithValue(rctx, abortKey{}, abort)
	v, err := retried(rctx, c, call)
	if err != nil {
		err = ownCause(ctx, rctx, err)
	}
	return v, err
}

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

// ErrRejected matches every StatementError: SQLite rejected a statement
// of a request that rqlite answered.
var ErrRejected = errors.New("rqlite: a statement was rejected")

// StatementError is a request that reached SQLite, which rejected one of
// its statements: a constraint failed (CHECK, FOREIGN KEY, UNIQUE, NOT
// NULL), a trigger aborted it (RAISE(ABORT)), or SQLite could not run it.
// In a transaction, nothing of the request was applied. It is never a
// failure of the cluster (a node unreachable, no leader, no answer in
// time), which has an error of its own.
type StatementError struct {
	// Index is the rejected statement's place in the request, from 0, in
	// a request of Statements.
	Index, Statements int
	// Message is SQLite's message, as a connection to a file has it: a
	// constraint's ("CHECK constraint failed: …"), a trigger's RAISE text.
	Message string
	// Code is SQLite's primary result code, when the node tells it
	// (rqlite 10.6 and later); 0 when it does not.
	Code int
	// text is the error's one line, every statement error of the request.
	text string
}

func (e *StatementError) Error() string        { return e.text }
func (e *StatementError) Is(target error) bool { return target == ErrRejected }

// Constraint reports whether SQLite rejected the statement for a rule of
// the data (SQLITE_CONSTRAINT: a constraint, a trigger's RAISE), or may
// have: a node that tells no code leaves it open.
func (e *StatementError) Constraint() bool { return e.Code == 0 || e.Code == sqliteConstraint }

// sqliteConstraint is SQLITE_CONSTRAINT.
const sqliteConstraint = 19

// rqliteError names the first statement that failed, on one line: a
// *StatementError when SQLite rejected one (the one at failed, when
// known: -1 when not).
func rqliteError(err error, stmts []gorqlite.ParameterizedStatement, failed int) error {
	if err == nil {
		return nil
	}
	msg := rqliteMessage(err)
	// gorqlite counts the statement errors on a line of its own; the
	// messages themselves are what a reader needs, on one line.
	var se gorqlite.StatementErrors
	if errors.As(err, &se) && len(se) > 0 {
		msgs := make([]string, len(se))
		for i, e := range se {
			msgs[i] = oneLine(e.Error())
		}
		rejected := &StatementError{Index: failed, Statements: len(stmts), Message: msgs[0]}
		var first *gorqlite.StatementError
		if errors.As(se[0], &first) && first.SQLite != nil {
			rejected.Code = first.SQLite.Code
		}
		msg = strings.Join(msgs, "; ")
		rejected.text = "rqlite: " + msg
		if len(stmts) > 1 {
			rejected.text = fmt.Sprintf("rqlite: in a request of %d statements: %s (the request was rolled back)", len(stmts), msg)
		}
		return rejected
	}
	if len(stmts) == 1 {
		return fmt.Errorf("rqlite: %s", msg)
	}
	return fmt.Errorf("rqlite: a request of %d statements: %s", len(stmts), msg)
}

// failedAt is the place of the first result that failed, -1 when none did.
func failedAt[T any](results []T, errOf func(T) error) int {
	for i, r := range results {
		if errOf(r) != nil {
			return i
		}
	}
	return -1
}

// A savepoint in a transaction that collects its writes: the number of
// writes collected before it.
type savepoint struct {
	name string
	mark int
}

// savepointSQL matches SAVEPOINT x, RELEASE [SAVEPOINT] x and ROLLBACK
// [TRANSACTION] TO [SAVEPOINT] x.
var savepointSQL = regexp.MustCompile(`(?i)^(SAVEPOINT|RELEASE|ROLLBACK)\s+(?:(?:TRANSACTION\s+)?TO\s+)?(?:SAVEPOINT\s+)?(\w+)$`)

// savepoint runs SAVEPOINT, RELEASE or ROLLBACK TO (verb) name inside a
// transaction that collects its writes: ROLLBACK TO drops the writes
// collected since; RELEASE, when the transaction tries its writes
// (SetTrials), first tries them, and fails as SQLite would have failed
// one of them since the savepoint (a *StatementError), the savepoint
// kept.
func (c *rqConn) savepoint(ctx context.Context, verb, name string) error {
	if !c.inTx {
		return fmt.Errorf("rqlite: %s %s outside a transaction (rqlite has no transaction across requests)", verb, name)
	}
	if verb == "SAVEPOINT" {
		c.savepoints = append(c.savepoints, savepoint{name: name, mark: len(c.pending)})
		return nil
	}
	at := -1
	for i := len(c.savepoints) - 1; i >= 0 && at < 0; i-- {
		if strings.EqualFold(c.savepoints[i].name, name) {
			at = i
		}
	}
	if at < 0 {
		return fmt.Errorf("rqlite: no such savepoint: %s", name)
	}
	sp := c.savepoints[at]
	if verb == "ROLLBACK" {
		c.pending, c.savepoints = c.pending[:sp.mark], c.savepoints[:at+1]
		return nil
	}
	if c.trials && len(c.pending) > sp.mark {
		if _, err := c.trial(ctx, nil); err != nil {
			var rejected *StatementError
			if errors.As(err, &rejected) && rejected.Index < sp.mark {
				// Not one of the savepoint's writes: the transaction
				// fails as its COMMIT would.
				return fmt.Errorf("rqlite: before savepoint %s: %s", name, rejected.Message)
			}
			return err
		}
	}
	c.savepoints = c.savepoints[:at]
	return nil
}

// SetTrials makes conn's write transactions try their writes as they are
// collected, so that a statement SQLite rejects fails where it does on a
// file rather than only at COMMIT: a RELEASE fails as SQLite would have
// failed one of the writes since its SAVEPOINT, and a read after writes
// sees them. Each try is one request of the writes so far, which rqlite
// applies (every node, through the log) and rolls back: a trial request
// ends with trialEnd, which always fails. Used to isolate a transaction's
// refused writes once its COMMIT was refused.
func SetTrials(ctx context.Context, conn *sql.Conn, on bool) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*rqConn)
		if !ok {
			return errors.New("not an rqlite connection")
		}
		c.trials = on
		return nil
	})
}

// trialEnd fails at run time, whatever the schema, on every SQLite
// (abs() of the smallest integer overflows): it rolls back a trial
// request, read or not, and only it can fail last.
const trialEnd = "SELECT abs(-9223372036854775807 - 1)"

// errTrialApplied: a trial request was not rolled back. It never is
// (trialEnd always fails); should it be, the writes it made are not the
// transaction's yet, so the sweep stops rather than go on beside them.
var errTrialApplied = errors.New("rqlite: a trial request was not rolled back")

// trial sends the transaction's writes so far, then read (when not nil),
// then trialEnd, as one request in a transaction, which trialEnd rolls
// back: the *StatementError of the write SQLite rejects, if any, or
// read's rows as the writes leave them.
func (c *rqConn) trial(ctx context.Context, read *gorqlite.ParameterizedStatement) (*gorqlite.QueryResult, error) {
	stmts := slices.Clone(c.pending)
	if read != nil {
		stmts = append(stmts, *read)
	}
	stmts = append(stmts, gorqlite.ParameterizedStatement{Query: trialEnd})
	results, err := request(ctx, c, true, func(ctx context.Context) ([]gorqlite.RequestResult, error) {
		return c.conn.RequestParameterizedContext(ctx, stmts)
	})
	failed := failedAt(results, func(r gorqlite.RequestResult) error { return r.Err })
	var se gorqlite.StatementErrors
	switch {
	case err == nil:
		return nil, errTrialApplied
	case !errors.As(err, &se):
		return nil, rqliteError(err, stmts, -1)
	case failed < len(stmts)-1:
		// The rejected write, or the read: their error alone.
		e := rqliteError(gorqlite.StatementErrors{results[failed].Err}, stmts[failed:failed+1], failed)
		if rejected, ok := e.(*StatementError); ok {
			rejected.Statements = len(stmts) - 1 // the writes, and the read
		}
		return nil, e
	case read == nil:
		return nil, nil
	case results[failed-1].Query == nil:
		return nil, fmt.Errorf("rqlite: a read in a trial request answered no rows")
	}
	return results[failed-1].Query, nil
}

var (
	// peerFailure is a line of gorqlite's report of a request every node
	// failed: the URL it sent to (with its internal options) and why.
	peerFailure = regexp.MustCompile(`^peer #\d+: (\S+) failed due to (.*)$`)
	// clientOp is net/http's prefix of an error, which quotes the URL.
	clientOp = regexp.MustCompile(`^(?:Get|Post|GET|POST) "[^"]*": `)
	// statusAnswer is gorqlite's wording of an answer that is not 200 OK.
	statusAnswer = regexp.MustCompile(`^got: (\d{3}[^,]*), message: ?`)
)

// rqliteMessage is an error of gorqlite on one line: each node that failed
// named by its host alone (not the URL with the client's internal query
// string), and why, joined by "; ".
func rqliteMessage(err error) string {
	msg := err.Error()
	rest, ok := strings.CutPrefix(msg, "tried all peers unsuccessfully. here are the results:")
	if !ok {
		return oneLine(msg)
	}
	var parts []string
	for _, l := range strings.Split(rest, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if m := peerFailure.FindStringSubmatch(l); m != nil {
			node := m[1]
			if u, err := url.Parse(node); err == nil && u.Host != "" {
				node = u.Host
			}
			why := statusAnswer.ReplaceAllString(clientOp.ReplaceAllString(m[2], ""), "$1: ")
			why = strings.TrimPrefix(why, "dial tcp "+node+": ")
			l = node + ": " + strings.TrimSuffix(strings.TrimSpace(why), ":")
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, "; ")
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

// LastTxRows is the rows each statement of a connection's last committed
// transaction changed.
func LastTxRows(ctx context.Context, conn *sql.Conn) (rows []int64, err error) {
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

// Backup writes the cluster's database, as the leader has it at the node
// address nodeURL, to path. The download is bounded as a write is (rqliteWriteTimeout) and not
// capped: it is as large as the database.
func Backup(ctx context.Context, nodeURL, path string) error {
	u, err := url.Parse(nodeURL)
	if err != nil {
		return errors.New("backup: the node's address does not parse")
	}
	u.Path, u.RawQuery = "/db/backup", ""
	ctx, cancel := context.WithTimeoutCause(ctx, rqliteWriteTimeout, &noAnswerError{after: rqliteWriteTimeout})
	defer cancel()
	req, err := http.NewRequestWithContext(context.WithValue(ctx, uncappedKey{}, true), http.MethodGet, u.String(), nil)
	if err != nil {
		return errors.New("backup: the node's address does not parse")
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		req.SetBasicAuth(u.User.Username(), pass)
		u.User = nil
		req.URL = u
	}
	resp, err := rqliteHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("backup: %s", oneLine(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("backup: %s: %s", resp.Status, oneLine(string(body)))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("backup: %s", oneLine(err.Error()))
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
// while it fails only because no node could take it: the transport saw
// every try of a write refused (the connection, or a node with no leader),
// or the client sent nothing (it knew no node yet), so nothing was applied
// and trying again cannot apply it twice. A read is tried again on any
// failure, within the same bound.
func retried[T any](ctx context.Context, c *rqConn, call func(ctx context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(failoverWait)
	var last error // the last answer of a try the caller's deadline did not cut
	for {
		tries := &tries{}
		v, err := call(context.WithValue(ctx, triesKey{}, tries))
		if err != nil && ctx.Err() != nil && last != nil {
			return v, last // why it kept failing says more than the deadline that ended it
		}
		if err == nil || !tries.noneApplied() || time.Now().After(deadline) {
			return v, err
		}
		last = err
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(250 * time.Millisecond):
		}
		c.conn.Leader() // refreshes the peer list; an error shows on the next call
	}
}

// triesKey carries a request's tries through gorqlite to the transport.
type triesKey struct{}

// tries is what the transport saw of one request: whether a write may have
// reached a node that applied it. Decided from typed outcomes (a refused
// connection, a 503 answer), never from the client's error text.
type tries struct {
	mu      sync.Mutex
	reached bool
}

// record notes one try: a write (POST to /db/execute or /db/request) that
// was neither refused nor answered 503 may have been applied.
func (t *tries) record(req *http.Request, resp *http.Response, err error) {
	write := req.Method == http.MethodPost &&
		(strings.HasSuffix(req.URL.Path, "/db/execute") || strings.HasSuffix(req.URL.Path, "/db/request"))
	refused := err != nil && errors.Is(err, syscall.ECONNREFUSED) ||
		err == nil && resp.StatusCode == http.StatusServiceUnavailable
	if write && !refused {
		t.mu.Lock()
		t.reached = true
		t.mu.Unlock()
	}
}

// noneApplied reports whether no try could have been applied.
func (t *tries) noneApplied() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.reached
}

// oneLine joins the lines of a message (rqlite's answers may span
// several) with "; ".
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// sizeText is a number of bytes as messages show it.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
