package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/memdecay/memdecay/worker"
)

// serviceWall is the wall clock the service's sweeps run at.
var serviceWall = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// newTestService serves path in-process, its sweeps at serviceWall.
func newTestService(t *testing.T, path, token string) *httptest.Server {
	t.Helper()
	wall := serviceWall
	srv := worker.NewService(context.Background(), worker.ServiceOptions{Path: path, Token: token,
		Sweep: worker.SweepOptions{WallNow: &wall}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

// call makes a request and returns the status and the body.
func call(t *testing.T, method, url, token, body string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// wantError checks a 4xx answer: its code and a one-line JSON error.
func wantError(t *testing.T, what string, code int, body []byte, want int) {
	t.Helper()
	var e struct{ Error string }
	if code != want || json.Unmarshal(body, &e) != nil || e.Error == "" || strings.Count(strings.TrimSpace(string(body)), "\n") > 0 {
		t.Errorf("%s: %d %s, want %d and a one-line JSON error", what, code, body, want)
	}
}

// TestServiceDecayMatchesSweep: the dry-run trigger answers reference
// 004's counts and changes no byte; the real one does what memworker sweep
// does on a copy at the same clock; bad requests get 4xx.
func TestServiceDecayMatchesSweep(t *testing.T) {
	path := demoDB(t)
	exec1(t, path, `INSERT OR REPLACE INTO mem_edge_policies (relation_type, model, params, clock, threshold, action)
		VALUES ('works_on', 'half_life', '{"half_life":"30d"}', 'wall', 0.5, 'delete')`)
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	exec1(t, path, `VACUUM INTO ?`, copyPath)
	ts := newTestService(t, path, "")
	before := bytesOf(t, path)
	code, body, _ := call(t, "POST", ts.URL+"/memory/graph/decay", "", `{"dryRun": true}`)
	var dry worker.DecayResponse
	if code != 200 || json.Unmarshal(body, &dry) != nil || dry.Report == nil || !dry.Report.DryRun {
		t.Fatalf("dry run: %d %s", code, body)
	}
	if bytesOf(t, path) != before {
		t.Fatal("the dry-run trigger changed the file")
	}
	if dry.Processed == 0 || dry.Decayed == 0 {
		t.Errorf("dry run: processed %d, decayed %d: want the works_on policy's edges", dry.Processed, dry.Decayed)
	}

	code, body, _ = call(t, "POST", ts.URL+"/memory/graph/decay", "", `{"dryRun": false}`)
	var real worker.DecayResponse
	if code != 200 || json.Unmarshal(body, &real) != nil || real.Report == nil || real.SweepID == 0 {
		t.Fatalf("sweep: %d %s", code, body)
	}
	if real.Processed != dry.Processed || real.Decayed != dry.Decayed || real.BelowMinimum != dry.BelowMinimum || real.Pinned != dry.Pinned {
		t.Errorf("the sweep's counts %+v differ from its dry run's %+v", real, dry)
	}
	cli := decodeJSON(t, ok(t, "sweep", "--json", "--wall-now", serviceWall.Format(time.RFC3339), "--db", copyPath))
	for _, k := range []string{"archived", "edges_pruned", "edges_decayed", "edges_removed", "total_edges_after", "reinforced"} {
		got := map[string]any{}
		b, _ := json.Marshal(real.Report)
		json.Unmarshal(b, &got)
		if got[k] != cli[k] {
			t.Errorf("%s: %v through the API, %v by memworker sweep", k, got[k], cli[k])
		}
	}
	edges := `SELECT group_concat(from_id || '>' || to_id, ' ') FROM (SELECT * FROM mem_edges ORDER BY 1, 2)`
	if a, b := queryOne(t, path, edges), queryOne(t, copyPath, edges); a != b {
		t.Errorf("edges left: %s through the API, %s by memworker sweep", a, b)
	}

	// Bad requests.
	for _, c := range []struct{ what, method, body string }{
		{"bad JSON", "POST", `{"dryRun": tru`}, {"an unknown field", "POST", `{"dryRun": true, "force": 1}`},
		{"two values", "POST", `{"dryRun": true} {}`}, {"no body", "POST", ``}, {"a wrong type", "POST", `{"dryRun": "yes"}`},
	} {
		code, body, _ := call(t, c.method, ts.URL+"/memory/graph/decay", "", c.body)
		wantError(t, c.what, code, body, 400)
	}
	code, body, _ = call(t, "POST", ts.URL+"/memory/graph/decay", "", `{"dryRun": true, "pad": "`+strings.Repeat("x", 8<<20)+`"}`)
	wantError(t, "an 8 MB body", code, body, 413)
	code, body, hdr := call(t, "GET", ts.URL+"/memory/graph/decay", "", "")
	wantError(t, "GET on the trigger", code, body, 405)
	if hdr.Get("Allow") != "POST" {
		t.Errorf("405 without Allow: POST (%q)", hdr.Get("Allow"))
	}
	code, body, _ = call(t, "GET", ts.URL+"/memory/graph/edges?decayed=maybe", "", "")
	wantError(t, "decayed=maybe", code, body, 400)
	code, body, _ = call(t, "GET", ts.URL+"/memory/graph/edges?limit=0", "", "")
	wantError(t, "limit=0", code, body, 400)
	code, body, _ = call(t, "GET", ts.URL+"/nowhere", "", "")
	wantError(t, "an unknown route", code, body, 404)
}

// TestServiceHealthEdgesMetrics: health and readiness, the edges in
// reference 004's shape a page at a time, and the metrics as Prometheus
// text, their counts those of the sweeps.
func TestServiceHealthEdgesMetrics(t *testing.T) {
	path := demoDB(t)
	ts := newTestService(t, path, "")
	code, body, _ := call(t, "GET", ts.URL+"/healthz", "", "")
	var h worker.Health
	if code != 200 || json.Unmarshal(body, &h) != nil || h.Status != "ok" || h.SchemaVersion == 0 || h.LastSweep == nil {
		t.Errorf("healthz: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/readyz", "", ""); code != 200 {
		t.Errorf("readyz: %d %s", code, body)
	}

	// Every decayed edge, two a page.
	var all []worker.ServiceEdge
	after := ""
	for page := 0; ; page++ {
		url := ts.URL + "/memory/graph/edges?decayed=true&limit=2"
		if after != "" {
			url += "&after=" + after
		}
		code, body, hdr := call(t, "GET", url, "", "")
		var list []worker.ServiceEdge
		if code != 200 || json.Unmarshal(body, &list) != nil {
			t.Fatalf("edges page %d: %d %s", page, code, body)
		}
		for _, e := range list {
			if e.From == "" || e.To == "" || e.Type == "" || e.EffectiveWeight > e.Weight {
				t.Errorf("edge %+v: want reference 004's fields", e)
			}
		}
		all = append(all, list...)
		if after = hdr.Get("X-Next-After"); after == "" || page > 20 {
			break
		}
		after = strings.NewReplacer(`"`, "%22", "[", "%5B", "]", "%5D", ",", "%2C").Replace(after)
	}
	want := queryOne(t, path, `SELECT count(*) FROM mem_edges_decayed`)
	if fmt.Sprint(len(all)) != want || len(all) == 0 {
		t.Errorf("%d decayed edges listed, mem_edges_decayed holds %s", len(all), want)
	}
	code, body, _ = call(t, "GET", ts.URL+"/memory/graph/edges", "", "")
	var live []worker.ServiceEdge
	if code != 200 || json.Unmarshal(body, &live) != nil || fmt.Sprint(len(live)) != queryOne(t, path, `SELECT count(*) FROM mem_edges_live`) {
		t.Errorf("live edges: %d %s", code, body)
	}

	// The metrics count the sweeps this process ran.
	call(t, "POST", ts.URL+"/memory/graph/decay", "", `{"dryRun": false}`)
	call(t, "POST", ts.URL+"/memory/graph/decay", "", `{"dryRun": true}`)
	families := scrape(t, ts.URL, "")
	for _, name := range []string{"memworker_sweeps_total", "memworker_sweep_duration_seconds", "memworker_rows_removed_total",
		"memworker_last_sweep_success_timestamp_seconds", "memworker_invalid_rows", "memworker_edges", "memworker_wal_bytes", "go_goroutines"} {
		if families[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if count(t, families, "memworker_sweeps_total", "status", "done") != 1 || count(t, families, "memworker_sweeps_total", "status", "dry_run") != 1 {
		t.Errorf("sweeps_total: want one done and one dry run")
	}
	if got := families["memworker_edges"].GetMetric()[0].GetGauge().GetValue(); fmt.Sprint(got) != queryOne(t, path, `SELECT count(*) FROM mem_edges`) {
		t.Errorf("memworker_edges %v", got)
	}
}

// scrape reads /metrics as Prometheus text.
func scrape(t *testing.T, base, token string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body, _ := call(t, "GET", base+"/metrics", token, "")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return families
}

// TestServiceThroughMapping: the edges of an app's own tables, with the
// time of observation as the app wrote it.
func TestServiceThroughMapping(t *testing.T) {
	path := ownTermsApp(t)
	file := filepath.Join(t.TempDir(), "memory.toml")
	if err := os.WriteFile(file, []byte(ownTermsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	ok(t, "migrate", "up", "--db", path)
	ok(t, "map", "load", file, "--db", path)
	exec1(t, path, `UPDATE mem_config SET value = ? WHERE key = 'wall_clock'`, ownTermsWall.Unix())
	ts := newTestService(t, path, "")
	code, body, _ := call(t, "GET", ts.URL+"/memory/graph/edges?decayed=true", "", "")
	var list []worker.ServiceEdge
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 {
		t.Fatalf("decayed links: %d %s, want link 1", code, body)
	}
	if e := list[0]; e.From != "note-128" || e.To != "goal-385" || e.Type != "cites" || e.LastObserved != ownTermsISO(190) {
		t.Errorf("link 1 listed as %+v, want note-128 → goal-385, cites, last observed %s as the app wrote it", e, ownTermsISO(190))
	}
}

// TestServiceToken: with a token, every route but /healthz wants it.
func TestServiceToken(t *testing.T) {
	ts := newTestService(t, demoDB(t), "s3cret-token")
	for _, token := range []string{"", "wrong"} {
		code, body, hdr := call(t, "GET", ts.URL+"/metrics", token, "")
		wantError(t, "metrics with token "+token, code, body, 401)
		if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
			t.Error("401 without WWW-Authenticate: Bearer")
		}
		code, body, _ = call(t, "POST", ts.URL+"/memory/graph/decay", token, `{"dryRun": true}`)
		wantError(t, "decay with token "+token, code, body, 401)
	}
	if code, _, _ := call(t, "GET", ts.URL+"/healthz", "", ""); code != 200 {
		t.Errorf("healthz without the token: %d", code)
	}
	if code, body, _ := call(t, "POST", ts.URL+"/memory/graph/decay", "s3cret-token", `{"dryRun": true}`); code != 200 {
		t.Errorf("decay with the token: %d %s", code, body)
	}
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRunListenBinary: the built memworker run --listen, probed by a real
// client, the curl examples of docs/running.md run against it as written,
// the token never in its log, and SIGTERM ends it with exit 0.
func TestRunListenBinary(t *testing.T) {
	path := demoDB(t)
	addr := freePort(t)
	const token = "tok-9f8e7d6c5b4a"
	cmd := exec.Command(binary(t), "run", "--db", path, "--every", "1h", "--listen", addr, "--wall-now", serviceWall.Format(time.RFC3339))
	cmd.Env = append(os.Environ(), "MEMWORKER_TOKEN="+token)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	base := "http://" + addr
	for i := 0; ; i++ { // until it listens
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("memworker run exited: %v\n%s", err, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	code, body, _ := call(t, "GET", base+"/healthz", "", "")
	if code != 200 || !json.Valid(body) {
		t.Errorf("healthz: %d %s", code, body)
	}
	for _, tok := range []string{"", "wrong"} {
		if code, _, _ := call(t, "GET", base+"/readyz", tok, ""); code != 401 {
			t.Errorf("readyz with token %q: %d, want 401", tok, code)
		}
	}
	if code, _, _ := call(t, "GET", base+"/readyz", token, ""); code != 200 {
		t.Errorf("readyz with the token: %d", code)
	}
	for _, line := range runningCurls(t) {
		sh := exec.Command("bash", "-euo", "pipefail", "-c", line)
		sh.Env = append(os.Environ(), "MEMWORKER_URL="+base, "MEMWORKER_TOKEN="+token)
		if out, err := sh.CombinedOutput(); err != nil || len(out) == 0 {
			t.Errorf("docs/running.md's\n%s\nfailed: %v\n%s", line, err, out)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Errorf("after SIGTERM: %v, want exit 0\n%s", err, logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Error("the token is in the log")
	}
	for _, want := range []string{"serving HTTP", "this machine only", "swept on request", "edges_policy_decayed="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// runningCurls are the curl lines of docs/running.md's API examples.
func runningCurls(t *testing.T) []string {
	t.Helper()
	text, err := os.ReadFile("../../docs/running.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "curl ") && strings.Contains(l, "$MEMWORKER_URL") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 4 {
		t.Fatalf("docs/running.md has %d curl examples", len(lines))
	}
	return lines
}

// TestRunListenRefusesFleet: --listen serves one database.
func TestRunListenRefusesFleet(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.db", "b.db"} {
		ok(t, "demo", "--db", filepath.Join(dir, n))
	}
	wantUsage(t, mw(t, "run", "--db", filepath.Join(dir, "*.db"), "--every", "1h", "--listen", "127.0.0.1:0"), "--listen serves one database")
	wantUsage(t, mw(t, "run", "--db", filepath.Join(dir, "a.db"), "--every", "1h", "--token-file", "x"), "--token-file needs --listen")
}

// TestServiceDecayWhileASweepRuns: while another worker holds the lease,
// the trigger answers 409 with that sweep's id and sweeps nothing.
func TestServiceDecayWhileASweepRuns(t *testing.T) {
	path := demoDB(t)
	exec1(t, path, `INSERT INTO mem_sweeps (id, started_at, status, lease_until, owner) VALUES (99, ?, 'running', ?, 'worker on another host')`,
		time.Now().Unix(), time.Now().Add(time.Hour).Unix())
	ts := newTestService(t, path, "")
	before := bytesOf(t, path)
	code, body, _ := call(t, "POST", ts.URL+"/memory/graph/decay", "", `{"dryRun": false}`)
	var busy struct {
		Error   string
		SweepID int64 `json:"sweepId"`
	}
	if code != 409 || json.Unmarshal(body, &busy) != nil || busy.SweepID != 99 || !strings.Contains(busy.Error, "already running") {
		t.Errorf("a sweep while another holds the lease: %d %s, want 409 naming sweep 99", code, body)
	}
	if bytesOf(t, path) != before {
		t.Error("the refused sweep changed the file")
	}
	var h worker.Health
	if _, body, _ := call(t, "GET", ts.URL+"/healthz", "", ""); json.Unmarshal(body, &h) != nil || h.LeaseHolder == nil || *h.LeaseHolder != "worker on another host" {
		t.Errorf("healthz names no lease holder: %s", body)
	}
	if got := count(t, scrape(t, ts.URL, ""), "memworker_sweeps_total", "status", "busy"); got != 1 {
		t.Errorf("sweeps_total{status=busy} = %v, want 1", got)
	}
}

// TestServiceHealthDown: a database that does not answer is a 503 with
// its cause, never a 200.
func TestServiceHealthDown(t *testing.T) {
	ts := newTestService(t, filepath.Join(t.TempDir(), "missing.db"), "")
	for _, route := range []string{"/healthz", "/readyz"} {
		code, body, _ := call(t, "GET", ts.URL+route, "", "")
		if code != 503 || !strings.Contains(string(body), "missing.db") {
			t.Errorf("%s on a missing file: %d %s, want 503 naming it", route, code, body)
		}
	}
}

// count is the value of a counter family's series with label = value.
func count(t *testing.T, families map[string]*dto.MetricFamily, family, label, value string) float64 {
	t.Helper()
	for _, m := range families[family].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("%s{%s=%q} missing", family, label, value)
	return 0
}
