package rqlite

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rqlite/gorqlite"
)

// The rules of the rqlite driver, each with cases on both sides.

// A request is tried again only when no try of it could have been
// applied: every write refused at the connection or answered 503 (no
// leader), or nothing sent at all. Decided from typed outcomes.
func TestTriesRetryOnlyWhatNoNodeTook(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://a/db/execute",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	reset := &url.Error{Op: "Post", URL: "http://a/db/execute",
		Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	answer := func(code int) *http.Response { return &http.Response{StatusCode: code} }
	type try struct {
		method, path string
		resp         *http.Response
		err          error
	}
	for _, c := range []struct {
		name  string
		tries []try
		want  bool
	}{
		{"nothing sent", nil, true},
		{"refused", []try{{"POST", "/db/execute", nil, refused}}, true},
		{"no leader", []try{{"POST", "/db/execute", answer(503), nil}}, true},
		{"refused, then no leader", []try{{"POST", "/db/request", nil, refused}, {"POST", "/db/request", answer(503), nil}}, true},
		{"a look-up answered, the write refused", []try{{"GET", "/status", answer(200), nil}, {"POST", "/db/execute", nil, refused}}, true},
		{"a read that failed", []try{{"POST", "/db/query", nil, reset}}, true},
		// A write that may have reached a node is not sent again.
		{"refused, then timed out", []try{{"POST", "/db/execute", nil, refused}, {"POST", "/db/execute", nil, context.DeadlineExceeded}}, false},
		{"connection reset", []try{{"POST", "/db/execute", nil, reset}}, false},
		{"answered 200 (a statement failed)", []try{{"POST", "/db/execute", answer(200), nil}}, false},
		{"answered 500", []try{{"POST", "/db/request", answer(500), nil}}, false},
	} {
		tr := &tries{}
		for _, x := range c.tries {
			req := &http.Request{Method: x.method, URL: &url.URL{Scheme: "http", Host: "a", Path: x.path}}
			tr.record(req, x.resp, x.err)
		}
		if got := tr.noneApplied(); got != c.want {
			t.Errorf("%s: noneApplied %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRealJSONBindsAsReal(t *testing.T) {
	for in, want := range map[float64]string{2: "2.0", -3: "-3.0", 0: "0.0", 2.5: "2.5", 1e300: "1e+300", 1e-7: "1e-07"} {
		b, err := json.Marshal(realJSON(in))
		if err != nil || string(b) != want {
			t.Errorf("realJSON(%v) = %s, %v; want %s", in, b, err, want)
		}
	}
}

func TestSQLiteValueByColumnType(t *testing.T) {
	for _, c := range []struct {
		v    any
		typ  string
		want any
	}{
		{float64(3), "integer", int64(3)},
		{float64(3), "bool", int64(3)},
		{float64(3), "", int64(3)},
		{float64(3), "real", float64(3)},
		{float64(3), "double", float64(3)},
		{float64(2.5), "integer", float64(2.5)}, // a REAL stored in an INTEGER column stays REAL
		{"abc", "real", "abc"},                  // text in a REAL column stays text
		{nil, "integer", nil},
	} {
		if got := sqliteValue(c.v, c.typ); got != c.want {
			t.Errorf("sqliteValue(%#v, %q) = %#v, want %#v", c.v, c.typ, got, c.want)
		}
	}
}

// TestRqliteErrorNamesTheStatementError: a failed statement's own message
// reaches the user, on one line, not only gorqlite's count of them; a
// statement SQLite rejected is a *StatementError (ErrRejected), with the
// rejected statement's place and message, and a failure of the cluster
// is not.
func TestRqliteErrorNamesTheStatementError(t *testing.T) {
	one := []gorqlite.ParameterizedStatement{{Query: "SELECT 1"}}
	two := append(one, gorqlite.ParameterizedStatement{Query: "SELECT 2"})
	coded := &gorqlite.StatementError{Message: "UNIQUE constraint failed: t.id", SQLite: &gorqlite.SQLiteErrorCodes{Code: 19, ExtendedCode: 1555}}
	other := &gorqlite.StatementError{Message: "no such table: x", SQLite: &gorqlite.SQLiteErrorCodes{Code: 1}}
	for _, c := range []struct {
		err        error
		stmts      []gorqlite.ParameterizedStatement
		failed     int
		want       string
		rejected   bool
		message    string
		constraint bool
	}{
		{gorqlite.StatementErrors{errors.New("no such table: mem_edges")}, one, 0, "rqlite: no such table: mem_edges", true, "no such table: mem_edges", true},
		{gorqlite.StatementErrors{errors.New("a"), errors.New("b")}, two, 1,
			"rqlite: in a request of 2 statements: a; b (the request was rolled back)", true, "a", true},
		{gorqlite.StatementErrors{coded}, two, 1,
			"rqlite: in a request of 2 statements: UNIQUE constraint failed: t.id (the request was rolled back)", true, "UNIQUE constraint failed: t.id", true},
		{gorqlite.StatementErrors{other}, one, 0, "rqlite: no such table: x", true, "no such table: x", false},
		{errors.New("connection refused"), one, -1, "rqlite: connection refused", false, "", false},
		{&noAnswerError{after: time.Second, write: true}, two, -1,
			"rqlite: a request of 2 statements: no answer within 1s (the write may yet be applied; it was not sent again)", false, "", false},
	} {
		err := rqliteError(c.err, c.stmts, c.failed)
		if got := err.Error(); got != c.want {
			t.Errorf("rqliteError(%v) = %q, want %q", c.err, got, c.want)
		}
		var rejected *StatementError
		if errors.As(err, &rejected) != c.rejected || errors.Is(err, ErrRejected) != c.rejected {
			t.Errorf("rqliteError(%v): a rejected statement %v, want %v", c.err, !c.rejected, c.rejected)
			continue
		}
		if c.rejected && (rejected.Index != c.failed || rejected.Statements != len(c.stmts) || rejected.Message != c.message ||
			rejected.Constraint() != c.constraint) {
			t.Errorf("rqliteError(%v) = %+v, want statement %d of %d, %q, constraint %v", c.err, rejected, c.failed, len(c.stmts), c.message, c.constraint)
		}
	}
	if rqliteError(nil, one, -1) != nil {
		t.Error("rqliteError(nil) is not nil")
	}
}

func TestRqliteMessageCleansClientErrors(t *testing.T) {
	for in, want := range map[string]string{
		"tried all peers unsuccessfully. here are the results:\n   peer #0: http://mary:xxxxx@10.0.0.1:4001/db/execute?timings&level=weak&transaction failed due to Post \"http://mary:xxxxx@10.0.0.1:4001/db/execute?timings&level=weak&transaction\": dial tcp 10.0.0.1:4001: connect: connection refused\n": "10.0.0.1:4001: connect: connection refused",
		"tried all peers unsuccessfully. here are the results:\n   peer #0: http://a:4001/status failed due to got: 503 Service Unavailable, message: leader not found\n\n   peer #1: http://b:4001/status failed due to EOF\n":                                                                                "a:4001: 503 Service Unavailable: leader not found; b:4001: EOF",
		"there were 2 statement errors\nno such table: x\nno such column: y": "there were 2 statement errors; no such table: x; no such column: y",
		"plain": "plain",
	} {
		if got := rqliteMessage(errors.New(in)); got != want {
			t.Errorf("rqliteMessage(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
