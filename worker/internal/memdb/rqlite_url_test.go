package memdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker/internal/secrettest"

	"github.com/memdecay/memdecay/worker/internal/rqlite"
)

// A password is never printed, whether its URL parses or not; the options
// that would re-send a write are refused; a node that never answers, or
// answers without end, fails the request within its bounds; every error is
// one line without the client's internal query string.

// nodeURLs is each way a password reaches --db: written as is, and
// percent-encoded as it should be, at a port nothing listens on.
func nodeURLs(pw, hostPort string) []string {
	return []string{
		"http://mary:" + pw + "@" + hostPort,
		"http://mary:" + pw + "@" + hostPort + "/",
		"https://mary:" + pw + "@" + hostPort + "/?level=strong",
		"http://" + (&url.URL{User: url.UserPassword("mary", pw)}).User.String() + "@" + hostPort,
		"http://a:4001,http://mary:" + pw + "@" + hostPort,
	}
}

func TestRedactURLHidesEveryPassword(t *testing.T) {
	for _, pw := range secrettest.Passwords() {
		for _, raw := range nodeURLs(pw, "127.0.0.1:4001") {
			got := DisplayName(raw)
			if s := secrettest.Leaks(got, pw); s != "" {
				t.Errorf("DisplayName(%q) = %q shows %q", raw, got, s)
			}
			if !strings.Contains(got, "127.0.0.1:4001") {
				t.Errorf("DisplayName(%q) = %q: the host is gone", raw, got)
			}
		}
	}
}

func TestRedactURLKeepsWhatIsNotSecret(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:4001":                       "http://127.0.0.1:4001",
		"http://127.0.0.1:4001/?level=strong":         "http://127.0.0.1:4001/?level=strong",
		"http://mary:secret@127.0.0.1:4001":           "http://mary:xxxxx@127.0.0.1:4001",
		"http://mary@127.0.0.1:4001":                  "http://mary@127.0.0.1:4001",
		"http://mary:se/cret@127.0.0.1:4001":          "http://xxxxx@127.0.0.1:4001",
		"http://mary:12/cret@127.0.0.1:4001/?level=x": "http://xxxxx@127.0.0.1:4001/?level=x",
		"http://127.0.0.1:4001/%zz":                   "http://127.0.0.1:4001/%zz",
	} {
		if got := redactURL(raw); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestOpenRqliteErrorsHidePasswords(t *testing.T) {
	addr := secrettest.ClosedPort(t)
	for _, pw := range secrettest.Passwords() {
		for _, raw := range nodeURLs(pw, addr)[:4] {
			db, err := OpenMemory(raw, true)
			if err == nil {
				db.Close()
				t.Fatalf("OpenMemory(%q) opened a closed port", raw)
			}
			msg := err.Error()
			if s := secrettest.Leaks(msg, pw); s != "" {
				t.Errorf("OpenMemory(%q): %q shows %q", raw, msg, s)
			}
			wantOneLine(t, msg)
		}
	}
}

func TestOpenRqliteRefusesWhatItCannotUse(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:1/?timeout=5":                 "timeout=",
		"http://127.0.0.1:1?timeout=30&level=strong":    "timeout=",
		"http://127.0.0.1:1/?levle=strong":              `"levle"`,
		"http://127.0.0.1:1/?level=eventual":            `level=eventual`,
		"http://127.0.0.1:1/?disableClusterDiscovery=y": "disableClusterDiscovery",
		"http://127.0.0.1:1/db":                         "path",
		"http://127.0.0.1:1/#x":                         "#",
		"http://mary:se/cret@127.0.0.1:1":               "percent-encode",
		"http://mary:12/cret@127.0.0.1:1":               "percent-encode",
		"http://mary:se cret@127.0.0.1:1":               "percent-encode",
		"http://":                                       "HOST:PORT",
	} {
		_, err := OpenRqlite(context.Background(), raw)
		if !errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenRqlite(%q) = %v; want ErrBadURL naming %q", raw, err, want)
			continue
		}
		if strings.Contains(err.Error(), "cret") {
			t.Errorf("OpenRqlite(%q): %v shows the password", raw, err)
		}
		wantOneLine(t, err.Error())
	}
}

func wantOneLine(t *testing.T, msg string) {
	t.Helper()
	if strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, `\n`) {
		t.Errorf("not one line: %q", msg)
	}
	for _, internal := range []string{"timeout=600", "timings", "transaction", "peer #", "tried all peers"} {
		if strings.Contains(msg, internal) {
			t.Errorf("%q shows the client's internal %q", msg, internal)
		}
	}
}

// limitRequests shortens the bounds of a request for one test.
func limitRequests(t *testing.T, read, write time.Duration, maxBody int64) {
	t.Helper()
	t.Cleanup(rqlite.SetLimits(read, write, maxBody))
}

// silentListener accepts connections and never answers them.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never read or answered
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

