package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/rqlite"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// replicaStore runs a sweep whose every write is replicated: on rqlite,
// where each statement is applied by every node in the same order, or on
// a file in the same mode (tests compare the two). A replica has no
// per-connection temp schema and no transaction across requests, so:
//
//   - the working tables the phase files write as temp.x are main tables
//     named mem_work_x (replicatedSQL rewrites the statements; their SQL
//     stays written once), dropped again when the sweep ends. Every
//     connection sees them: only the sweep that holds the lease creates,
//     writes or drops them, and each of its writes outside a transaction
//     goes as one with the lease's guard;
//   - a write transaction is one request: its statements are collected and
//     applied at COMMIT, atomically, on every node (rqlite.go). When SQLite
//     refuses one of them there (an app's trigger or constraint), the
//     transaction runs again with its writes tried as they are collected,
//     so that its savepoints isolate the refused rows as on a file
//     (inTx, refused.go);
//   - there is no read snapshot: derived state is refreshed in place, in
//     bounded transactions, rather than computed aside and compared;
//   - the clocks are bound as literals, and nothing reads random() or the
//     time, so every replica computes the same rows.
type replicaStore struct {
	conn   *sql.Conn
	opt    Options
	rqlite bool
	args   func(extra ...any) []any
	fence  fence // the lease, once the sweep holds it
	// dropped: the working tables are gone (dropWorking).
	dropped bool
	// The transaction under way: which of its writes are exec's (their
	// rows count in changed), and how long the last one held the cluster.
	inTransaction bool
	writes        []bool
	execRows      int64
	// Its savepoints (where a ROLLBACK TO takes writes and execRows back
	// to), and whether it opened one.
	marks       []txMark
	savepointed bool
	lastChanged int64
	held        time.Duration
	committed   time.Time
}

func OpenReplica(ctx context.Context, db *memdb.DB, opt Options) (*replicaStore, error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &replicaStore{conn: conn, opt: opt, rqlite: db.Rqlite, args: func(extra ...any) []any { return extra }}, nil
}

func (st *replicaStore) Bind(args func(extra ...any) []any) { st.args = args }
func (st *replicaStore) Hold(f fence)                       { st.fence = f }
func (st *replicaStore) OthersWriting() bool                { return false }
func (st *replicaStore) Snapshots() bool                    { return false }
func (st *replicaStore) Changed() int64                     { return st.lastChanged }
func (st *replicaStore) Querier() memdb.Querier             { return replicaQuerier{st} }

// DropWorking drops the working tables (a cut-off sweep's are dropped by
// the next one). Only a sweep that holds the lease drops them, each drop
// fenced: a sweep refused, or one whose place another took, leaves them to
// the sweep using them. The drops go one request each, not as one
// (execOneRequest): a follower applies a request once it learns that it
// committed, with the next request or heartbeat, so a sweep's last
// request may not be on every node yet when the sweep returns; kept small,
// it leaves at most one table behind for a moment, not all of them.
func (st *replicaStore) DropWorking(ctx context.Context) error {
	if st.fence == nil || st.dropped {
		return nil
	}
	st.dropped = true
	_, err := st.execEach(ctx, "plan_drop", append(st.opt.sql().Stmts("plan_drop"), st.opt.sql().Teardown...), nil)
	return err
}

// Close drops the working tables, when the sweep has not, and releases the
// connection.
func (st *replicaStore) Close() error {
	err := st.DropWorking(context.Background())
	return errors.Join(err, st.conn.Close())
}

func (st *replicaStore) Exec(ctx context.Context, name string, extra ...any) (int64, error) {
	return st.ExecList(ctx, name, st.opt.sql().Stmts(name), extra...)
}

func (st *replicaStore) ExecList(ctx context.Context, name string, list []string, extra ...any) (int64, error) {
	if st.rqlite && !st.inTransaction && len(list) > 1 {
		return st.execOneRequest(ctx, name, list, extra)
	}
	return st.execEach(ctx, name, list, extra)
}

// execEach runs a statement list one statement at a time: outside a
// transaction, a request each.
func (st *replicaStore) execEach(ctx context.Context, name string, list []string, extra []any) (int64, error) {
	var total int64
	for _, q := range list {
		res, err := st.write(ctx, true, replicatedSQL(q), st.args(extra...)...)
		if err != nil {
			return total, fmt.Errorf("%s: %w", name, err)
		}
		if n, err := res.RowsAffected(); err == nil {
			total += n
		}
	}
	return total, nil
}

