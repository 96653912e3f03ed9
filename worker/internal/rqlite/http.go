package rqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

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
