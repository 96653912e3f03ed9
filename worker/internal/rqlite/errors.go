package rqlite

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/rqlite/gorqlite"
)

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