// execOneRequest runs a statement list outside a transaction as one
// request (one transaction) rather than a request per statement: each
// request is a Raft round trip, and a sweep's set-up alone (plan_drop,
// plan_create) is some 50 one-line statements.
func (st *replicaStore) execOneRequest(ctx context.Context, name string, list []string, extra []any) (int64, error) {
	if _, err := st.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if st.fence != nil {
		query, args := st.fence.Guard()
		if _, err := st.conn.ExecContext(ctx, query, args...); err != nil {
			st.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return 0, fmt.Errorf("%s: %w", name, st.lost(ctx, err))
		}
	}
	for _, q := range list {
		if _, err := st.conn.ExecContext(ctx, replicatedSQL(q), st.args(extra...)...); err != nil {
			st.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return 0, fmt.Errorf("%s: %w", name, st.lost(ctx, err))
		}
	}
	if _, err := st.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		return 0, fmt.Errorf("%s: %w", name, st.lost(ctx, err))
	}
	rows, err := rqlite.LastTxRows(ctx, st.conn)
	var total int64
	for _, n := range rows {
		total += n
	}
	return total, err
}

// write runs one write, noting inside a transaction whether it is exec's.
// Outside a transaction, once the sweep holds the lease, it goes as a
// transaction of its own behind the lease's guard.
func (st *replicaStore) write(ctx context.Context, fromExec bool, query string, args ...any) (sql.Result, error) {
	if !st.inTransaction && st.fence != nil && !txControl.MatchString(query) {
		return st.fenced(ctx, query, args)
	}
	res, err := st.conn.ExecContext(ctx, query, args...)
	if err == nil && st.inTransaction {
		if m := savepointControl.FindStringSubmatch(query); m != nil {
			st.savepointMoved(strings.ToUpper(m[1]), m[2])
			return res, nil
		}
		st.writes = append(st.writes, fromExec)
		if n, err := res.RowsAffected(); err == nil && fromExec {
			st.execRows += n
		}
	}
	return res, err
}

// txControl matches the statements that open or end a transaction.
var txControl = regexp.MustCompile(`(?i)^\s*(BEGIN|COMMIT|END|ROLLBACK)\b`)

// savepointControl matches SAVEPOINT x, RELEASE [SAVEPOINT] x and ROLLBACK
// [TRANSACTION] TO [SAVEPOINT] x.
var savepointControl = regexp.MustCompile(`(?i)^\s*(SAVEPOINT|RELEASE|ROLLBACK)\s+(?:(?:TRANSACTION\s+)?TO\s+)?(?:SAVEPOINT\s+)?(\w+)\s*;?\s*$`)

// txMark is a savepoint of the transaction under way: its name, and the
// writes before it.
type txMark struct {
	name     string
	writes   int
	execRows int64
}

// savepointMoved follows a SAVEPOINT, RELEASE or ROLLBACK TO (verb) name
// that succeeded: a ROLLBACK TO forgets the writes since the savepoint.
func (st *replicaStore) savepointMoved(verb, name string) {
	if verb == "SAVEPOINT" {
		st.marks = append(st.marks, txMark{name: name, writes: len(st.writes), execRows: st.execRows})
		st.savepointed = true
		return
	}
	for i := len(st.marks) - 1; i >= 0; i-- {
		if !strings.EqualFold(st.marks[i].name, name) {
			continue
		}
		if verb == "ROLLBACK" {
			st.writes, st.execRows = st.writes[:st.marks[i].writes], st.marks[i].execRows
			st.marks = st.marks[:i+1]
		} else {
			st.marks = st.marks[:i]
		}
		return
	}
}

// fenced runs one write with the lease's guard before it, as one request.
func (st *replicaStore) fenced(ctx context.Context, query string, args []any) (sql.Result, error) {
	if _, err := st.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	guard, guardArgs := st.fence.Guard()
	res, err := st.conn.ExecContext(ctx, guard, guardArgs...)
	if err == nil {
		res, err = st.conn.ExecContext(ctx, query, args...)
	}
	if err != nil {
		st.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return nil, st.lost(ctx, err)
	}
	if _, err := st.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		return nil, st.lost(ctx, err)
	}
	if !st.rqlite {
		return res, nil
	}
	// rqlite tells the rows each statement changed only once applied.
	rows, err := rqlite.LastTxRows(ctx, st.conn)
	if err != nil || len(rows) < 2 {
		return driverResult(0), err
	}
	return driverResult(rows[1]), nil
}

