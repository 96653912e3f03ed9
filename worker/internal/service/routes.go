package service

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/readers"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweep"
)

// DecayRequest is POST /memory/graph/decay's body.
type DecayRequest struct {
	DryRun bool `json:"dryRun"`
}

// DecayResponse is its answer: reference 004's four counts, the sweep's id
// and its whole report (sweep --json's object).
type DecayResponse struct {
	Processed    int64          `json:"processed"`
	Decayed      int64          `json:"decayed"`
	BelowMinimum int64          `json:"belowMinimum"`
	Pinned       int64          `json:"pinned"`
	SweepID      int64          `json:"sweepId"`
	Report       *report.Report `json:"report"`
}

// ReferenceCounts are reference 004's counts of a sweep: the edges its
// relation policies processed, those they removed or excluded plus those
// the default curve decayed, those below their minimum, and the pinned
// ones they passed over.
func ReferenceCounts(rep *report.Report) DecayResponse {
	out := DecayResponse{Decayed: rep.EdgesDecayed, SweepID: rep.SweepID, Report: rep}
	for _, p := range rep.Policies {
		out.Processed += p.Processed
		out.Decayed += p.Decayed + p.Excluded
		out.BelowMinimum += p.BelowMinimum
		out.Pinned += p.Pinned
	}
	return out
}

// decay runs one sweep now, as memworker sweep does.
func (s *Server) decay(w http.ResponseWriter, r *http.Request) {
	if !only(w, r, http.MethodPost) {
		return
	}
	var req DecayRequest
	if !readBody(w, r, &req) {
		return
	}
	if !s.running.TryLock() {
		fail(w, http.StatusConflict, "a sweep requested here is already running; try again when it finishes")
		return
	}
	defer s.running.Unlock()
	db, err := s.open(false)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "opening the database: %v", err)
		return
	}
	defer db.Close()
	opt := s.opt.Sweep
	opt.DryRun = req.DryRun
	start := time.Now()
	rep, err := sweep.Sweep(s.ctx, db, opt)
	s.Observe(rep, time.Since(start), err, req.DryRun)
	switch {
	case errors.Is(err, memdb.ErrSweepRunning):
		reply(w, http.StatusConflict, map[string]any{"error": err.Error(), "sweepId": runningSweep(r.Context(), db)})
		return
	case err != nil:
		s.opt.Logger.Error("sweep on request failed", "err", err)
		fail(w, http.StatusInternalServerError, "sweep: %v", err)
		return
	}
	s.opt.Logger.Info("swept on request", append([]any{"dry_run", req.DryRun}, rep.LogAttrs()...)...)
	reply(w, http.StatusOK, ReferenceCounts(rep))
}

// runningSweep is the id of the sweep holding the lease, 0 when none is.
func runningSweep(ctx context.Context, db *memdb.DB) int64 {
	var id sql.NullInt64
	db.SQL.QueryRowContext(ctx, `SELECT max(id) FROM mem_sweeps WHERE `+store.HeldSQL).Scan(&id)
	return id.Int64
}

// readBody reads one JSON object of at most MaxBody bytes into v, unknown
// fields refused; on a problem it answers 400 or 413 and says false.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, "%s: the body is over %d bytes", r.URL.Path, MaxBody)
		return false
	case err != nil:
		fail(w, http.StatusBadRequest, "%s: reading the body: %v", r.URL.Path, err)
		return false
	case len(bytes.TrimSpace(body)) == 0:
		fail(w, http.StatusBadRequest, `%s: want a JSON object such as {"dryRun": true}`, r.URL.Path)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "%s: the body: %v", r.URL.Path, err)
		return false
	}
	if dec.More() {
		fail(w, http.StatusBadRequest, "%s: the body holds more than one JSON value", r.URL.Path)
		return false
	}
	return true
}

// Edge is one edge as reference 004 lists it, with its weight now.
type Edge struct {
	From            string  `json:"from"`
	To              string  `json:"to"`
	Type            string  `json:"type"`
	Weight          float64 `json:"weight"`
	EffectiveWeight float64 `json:"effectiveWeight"`
	// LastObserved is the time as the app wrote it (text or unix seconds).
	LastObserved any `json:"lastObserved"`
	// Key is the edge's key, the after of the next page's request.
	Key string `json:"key"`
}

// Pages of GET /memory/graph/edges.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