// fakeNode is an rqlite node's HTTP API: it names itself leader and other
// its follower, answers memdecay's probe, and does what query and execute
// say (nil: answer as a node would).
type fakeNode struct {
	other          string
	query, execute http.HandlerFunc
	executed       atomic.Int64
}

func (f *fakeNode) start(t *testing.T) *httptest.Server {
	t.Helper()
	var self string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/status":
			io.WriteString(w, `{"store":{"leader":{"node_id":"1"}}}`)
		case "/nodes":
			nodes := fmt.Sprintf(`{"1":{"api_addr":"http://%s","reachable":true,"leader":true}`, self)
			if f.other != "" {
				nodes += fmt.Sprintf(`,"2":{"api_addr":"http://%s","reachable":true,"leader":false}`, f.other)
			}
			io.WriteString(w, nodes+"}")
		case "/db/query":
			if f.query != nil {
				f.query(w, r)
				return
			}
			io.WriteString(w, `{"results":[{"columns":["w"],"types":["real"],"values":[[1.0]]}]}`)
		case "/db/execute", "/db/request":
			f.executed.Add(1)
			if f.execute != nil {
				f.execute(w, r)
				return
			}
			io.WriteString(w, `{"results":[{"rows_affected":1}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	self = srv.Listener.Addr().String()
	t.Cleanup(srv.Close)
	return srv
}

// hang answers nothing until the client gives up.
func hang(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // the server notices the client leave only once the body is read
	<-r.Context().Done()
}

// endless streams a body without end.
func endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"results":[{"columns":["w"],"values":[`)
	row := []byte(strings.Repeat(`[1.0],`, 1000))
	for r.Context().Err() == nil {
		if _, err := w.Write(row); err != nil {
			return
		}
	}
}

func TestRqliteNodeThatNeverAnswers(t *testing.T) {
	limitRequests(t, 300*time.Millisecond, 600*time.Millisecond, 1<<20)
	silent := silentListener(t)
	hangingQuery := (&fakeNode{query: hang}).start(t)
	for name, raw := range map[string]string{
		"accepts, never answers":         "http://" + silent,
		"answers /status, never a query": hangingQuery.URL,
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			db, err := OpenMemory(raw, true)
			if err == nil {
				db.Close()
				t.Fatal("opened a node that never answers")
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("gave up after %v", took)
			}
			if !strings.Contains(err.Error(), "no answer within 300ms") {
				t.Errorf("error does not say the node did not answer: %v", err)
			}
			wantOneLine(t, err.Error())
		})
	}
}

func TestRqliteEndlessAnswerIsCapped(t *testing.T) {
	limitRequests(t, 10*time.Second, 10*time.Second, 1<<20)
	endlessStatus := httptest.NewServer(http.HandlerFunc(endless))
	t.Cleanup(endlessStatus.Close)
	endlessQuery := (&fakeNode{query: endless}).start(t)
	for name, raw := range map[string]string{"/status": endlessStatus.URL, "/db/query": endlessQuery.URL} {
		t.Run(name, func(t *testing.T) {
			db, err := OpenMemory(raw, true)
			if err == nil {
				db.Close()
				t.Fatal("opened a node whose answer never ends")
			}
			if !strings.Contains(err.Error(), "answer larger than 1 MiB") {
				t.Errorf("error does not say the answer was too large: %v", err)
			}
			wantOneLine(t, err.Error())
		})
	}
}

// A write the leader does not answer in time is not sent again to another
// node, which would apply it a second time.
func TestRqliteWriteThatTimesOutIsNotResent(t *testing.T) {
	limitRequests(t, 5*time.Second, 500*time.Millisecond, 1<<20)
	follower := &fakeNode{}
	fsrv := follower.start(t)
	leader := &fakeNode{other: fsrv.Listener.Addr().String(), execute: hang}
	lsrv := leader.start(t)
	db, err := OpenRqlite(context.Background(), lsrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.SQL.ExecContext(context.Background(), `UPDATE mem_config SET value = '1' WHERE key = 'x'`)
	if err == nil || !strings.Contains(err.Error(), "no answer within 500ms") {
		t.Fatalf("want the write to time out, got %v", err)
	}
	wantOneLine(t, err.Error())
	if n, m := leader.executed.Load(), follower.executed.Load(); n != 1 || m != 0 {
		t.Errorf("the write was sent %d times to the leader and %d to the follower; want once, to the leader", n, m)
	}
}

func TestRqliteErrorsAreOneLine(t *testing.T) {
	node := (&fakeNode{execute: func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "leader not found\nretry later", http.StatusServiceUnavailable)
	}}).start(t)
	db, err := OpenRqlite(context.Background(), node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = db.SQL.ExecContext(ctx, `UPDATE mem_config SET value = '1' WHERE key = 'x'`)
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable: leader not found") {
		t.Fatalf("want the node's 503, got %v", err)
	}
	wantOneLine(t, err.Error())
}