// driverResult is a write's result known only by its rows changed.
type driverResult int64

func (r driverResult) LastInsertId() (int64, error) { return 0, errors.New("no insert id") }
func (r driverResult) RowsAffected() (int64, error) { return int64(r), nil }

// lost is the fence's reading of a write that failed: ErrLeaseLost when
// the lease is gone.
func (st *replicaStore) lost(ctx context.Context, err error) error {
	if st.fence == nil {
		return err
	}
	return st.fence.Lost(ctx, st.Querier(), err)
}

func (st *replicaStore) Count(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := st.conn.QueryRowContext(ctx, replicatedSQL(query), args...).Scan(&n)
	return n, err
}

// InTx runs f as one transaction: on rqlite, one request applied
// atomically by every node. When SQLite rejects one of its statements at
// COMMIT (an app's trigger or constraint refused a write) and f opened
// savepoints, f runs again in a transaction that tries its writes as they
// are collected (rqlite.SetTrials): then, as on a file, a savepoint's
// refused writes fail at its RELEASE and are rolled back to it
// (refused.go), and the rest commits as one request. A refusal outside
// every savepoint fails the transaction again, as it does on a file.
func (st *replicaStore) InTx(ctx context.Context, f func() error) error {
	err := st.runTx(ctx, f)
	if !st.rqlite || !st.savepointed || !errors.Is(err, rqlite.ErrRejected) {
		return err
	}
	if err := rqlite.SetTrials(ctx, st.conn, true); err != nil {
		return err
	}
	defer rqlite.SetTrials(context.WithoutCancel(ctx), st.conn, false)
	return st.runTx(ctx, f)
}

// runTx is one try of inTx.
func (st *replicaStore) runTx(ctx context.Context, f func() error) error {
	return runTx(ctx, txHooks{conn: st.conn, q: st.Querier(), fence: st.fence, pause: st.opt.Pause, last: st.committed,
		begun: func() {
			st.inTransaction, st.writes, st.execRows, st.marks, st.savepointed = true, nil, 0, nil, false
		},
		ended: func() { st.inTransaction = false },
		committed: func(began time.Time) error {
			st.committed = time.Now()
			st.held, st.lastChanged = st.committed.Sub(began), st.execRows
			if !st.rqlite {
				return nil
			}
			// rqlite tells the rows each statement changed only once applied.
			rows, err := rqlite.LastTxRows(ctx, st.conn)
			if err != nil {
				return err
			}
			st.lastChanged = 0
			for i, n := range rows {
				if i < len(st.writes) && st.writes[i] {
					st.lastChanged += n
				}
			}
			return nil
		},
	}, f)
}

// InRead runs f: a replica has no read snapshot across statements; each
// statement reads the rows as the ones before it left them.
func (st *replicaStore) InRead(ctx context.Context, end string, f func() error) error {
	if end != "COMMIT" {
		return errors.New("a replica cannot roll back a read: dry runs read a copy (see Sweep)")
	}
	return f()
}

// TxRows: each transaction as many rows as the last one's pace fits in
// SoloHold, from ChunkSize up to SoloChunkSize, so no request holds the
// cluster's write lock much longer than that from another writer.
func (st *replicaStore) TxRows(size int) *txRows { return &txRows{p: st, size: size} }

func (st *replicaStore) chunkRows(size int) int64 {
	if st.opt.SoloChunkSize > st.opt.ChunkSize {
		return int64(size) * int64(st.opt.SoloChunkSize) / int64(st.opt.ChunkSize)
	}
	return int64(size)
}

func (st *replicaStore) lastHeld() time.Duration { return st.held }
func (st *replicaStore) soloHold() time.Duration { return st.opt.SoloHold }
func (st *replicaStore) holding() time.Duration  { return 0 }

// replicaQuerier rewrites the working tables' names in every statement.
type replicaQuerier struct{ st *replicaStore }

