package worker_test

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fmaWall and fmaClock are the clocks both sweeps of TestSameSweepWithoutFMA
// run at.
var fmaWall = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

const fmaClock = 5000.0

// nearThresholdGraph is a memory whose edges, policy edges and facts sit
// within a few ulps of their thresholds, where a function that rounds
// differently on another CPU would decide differently.
func nearThresholdGraph() string {
	rng := rand.New(rand.NewSource(7))
	var b strings.Builder
	b.WriteString("INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ")
	for i := 0; i < 200; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('n%03d', 'knowledge', %v)", i, fmaClock)
	}
	b.WriteString(";\nINSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action) VALUES " +
		"('cites', 'power_law', '{\"alpha\":0.7,\"scale\":3}', 'active_hours', 0.2, 'delete'), " +
		"('likes', 'half_life', '{\"half_life\":37}', 'active_hours', 0.15, 'exclude');\n")
	b.WriteString("INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, last_active_hours) VALUES ")
	n := 0
	for i := 0; i < 200; i++ {
		for j := i + 1; j < 200 && n < 4000; j += 1 + rng.Intn(9) {
			w := 0.5 + rng.Float64()/2
			kind := []string{"similar", "similar", "cites", "likes"}[rng.Intn(4)]
			var elapsed float64
			switch kind { // where the curve crosses its threshold, give or take a hair
			case "similar":
				elapsed = math.Log(w/0.1) / 0.005
			case "cites":
				elapsed = 3 * (math.Pow(w/0.2, 1/0.7) - 1)
			case "likes":
				elapsed = 37 * math.Log2(w/0.15)
			}
			elapsed *= 1 + (rng.Float64()-0.5)*1e-12
			if n > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "('n%03d', 'n%03d', %v, 0, '%s', %v)", i, j, w, kind, fmaClock-elapsed)
			n++
		}
	}
	b.WriteString(";\nINSERT INTO mem_facts (id, segment, importance, last_accessed_at) VALUES ")
	for i := 0; i < 500; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		days := 20 + rng.Float64()*60
		fmt.Fprintf(&b, "('f%03d', 'context', %v, %d)", i, 0.2+rng.Float64()*0.6, fmaWall.Unix()-int64(days*86400))
	}
	b.WriteString(";")
	return b.String()
}

// The same sweep, evaluated on a CPU path without FMA (GODEBUG=cpu.fma=off,
// as on an older CPU: Go's math.Exp takes other instructions there), leaves
// the same survivors, the same events and the same numbers in them: the
// replicas of a cluster on different CPUs never diverge.
func TestSameSweepWithoutFMA(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("cpu.fma is an amd64 switch")
	}
	if os.Getenv("MEMDECAY_SWEEP_FILE") != "" {
		t.Skip("the child's side is TestHelperSweepWithoutFMA")
	}
	db, path := newMemory(t, nearThresholdGraph())
	db.Close()
	other := copyMemory(t, path)

	here := openAsWorker(t, path)
	r := sweepAtWall(t, here, fmaClock, fmaWall)
	if r.EdgesDecayed == 0 || r.TotalEdgesAfter == 0 {
		t.Fatalf("the graph is not near its thresholds: %s", reportCounts(r))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSweepWithoutFMA$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.fma=off", "MEMDECAY_SWEEP_FILE="+other)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the sweep without FMA: %v\n%s", err, out)
	}
	there := openAsWorker(t, other)
	for _, q := range []string{
		`SELECT from_id, to_id, excluded FROM mem_edges ORDER BY from_id, to_id`,
		`SELECT id, status FROM mem_facts ORDER BY id`,
		`SELECT id, status, reinforcement_count FROM mem_blocks ORDER BY id`,
		`SELECT subject_kind, subject_id, action, reason, detail FROM mem_events ORDER BY id`,
		`SELECT json_remove(result, '$.duration_ms') FROM mem_sweeps ORDER BY id`,
	} {
		_, a := dumpRows(t, here, q)
		_, b := dumpRows(t, there, q)
		if a == b {
			continue
		}
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		for i := range min(len(al), len(bl)) {
			if al[i] != bl[i] {
				t.Errorf("%s differs without FMA at row %d:\n with:    %s\n without: %s", q, i+1, al[i], bl[i])
				break
			}
		}
		if len(al) != len(bl) {
			t.Errorf("%s: %d rows with FMA, %d without", q, len(al), len(bl))
		}
	}
}

// The child side of TestSameSweepWithoutFMA: sweeps the file it is given.
func TestHelperSweepWithoutFMA(t *testing.T) {
	path := os.Getenv("MEMDECAY_SWEEP_FILE")
	if path == "" {
		t.Skip("run by TestSameSweepWithoutFMA")
	}
	sweepAtWall(t, openAsWorker(t, path), fmaClock, fmaWall)
}
