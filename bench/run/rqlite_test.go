package main

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseScenarios(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []string
		err  string
	}{
		{list: "first,noop,steady", want: []string{"first", "noop", "steady"}},
		{list: "none"},
		{list: " rqlite-first , rqlite-steady ", want: []string{"rqlite-first", "rqlite-steady"}},
		{list: "first,rqlite-first", want: []string{"first", "rqlite-first"}},
		{list: "steady", err: "steady starts from first"},
		{list: "rqlite-steady", err: "rqlite-steady starts from rqlite-first"},
		{list: "first,rqlite", err: `no scenario "rqlite"`},
	} {
		got, err := parseScenarios(tc.list)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %v, want an error with %q", tc.list, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.list, err)
			continue
		}
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%q: got %v, want %v", tc.list, keys, want)
		}
	}
}

// TestEdgeHasherValues: a node's decoded JSON values hash as the same
// rows scanned from a file do, whatever number type a column comes back as.
func TestEdgeHasherValues(t *testing.T) {
	rows := []edgeRow{
		{from: "b1", to: "b2", weight: 0.5, count: 3, origin: "similarity", anchor: sql.NullFloat64{Float64: 990.25, Valid: true}},
		{from: "b1", to: "b9", weight: 1, count: 0, origin: "agent", pinned: 1},
	}
	var file edgeHasher
	for _, r := range rows {
		file.add(r)
	}
	var node edgeHasher
	for _, v := range [][]any{
		{"b1", "b2", 0.5, int64(3), "similarity", 990.25, int64(0)},
		{"b1", "b9", int64(1), 0.0, "agent", nil, 1.0},
	} {
		if err := node.addValues(v); err != nil {
			t.Fatal(err)
		}
	}
	if file.sum() != node.sum() || file.n != node.n || node.n != 2 {
		t.Fatalf("file %s (%d rows), node %s (%d rows)", file.sum(), file.n, node.sum(), node.n)
	}
	var other edgeHasher
	other.add(rows[1])
	other.add(rows[0])
	if other.sum() == file.sum() {
		t.Fatal("the digest does not depend on the rows' order")
	}
	for _, bad := range [][]any{
		{"b1", "b2", "0.5", int64(3), "similarity", nil, int64(0)},
		{"b1", "b2", 0.5, int64(3), "similarity", nil},
	} {
		if err := new(edgeHasher).addValues(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestRequestKind(t *testing.T) {
	body := `[["DELETE FROM mem_work_apply_rows"], ["INSERT INTO main.mem_events (a) SELECT 1", 1],
		["INSERT INTO main.mem_events (a) SELECT 2", {"x": 1}], ["WITH t AS (SELECT 1) UPDATE mem_sweeps SET x = 1"],
		"CREATE TABLE IF NOT EXISTS mem_work_x (a)", ["SELECT count(*) FROM mem_edges"]]`
	kind, n := requestKind("/db/execute", []byte(body))
	want := "/db/execute: DELETE mem_work_apply_rows; INSERT main.mem_events ×2; UPDATE mem_sweeps; CREATE mem_work_x; SELECT"
	if kind != want || n != 6 {
		t.Fatalf("got %q (%d statements), want %q (6)", kind, n, want)
	}
	if kind, n := requestKind("/status", nil); kind != "/status" || n != 0 {
		t.Fatalf("got %q, %d", kind, n)
	}
}

func TestResponseTimes(t *testing.T) {
	node, stmts := responseTimes([]byte(`{"results":[{"rows_affected":1,"time":0.25},{"time":0.5}],"time":1.5}`))
	if node != 1.5 || stmts != 0.75 {
		t.Fatalf("got %v, %v", node, stmts)
	}
}

func TestTracePhases(t *testing.T) {
	stderr := "memworker trace: phase refresh and plan 2.5s (10:00:00.000 to 10:00:02.500)\n" +
		"noise\nmemworker trace: phase apply_edges 1.25s (10:00:03.000 to 10:00:04.250)\n"
	phases := parsePhases(stderr)
	if len(phases) != 2 || phases[0].name != "refresh and plan" || phases[1].took != 1250*time.Millisecond {
		t.Fatalf("got %+v", phases)
	}
	at := func(s string) time.Time {
		d, _ := time.Parse("15:04:05.000", s)
		return time.Date(2026, 1, 2, d.Hour(), d.Minute(), d.Second(), d.Nanosecond(), time.Local)
	}
	tr := &rqliteTrace{Phases: phases, Requests: []requestRecord{
		{start: at("10:00:01.000"), took: time.Second, node: 0.9, sqlite: 0.5},
		{start: at("10:00:02.700"), took: time.Second},
		{start: at("10:00:03.500"), took: time.Second, sqlite: 0.25},
		{start: at("10:00:04.000"), took: time.Second, sqlite: 0.25},
	}}
	sums := tr.byPhase()
	if len(sums) != 3 || sums[0].count != 1 || sums[0].sqlite != 0.5 || sums[1].count != 2 || sums[1].sqlite != 0.5 || sums[2].count != 1 {
		t.Fatalf("got %+v", sums)
	}
}

func TestCounterDiff(t *testing.T) {
	got := counterDiff(map[string]int64{"store.num_snapshots": 2, "db.executions": 10, "store.snapshot_create_duration": 5},
		map[string]int64{"store.num_snapshots": 5, "db.executions": 10, "store.snapshot_create_duration": 7, "http.queries": 3})
	want := []string{"http.queries +3", "store.num_snapshots +3", "store.snapshot_create_duration 7"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestNodeList(t *testing.T) {
	runs := []Outcome{{NodeData: []int64{10 << 20, 30 << 20, 20 << 20}}, {NodeData: []int64{12 << 20, 5 << 20, 20 << 20}}}
	if got := nodeList(runs, func(o Outcome) []int64 { return o.NodeData }, 10); got != "12 / 30 / 20" {
		t.Fatalf("got %q", got)
	}
	if got := nodeList(nil, func(o Outcome) []int64 { return o.NodeData }, 10); got != "–" {
		t.Fatalf("got %q", got)
	}
}

func TestCPUSeconds(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	if got := cpuSeconds("self"); got <= 0 || got > 3600 {
		t.Fatalf("cpuSeconds(self) = %v", got)
	}
	if got := cpuSeconds("0"); got != 0 {
		t.Fatalf("cpuSeconds of no process = %v", got)
	}
}

func TestClusterCPU(t *testing.T) {
	runs := []Outcome{
		{CPUSeconds: 2, NodeCPU: []float64{10, 5, 6}},
		{CPUSeconds: 4, NodeCPU: []float64{12, 7, 6}},
		{CPUSeconds: 3, NodeCPU: []float64{11, 6, 9}},
	}
	if got, want := clusterCPU(runs), "3.00 + 11.00 + 6.00 + 6.00 = 26.00"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := clusterCPU(nil); got != "–" {
		t.Fatalf("got %q", got)
	}
}
