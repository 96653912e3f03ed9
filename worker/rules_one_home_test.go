package worker_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker"
)

// Rules the views write in SQL and the worker in Go must say the same
// thing; these tests hold each pair to one answer.

// The models that die at weight 0 (a policy with no threshold removes at
// weight ≤ 0): the view's list and sqlfuncs.DiesAtZero.
func TestViewsKnowTheModelsThatDieAtZero(t *testing.T) {
	db, _ := newMemory(t, "")
	text := scalar[string](t, db, `SELECT sql FROM mem_reader_views WHERE name = 'mem_edges_effective'`)
	m := regexp.MustCompile(`p\.model IN \(([^)]*)\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("mem_edges_effective names no models that die at zero")
	}
	var inView []string
	for _, q := range strings.Split(m[1], ",") {
		inView = append(inView, strings.Trim(strings.TrimSpace(q), "'"))
	}
	var inGo []string
	for _, model := range []string{sqlfuncs.ModelExponential, sqlfuncs.ModelHalfLife, sqlfuncs.ModelLinear,
		sqlfuncs.ModelDelayedLinear, sqlfuncs.ModelMultiLinear, sqlfuncs.ModelPowerLaw} {
		if sqlfuncs.DiesAtZero(model) {
			inGo = append(inGo, model)
		}
	}
	slices.Sort(inView)
	slices.Sort(inGo)
	if !slices.Equal(inView, inGo) {
		t.Errorf("the view says %v die at zero, sqlfuncs says %v", inView, inGo)
	}
}

// edge_decay_threshold 'auto' (the prune threshold) and a number: the
// threshold the views decay by is the worker's.
func TestViewsDecayByTheWorkersThreshold(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b")+`INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('a', 'b', 0.5, 0);`)
	for _, c := range []struct{ decay, prune string }{{"auto", "0.1"}, {"auto", "0.3"}, {"0.2", "0.1"}} {
		setConfig(t, db, "edge_prune_threshold", c.prune)
		setConfig(t, db, "edge_decay_threshold", c.decay)
		cfg, err := worker.LoadConfig(context.Background(), db.SQL)
		if err != nil {
			t.Fatal(err)
		}
		if got := scalar[float64](t, db, `SELECT threshold FROM mem_edges_effective`); got != cfg.EdgeDecayThreshold {
			t.Errorf("decay %s, prune %s: the view decays below %v, the worker below %v", c.decay, c.prune, got, cfg.EdgeDecayThreshold)
		}
	}
}
