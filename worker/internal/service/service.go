// Package service is memworker run's HTTP face (run --listen): reference
// 004's decay API (a sweep on request, the decayed and live edges), a
// health and a readiness probe, and Prometheus metrics of every sweep the
// process runs, on its schedule or on request. Each request opens the
// database as the CLI does; a sweep on request is the sweep memworker
// sweep runs, under the same lease.
package service

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/sweep"
)

// MaxBody is the largest request body a route reads.
const MaxBody = 1 << 20

// Options configure a server.
type Options struct {
	Path   string        // the database: a file, or one rqlite cluster's URL
	Sweep  sweep.Options // the sweep a request runs (run's flags); DryRun is the request's
	Token  string        // when set, every route but /healthz wants "Authorization: Bearer Token"
	Logger *slog.Logger
}

// Server serves one database. Its zero value is not usable: use New.
type Server struct {
	opt     Options
	metrics *metrics
	mux     *http.ServeMux
	// ctx is the process's: a sweep on request is cut as the daemon's is,
	// on SIGTERM, not when its client goes away.
	ctx context.Context
	// running serialises this process's sweeps on request; the lease
	// serialises them with every other sweep.
	running sync.Mutex
}

// New is a server of opt.Path whose sweeps on request stop when ctx ends.
func New(ctx context.Context, opt Options) *Server {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	s := &Server{opt: opt, metrics: newMetrics(), mux: http.NewServeMux(), ctx: ctx}
	s.mux.HandleFunc("/memory/graph/decay", s.decay)
	s.mux.HandleFunc("/memory/graph/edges", s.edges)
	s.mux.HandleFunc("/healthz", s.healthz)
	s.mux.HandleFunc("/readyz", s.readyz)
	s.mux.HandleFunc("/metrics", s.serveMetrics)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "no route %s (see docs/running.md)", r.URL.Path)
	})
	return s
}

// Registry is the server's Prometheus registry (its own, not the
// process-wide default).
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// ServeHTTP checks the token, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opt.Token != "" && r.URL.Path != "/healthz" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memworker"`)
		fail(w, http.StatusUnauthorized, "%s: want the header Authorization: Bearer <token> (MEMWORKER_TOKEN)", r.URL.Path)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized compares the bearer token in constant time.
func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.opt.Token)) == 1
}

// Observe records a sweep's outcome in the metrics: its report (nil when
// it failed), how long it took, and its error.
func (s *Server) Observe(rep *report.Report, took time.Duration, err error, dryRun bool) {
	s.metrics.observe(rep, took, err, dryRun)
}

// Serve listens on addr and serves until ctx ends, then shuts down,
// letting requests in flight finish for up to grace. It logs where it
// listens, and whether beyond this machine.
func (s *Server) Serve(ctx context.Context, addr string, grace time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	return s.ServeListener(ctx, ln, grace)
}

// ServeListener is Serve on a listener already open.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener, grace time.Duration) error {
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	reach := "this machine only (loopback)"
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		reach = "every interface: reachable from other machines"
	}
	s.opt.Logger.Info("serving HTTP", "addr", ln.Addr().String(), "reach", reach, "token", s.opt.Token != "")
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.opt.Logger.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// fail writes a one-line JSON error.
func fail(w http.ResponseWriter, code int, format string, a ...any) {
	reply(w, code, map[string]string{"error": fmt.Sprintf(format, a...)})
}

// reply writes v as JSON with code.
func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.Encode(v) // a client gone mid-reply is not an error of ours
}

// only answers 405 unless r's method is method.
func only(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || method == http.MethodGet && r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", method)
	fail(w, http.StatusMethodNotAllowed, "%s %s: want %s", r.Method, r.URL.Path, method)
	return false
}

// open opens the database for a request, read-only when it only reads.
func (s *Server) open(readOnly bool) (*memdb.DB, error) {
	return memdb.OpenMemory(s.opt.Path, readOnly)
}
