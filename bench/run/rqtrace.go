package main

// -rqlite-trace: where a cluster sweep's time goes. One more run of each
// rqlite scenario, apart from the timed ones, sends memworker's requests
// through a recording proxy in front of the leader (which asks rqlite for
// its timings), runs the sweep with MEMWORKER_TRACE for its phases, and
// diffs the nodes' counters (/debug/vars) across the sweep.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// requestRecord is one request memworker made.
type requestRecord struct {
	start    time.Time
	took     time.Duration // the proxy's round trip to the leader
	kind     string        // the endpoint and its statements (requestKind)
	stmts    int
	sent     int     // request body, bytes
	received int     // response body, bytes
	node     float64 // the leader's own time for the request, s (rqlite's "time")
	sqlite   float64 // its statements' execution, s (the results' "time")
}

// recorder is a reverse proxy that records every request.
type recorder struct {
	target string
	mu     sync.Mutex
	reqs   []requestRecord
}

var rqClientNoRedirect = &http.Client{
	Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 8},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	q := r.URL.Query()
	if strings.HasPrefix(r.URL.Path, "/db/") {
		q.Set("timings", "true")
	}
	u := rec.target + r.URL.Path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	start := time.Now()
	resp, err := rqClientNoRedirect.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	kind, n := requestKind(r.URL.Path, body)
	rr := requestRecord{start: start, took: took, kind: kind, stmts: n, sent: len(body), received: len(out)}
	rr.node, rr.sqlite = responseTimes(out)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, rr)
	rec.mu.Unlock()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

func (rec *recorder) records() []requestRecord {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]requestRecord(nil), rec.reqs...)
}

// startRecorder serves a recorder for target on a loopback port.
func startRecorder(target string) (*recorder, string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	rec := &recorder{target: target}
	srv := &http.Server{Handler: rec}
	go srv.Serve(ln)
	return rec, "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// statementTarget finds what a statement writes or creates.
var statementTarget = regexp.MustCompile(`(?is)\b(INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM|` +
	`CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|VIEW)(?:\s+IF\s+NOT\s+EXISTS)?|DROP\s+(?:TABLE|INDEX|VIEW)(?:\s+IF\s+EXISTS)?)\s+([\w.]+)`)

// requestKind names a request by its endpoint and, for /db/ requests,
// what each statement writes ("SELECT" for a read), repeats counted:
// "/db/execute: DELETE mem_work_apply_rows; INSERT main.mem_events ×2".
func requestKind(path string, body []byte) (string, int) {
	if !strings.HasPrefix(path, "/db/") {
		return path, 0
	}
	var stmts []json.RawMessage
	if json.Unmarshal(body, &stmts) != nil {
		return path, 0
	}
	var names []string
	for _, raw := range stmts {
		var sql string
		if json.Unmarshal(raw, &sql) != nil {
			var parts []json.RawMessage
			if json.Unmarshal(raw, &parts) == nil && len(parts) > 0 {
				json.Unmarshal(parts[0], &sql)
			}
		}
		names = append(names, statementName(sql))
	}
	var b strings.Builder
	b.WriteString(path + ":")
	for i := 0; i < len(names); {
		j := i
		for j < len(names) && names[j] == names[i] {
			j++
		}
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(" " + names[i])
		if j-i > 1 {
			fmt.Fprintf(&b, " ×%d", j-i)
		}
		i = j
	}
	return b.String(), len(stmts)
}

func statementName(sql string) string {
	if m := statementTarget.FindStringSubmatch(sql); m != nil {
		verb := strings.ToUpper(strings.Fields(m[1])[0])
		return verb + " " + m[2]
	}
	if f := strings.Fields(sql); len(f) > 0 {
		return strings.ToUpper(f[0])
	}
	return "?"
}

// responseTimes reads rqlite's timings from a response: the request's own
// time and the sum of its statements'.
func responseTimes(body []byte) (node, sqlite float64) {
	var r struct {
		Results []struct {
			Time float64 `json:"time"`
		} `json:"results"`
		Time float64 `json:"time"`
	}
	if json.Unmarshal(body, &r) != nil {
		return 0, 0
	}
	for _, x := range r.Results {
		sqlite += x.Time
	}
	return r.Time, sqlite
}

// nodeCounters reads a node's integer counters from /debug/vars: the
// maps store, snapshot, db and http, as "map.key".
func nodeCounters(ctx context.Context, nodeURL string) (map[string]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, nodeURL+"/debug/vars", nil)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := roundTrip(req, &out); err != nil {
		return nil, err
	}
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &vars); err != nil {
		return nil, err
	}
	counters := map[string]int64{}
	for _, m := range []string{"store", "snapshot", "db", "http"} {
		var kv map[string]json.RawMessage
		if json.Unmarshal(vars[m], &kv) != nil {
			continue
		}
		for k, v := range kv {
			var n int64
			if json.Unmarshal(v, &n) == nil {
				counters[m+"."+k] = n
			}
		}
	}
	return counters, nil
}

