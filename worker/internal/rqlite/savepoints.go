package rqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/rqlite/gorqlite"
)

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