func (q replicaQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.st.write(ctx, false, replicatedSQL(query), args...)
}

func (q replicaQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.st.conn.QueryContext(ctx, replicatedSQL(query), args...)
}

func (q replicaQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.st.conn.QueryRowContext(ctx, replicatedSQL(query), args...)
}

// workingPrefix names the working tables of a replicated sweep.
const workingPrefix = "mem_work_"

// shadowed are the derived tables a file's full sweep shadows with temp
// tables of the same name; a replica refreshes them in place, so their
// plain names always mean the main tables.
var shadowed = map[string]bool{"mem_block_state": true, "mem_edge_due": true, "mem_fact_due": true}

var (
	createTemp    = regexp.MustCompile(`\bCREATE TEMP (TABLE|VIEW)\b`)
	tempQualified = regexp.MustCompile(`\btemp\.(\w+)`)
	tempCreated   = regexp.MustCompile(`\bCREATE TEMP (?:TABLE|VIEW) (?:IF NOT EXISTS )?(?:temp\.)?(\w+)`)
)

// workingNames matches the working tables' plain names in a statement (not
// a column's: never after a dot), from the phase files' CREATE TEMP and
// temp. names. Built on a replica's first use: reading every statement
// takes milliseconds that a sweep of a file, and every other command,
// would pay at start.
var workingNames = sync.OnceValue(func() *regexp.Regexp {
	seen := map[string]bool{}
	for _, list := range sweepsql.Statements {
		for _, q := range list {
			for _, re := range []*regexp.Regexp{tempCreated, tempQualified} {
				for _, m := range re.FindAllStringSubmatch(q, -1) {
					if !shadowed[m[1]] {
						seen[m[1]] = true
					}
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, regexp.QuoteMeta(n))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // longest first among shared prefixes
	return regexp.MustCompile(`(^|[^.\w])(` + strings.Join(names, "|") + `)\b`)
})

// replicatedSQL is a phase statement as a replica runs it: its working
// tables are main tables named mem_work_x. Only the SQL is renamed, never
// a string literal in it (mem_config's key 'rank_scale', a bound step
// compared with 'plan_edges') nor a comment.
func replicatedSQL(q string) string {
	var b strings.Builder
	for q != "" {
		code, rest := sqlCode(q)
		code = createTemp.ReplaceAllString(code, "CREATE $1")
		code = tempQualified.ReplaceAllString(code, workingPrefix+"$1")
		b.WriteString(workingNames().ReplaceAllString(code, "${1}"+workingPrefix+"$2"))
		text, after := sqlText(rest)
		b.WriteString(text)
		q = after
	}
	return b.String()
}

// sqlCode splits q before its first string literal or comment.
func sqlCode(q string) (code, rest string) {
	for i := 0; i < len(q); i++ {
		if q[i] == '\'' || strings.HasPrefix(q[i:], "--") || strings.HasPrefix(q[i:], "/*") {
			return q[:i], q[i:]
		}
	}
	return q, ""
}

// sqlText splits q, which starts with a string literal or a comment (or
// is empty), after it; an unterminated one runs to the end.
func sqlText(q string) (text, rest string) {
	end := len(q)
	switch {
	case q == "":
		return "", ""
	case strings.HasPrefix(q, "--"):
		if i := strings.IndexByte(q, '\n'); i >= 0 {
			end = i + 1
		}
	case strings.HasPrefix(q, "/*"):
		if i := strings.Index(q[2:], "*/"); i >= 0 {
			end = i + 4
		}
	default: // 'text', a quote written twice inside it
		for i := 1; i < len(q); i++ {
			if q[i] != '\'' {
				continue
			}
			if i+1 < len(q) && q[i+1] == '\'' {
				i++
				continue
			}
			end = i + 1
			break
		}
	}
	return q[:end], q[end:]
}

// CommitsMark: a replica's statements reach whichever connection the node
// serves them on, so it cannot tell whether others committed.
func (st *replicaStore) CommitsMark(context.Context) (int64, bool) { return 0, false }

// Savepoints: on a file, SQLite's; on rqlite, the driver's, in a
// transaction that collects its writes (a ROLLBACK TO drops those since),
// which SQLite checks only at COMMIT or, once inTx tries them, at RELEASE.
func (st *replicaStore) Savepoints() bool { return true }