// counterDiff lists the counters that changed, "name +n" (or "name n"
// for the store's last-duration gauges), sorted.
func counterDiff(before, after map[string]int64) []string {
	var out []string
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			if strings.HasSuffix(k, "_duration") || strings.HasSuffix(k, "_duration_us") {
				out = append(out, fmt.Sprintf("%s %d", k, v))
			} else {
				out = append(out, fmt.Sprintf("%s %+d", k, d))
			}
		}
	}
	sort.Strings(out)
	return out
}

// tracedPhase is one "memworker trace: phase" line of a sweep.
type tracedPhase struct {
	name       string
	took       time.Duration
	start, end time.Time // time of day only
}

var phaseLine = regexp.MustCompile(`(?m)^memworker trace: phase (.+) (\S+) \((\d\d:\d\d:\d\d\.\d+) to (\d\d:\d\d:\d\d\.\d+)\)$`)

// parsePhases reads the phases MEMWORKER_TRACE prints.
func parsePhases(stderr string) []tracedPhase {
	var out []tracedPhase
	for _, m := range phaseLine.FindAllStringSubmatch(stderr, -1) {
		d, err1 := time.ParseDuration(m[2])
		s, err2 := time.Parse("15:04:05.000", m[3])
		e, err3 := time.Parse("15:04:05.000", m[4])
		if err1 == nil && err2 == nil && err3 == nil {
			out = append(out, tracedPhase{name: m[1], took: d, start: s, end: e})
		}
	}
	return out
}

// timeOfDay drops the date, to compare with a traced phase's bounds.
func timeOfDay(t time.Time) time.Time {
	d, _ := time.Parse("15:04:05.000", t.Format("15:04:05.000"))
	return d
}

// rqliteTrace is what one traced cluster sweep showed.
type rqliteTrace struct {
	Seconds  float64
	Requests []requestRecord
	Phases   []tracedPhase
	Counters map[string][]string // by node ("leader", "follower n")
}

// requestSums adds up requests.
type requestSums struct {
	name                 string
	count, stmts         int
	sent, maxSent, recvd int
	took                 time.Duration
	node, sqlite         float64
}

func (s *requestSums) add(r requestRecord) {
	s.count++
	s.stmts += r.stmts
	s.sent += r.sent
	s.maxSent = max(s.maxSent, r.sent)
	s.recvd += r.received
	s.took += r.took
	s.node += r.node
	s.sqlite += r.sqlite
}

// byPhase sums the requests that began in each phase, in the phases'
// order, then those outside every phase.
func (tr *rqliteTrace) byPhase() []requestSums {
	out := make([]requestSums, len(tr.Phases)+1)
	for i, p := range tr.Phases {
		out[i].name = p.name
	}
	out[len(tr.Phases)].name = "outside the phases (lease, settings, settle)"
	for _, r := range tr.Requests {
		at, i := timeOfDay(r.start), len(tr.Phases)
		for j, p := range tr.Phases {
			if !at.Before(p.start) && !at.After(p.end) {
				i = j
				break
			}
		}
		out[i].add(r)
	}
	return out
}