// edges lists the decayed edges (decayed=true) or the live ones, a page
// at a time in key order: after is the key of the last edge of the page
// before, also given in the X-Next-After header.
func (s *Server) edges(w http.ResponseWriter, r *http.Request) {
	if !only(w, r, http.MethodGet) {
		return
	}
	q := r.URL.Query()
	state := "live"
	switch q.Get("decayed") {
	case "true", "1":
		state = "decayed"
	case "", "false", "0":
	default:
		fail(w, http.StatusBadRequest, "decayed=%q: want true or false", q.Get("decayed"))
		return
	}
	limit := defaultLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			fail(w, http.StatusBadRequest, "limit=%q: want a whole number from 1 to %d", v, maxLimit)
			return
		}
		limit = n
	}
	var after [2]string
	if v := q.Get("after"); v != "" {
		var key []string
		if err := json.Unmarshal([]byte(v), &key); err != nil || len(key) != 2 {
			fail(w, http.StatusBadRequest, "after=%q: want the key of an edge as the last page gave it", v)
			return
		}
		after = [2]string{key[0], key[1]}
	}
	db, err := s.open(true)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "opening the database: %v", err)
		return
	}
	defer db.Close()
	list := []Edge{}
	err = adapter.WithEffectiveViews(r.Context(), db, func(v adapter.ViewsReader) error {
		rows, err := v.Q.QueryContext(r.Context(), v.Tables.Expand(`
			SELECT CAST(v.end_a AS TEXT), CAST(v.end_b AS TEXT), coalesce(v.relation_type, ''), v.weight, v.effective_weight,
			       e.last_observed_at, CAST(v.from_id AS TEXT), CAST(v.to_id AS TEXT)
			FROM `+v.Effective+` v JOIN @EDGES e ON e.@KEY_A = v.@KEY_A AND e.@KEY_B = v.@KEY_B
			WHERE v.state = ? AND (CAST(v.from_id AS TEXT), CAST(v.to_id AS TEXT)) > (?, ?)
			ORDER BY CAST(v.from_id AS TEXT), CAST(v.to_id AS TEXT) LIMIT ?`), state, after[0], after[1], limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e Edge
			var k1, k2 string
			if err := rows.Scan(&e.From, &e.To, &e.Type, &e.Weight, &e.EffectiveWeight, &e.LastObserved, &k1, &k2); err != nil {
				return err
			}
			if b, ok := e.LastObserved.([]byte); ok {
				e.LastObserved = string(b)
			}
			key, _ := json.Marshal([]string{k1, k2})
			e.Key = string(key)
			list = append(list, e)
		}
		return rows.Err()
	})
	if err != nil {
		fail(w, http.StatusInternalServerError, "listing the %s edges: %v", state, err)
		return
	}
	if len(list) == limit {
		w.Header().Set("X-Next-After", list[len(list)-1].Key)
	}
	reply(w, http.StatusOK, list)
}

// Health is GET /healthz's answer.
type Health struct {
	Status        string  `json:"status"` // ok, or unavailable
	Error         string  `json:"error,omitempty"`
	SchemaVersion uint    `json:"schema_version,omitempty"`
	LastSweep     *Sweep  `json:"last_sweep,omitempty"`
	LeaseHolder   *string `json:"lease_holder"` // who holds the lease now, if anyone
}

// Sweep is the last sweep, as health tells it.
type Sweep struct {
	ID         int64   `json:"id"`
	Status     string  `json:"status"`
	AgeSeconds float64 `json:"age_seconds"` // since it started
}

// healthz answers 200 while the database answers, 503 with the cause when
// it does not.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if !only(w, r, http.MethodGet) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	h, err := s.health(ctx)
	if err != nil {
		reply(w, http.StatusServiceUnavailable, Health{Status: "unavailable", Error: err.Error()})
		return
	}
	reply(w, http.StatusOK, h)
}

func (s *Server) health(ctx context.Context) (*Health, error) {
	db, err := memdb.OpenMemory(s.opt.Path, true)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st, err := readers.GetStatus(ctx, db)
	if err != nil {
		return nil, err
	}
	h := &Health{Status: "ok", SchemaVersion: st.SchemaVersion}
	if ls := st.LastSweep; ls != nil {
		h.LastSweep = &Sweep{ID: ls.ID, Status: ls.Status, AgeSeconds: time.Since(time.Unix(ls.StartedAt, 0)).Seconds()}
	}
	var owner sql.NullString
	err = db.SQL.QueryRowContext(ctx, `SELECT owner FROM mem_sweeps WHERE `+store.HeldSQL+` AND lease_until > ? ORDER BY id DESC LIMIT 1`,
		time.Now().Unix()).Scan(&owner)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if owner.Valid {
		h.LeaseHolder = &owner.String
	}
	return h, nil
}

// readyz answers 200 once the database is migrated and its mapping fits
// its schema (a sweep could run), 503 with the cause until then.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !only(w, r, http.MethodGet) {
		return
	}
	db, err := memdb.OpenMemory(s.opt.Path, true)
	if err == nil {
		_, err = adapter.AdaptMapping(r.Context(), db, db.Rqlite)
		db.Close()
	}
	if err != nil {
		reply(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
		return
	}
	reply(w, http.StatusOK, map[string]string{"status": "ready"})
}

// serveMetrics reads the database's gauges, then writes every metric.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if !only(w, r, http.MethodGet) {
		return
	}
	if db, err := memdb.OpenMemory(s.opt.Path, true); err == nil {
		if st, err := readers.GetStatus(r.Context(), db); err == nil {
			s.metrics.edges.Set(float64(st.Edges))
			s.metrics.walBytes.Set(0)
			if st.WALBytes != nil {
				s.metrics.walBytes.Set(float64(*st.WALBytes))
			}
		}
		db.Close()
	}
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// isInterrupted reports whether err is a sweep cut short by its context.
func isInterrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