// byKind sums the requests of each kind, most time first.
func (tr *rqliteTrace) byKind() []requestSums {
	idx := map[string]int{}
	var out []requestSums
	for _, r := range tr.Requests {
		i, ok := idx[r.kind]
		if !ok {
			i = len(out)
			idx[r.kind] = i
			out = append(out, requestSums{name: r.kind})
		}
		out[i].add(r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].took > out[j].took })
	return out
}

// traceKinds is how many request kinds the report lists.
const traceKinds = 12

// markdown writes a traced sweep's tables.
func (tr *rqliteTrace) markdown(b *strings.Builder, scenario string) {
	var all requestSums
	for _, r := range tr.Requests {
		all.add(r)
	}
	var longest requestRecord
	for _, r := range tr.Requests {
		if r.took > longest.took {
			longest = r
		}
	}
	fmt.Fprintf(b, "\n#### Where the cluster's time goes: %s (`-rqlite-trace`)\n\n", scenario)
	fmt.Fprintf(b, "One more cluster sweep, through a recording proxy in front of the leader, with `MEMWORKER_TRACE`: %s s "+
		"(the proxy's hop included); %s requests, %.1f MB sent (largest %.1f KB), %.1f MB received; "+
		"%.2f s waiting for answers, of which the leader handled %.2f s and ran its statements for %.2f s; "+
		"the longest request took %s s (%s).\n\n",
		secs(tr.Seconds), thousands(int64(all.count)), float64(all.sent)/(1<<20), float64(all.maxSent)/1024,
		float64(all.recvd)/(1<<20), all.took.Seconds(), all.node, all.sqlite, secs(longest.took.Seconds()), longest.kind)
	fmt.Fprint(b, "| phase | wall (s) | requests | waiting for answers (s) | leader's handling (s) | leader's statements (s) |\n"+
		"|---|---:|---:|---:|---:|---:|\n")
	for i, s := range tr.byPhase() {
		wall := "–"
		if i < len(tr.Phases) {
			wall = secs(tr.Phases[i].took.Seconds())
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s |\n", s.name, wall, s.count, secs(s.took.Seconds()), secs(s.node), secs(s.sqlite))
	}
	fmt.Fprint(b, "\nRequests by what their statements write, most time first:\n\n"+
		"| request | count | statements | KB sent (largest) | waiting (s) | leader's handling (s) | leader's statements (s) |\n"+
		"|---|---:|---:|---:|---:|---:|---:|\n")
	kinds := tr.byKind()
	for i, s := range kinds {
		if i == traceKinds {
			var rest requestSums
			for _, t := range kinds[i:] {
				rest.count += t.count
				rest.stmts += t.stmts
				rest.maxSent = max(rest.maxSent, t.maxSent)
				rest.took += t.took
				rest.node += t.node
				rest.sqlite += t.sqlite
			}
			rest.name = fmt.Sprintf("%d other kinds", len(kinds)-i)
			s = rest
		}
		fmt.Fprintf(b, "| %s | %d | %d | %.1f | %s | %s | %s |\n", strings.ReplaceAll(s.name, "|", "\\|"), s.count, s.stmts,
			float64(s.maxSent)/1024, secs(s.took.Seconds()), secs(s.node), secs(s.sqlite))
		if i == traceKinds {
			break
		}
	}
	roles := make([]string, 0, len(tr.Counters))
	for role := range tr.Counters {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	fmt.Fprint(b, "\nNode counters (`/debug/vars`) that changed during the sweep:\n\n")
	for _, role := range roles {
		fmt.Fprintf(b, "- %s: %s\n", role, strings.Join(tr.Counters[role], ", "))
	}
}
