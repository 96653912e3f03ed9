package worker_test

// A differential test: random memory graphs swept by the worker and by an
// independent Go model of docs/sweep.md, written from the text of docs/sweep.md with
// math.Exp and math.Log1p (no SQL, no sqlfuncs). Any disagreement prints
// the seed and the differing rows. The random graphs, and moving them in
// and out of a memory file, are in model_graphs_test.go.

import (
	"cmp"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestModelDifferential runs 50 seeds; each sweeps twice (the second at the
// same clock or later), with a dry run before each sweep.
func TestModelDifferential(t *testing.T) {
	seeds := 50
	if testing.Short() {
		seeds = 10
	}
	fragile := 0
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			g, cfg, now := genGraph(rng)
			db := loadGraph(t, rng, g, cfg)
			clock := now
			var last *float64
			for step := 1; step <= 2; step++ {
				before := readGraph(t, db)
				same := last != nil && *last == clock
				m := runModel(before, cfg, clock, same)
				if len(m.fragile) > 0 {
					fragile++
					t.Logf("seed %d step %d: too close to call, skipped: %v", seed, step, m.fragile)
					return
				}
				dry := dryRunAt(t, db, clock)
				// Chunked applies must give the same result as one big one.
				c := clock
				r := sweepWith(t, db, worker.SweepOptions{Now: &c, ChunkSize: []int{0, 1, 7}[rng.Intn(3)]})
				if d, w := reportCounts(dry), reportCounts(r); d != w {
					t.Errorf("seed %d step %d: dry run %s\n  sweep %s", seed, step, d, w)
				}
				if diffs := compareSweep(t, db, before, m, r, clock); len(diffs) > 0 {
					t.Errorf("seed %d step %d at clock %v, config %+v:\n  %s", seed, step, clock, cfg, strings.Join(diffs, "\n  "))
				}
				if same && r.Archived+r.EdgesPruned+r.EdgesDecayed != 0 {
					t.Errorf("seed %d: second sweep at the same clock removed rows: %+v", seed, r)
				}
				last = ptr(clock)
				if rng.Float64() < 0.7 {
					clock += 1 + float64(rng.Intn(200))
				}
			}
		})
	}
	if fragile > seeds/10 {
		t.Errorf("%d of %d seeds too close to call: the generator needs coarser values", fragile, seeds)
	}
}

type mBlock struct {
	id       string
	category string // "" is NULL
	tags     []string
	conf     float64
	count    int64
	lr       *float64 // last_reinforced_hours; nil is NULL
	status   string
}

type mEdge struct {
	from, to string
	weight   float64
	count    int64
	origin   string
	anchor   *float64 // last_active_hours; nil is NULL
	pinned   bool
}

func (e mEdge) key() string { return e.from + "-" + e.to }

type mConfig struct {
	prune, decay float64
	decayAuto    bool
	established  float64
	blockThr     float64
	topN         int
	maxFrac      float64
	archival     bool
}

type mGraph struct {
	blocks []*mBlock // in id order
	edges  []mEdge
}

func (g mGraph) block(id string) *mBlock {
	i, ok := slices.BinarySearchFunc(g.blocks, id, func(b *mBlock, id string) int { return cmp.Compare(b.id, id) })
	if !ok {
		return nil
	}
	return g.blocks[i]
}

// mResult is what the model says one sweep does.
type mResult struct {
	archived       map[string]bool
	withBlocks     map[string]bool // edge keys removed with their block
	pruned         map[string]bool
	decayed        map[string]bool
	deferred       int
	bridge         *float64
	constitutional map[string]bool
	top            []string
	after          int
	fragile        []string // decisions too close to call in floating point
}

// Tier rates per active hour (docs/tiers-and-edges.md, tier_lambda).
var modelLambda = map[string]float64{"permanent": 0.00001, "durable": 0.001, "standard": 0.010, "ephemeral": 0.050}

// modelTier is decay_tier: first match wins.
func modelTier(b *mBlock) string {
	if slices.Contains(b.tags, "self/constitutional") {
		return "permanent"
	}
	for _, t := range []string{"self/value", "self/constraint", "self/goal"} {
		if slices.Contains(b.tags, t) {
			return "durable"
		}
	}
	switch b.category {
	case "mind":
		return "durable"
	case "observation":
		return "ephemeral"
	}
	return "standard"
}

func modelRecency(lambda float64, anchor *float64, now float64) float64 {
	if anchor == nil {
		return 0
	}
	return math.Exp(-lambda * math.Max(0, now-*anchor))
}

func modelStrength(e mEdge) float64 { return e.weight + math.Log1p(float64(e.count))*0.10 }

func modelDegrees(edges []mEdge) map[string]float64 {
	d := map[string]float64{}
	for _, e := range edges {
		s := modelStrength(e)
		d[e.from] += s
		d[e.to] += s
	}
	return d
}

// tooClose reports whether a and b differ but by less than floating-point
// summation noise.
func tooClose(a, b float64) bool { return a != b && math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) }

// runModel applies docs/sweep.md phases 1-6 to g at clock now. sameClock is a
// second sweep at the clock of the last one: §4.4 says it removes nothing.
func runModel(g mGraph, cfg mConfig, now float64, sameClock bool) mResult {
	r := mResult{archived: map[string]bool{}, withBlocks: map[string]bool{}, pruned: map[string]bool{},
		decayed: map[string]bool{}, constitutional: map[string]bool{}}
	tier := map[string]string{}
	for _, b := range g.blocks {
		tier[b.id] = modelTier(b)
	}

	// Phase 1: archive faded blocks, except bridges and pinned-edge blocks.
	deg := modelDegrees(g.edges)
	var nonzero []float64 // over the active blocks only
	for _, b := range g.blocks {
		if d := deg[b.id]; d != 0 && b.status == "active" {
			nonzero = append(nonzero, d)
		}
	}
	slices.Sort(nonzero)
	// The threshold is taken (and reported) only when the archival has a
	// faded block to decide on.
	faded := false
	for _, b := range g.blocks {
		faded = faded || (b.status == "active" && b.lr != nil && modelRecency(modelLambda[tier[b.id]], b.lr, now) < cfg.blockThr)
	}
	if n := len(nonzero); n > 0 && faded && cfg.archival && !sameClock {
		v := nonzero[min(int(math.Floor(0.8*float64(n))), n-1)]
		r.bridge = &v
	}
	pinnedBlock := map[string]bool{}
	for _, e := range g.edges {
		if e.pinned {
			pinnedBlock[e.from], pinnedBlock[e.to] = true, true
		}
	}
	if cfg.archival && !sameClock {
		for _, b := range g.blocks {
			if b.status != "active" || b.lr == nil {
				continue
			}
			rec := modelRecency(modelLambda[tier[b.id]], b.lr, now)
			if tooClose(rec, cfg.blockThr) {
				r.fragile = append(r.fragile, fmt.Sprintf("block %s recency %v", b.id, rec))
			}
			if rec >= cfg.blockThr || pinnedBlock[b.id] {
				continue
			}
			if r.bridge != nil {
				if tooClose(deg[b.id], *r.bridge) {
					r.fragile = append(r.fragile, fmt.Sprintf("block %s degree %v vs bridge %v", b.id, deg[b.id], *r.bridge))
				}
				if deg[b.id] >= *r.bridge {
					continue
				}
			}
			r.archived[b.id] = true
		}
	}
	var left []mEdge
	for _, e := range g.edges {
		if r.archived[e.from] || r.archived[e.to] {
			r.withBlocks[e.key()] = true
			continue
		}
		left = append(left, e)
	}

	// Phase 2: static prune.
	var left2 []mEdge
	for _, e := range left {
		if e.weight < cfg.prune && e.count == 0 && !e.pinned {
			r.pruned[e.key()] = true
			continue
		}
		left2 = append(left2, e)
	}

	// Phase 3: temporal decay, capped, lowest effective weight first.
	type cand struct {
		e   mEdge
		eff float64
	}
	var cands []cand
	for _, e := range left2 {
		if e.origin == "agent" || e.anchor == nil || e.pinned {
			continue
		}
		lam := math.Min(modelLambda[tier[e.from]], modelLambda[tier[e.to]]) * 0.5
		if float64(e.count) >= cfg.established {
			lam *= 0.5
		}
		eff := e.weight * math.Exp(-lam*math.Max(0, now-*e.anchor))
		if tooClose(eff, cfg.decay) {
			r.fragile = append(r.fragile, fmt.Sprintf("edge %s effective %v", e.key(), eff))
		}
		if eff < cfg.decay {
			cands = append(cands, cand{e, eff})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.eff, b.eff), cmp.Compare(a.e.from, b.e.from), cmp.Compare(a.e.to, b.e.to))
	})
	budget := int(math.Floor(cfg.maxFrac * float64(len(cands))))
	if sameClock && cfg.maxFrac < 1 {
		budget = 0
	}
	if budget > 0 && budget < len(cands) && tooClose(cands[budget-1].eff, cands[budget].eff) {
		r.fragile = append(r.fragile, "decay cap boundary")
	}
	for i, c := range cands {
		if i < budget {
			r.decayed[c.e.key()] = true
		}
	}
	r.deferred = len(cands) - budget
	var kept []mEdge
	for _, e := range left2 {
		if !r.decayed[e.key()] {
			kept = append(kept, e)
		}
	}
	r.after = len(kept)
	// A clock already swept reinforces nothing (docs/sweep.md: idempotent).
	if sameClock {
		return r
	}

	// Phase 5: constitutional reinforcement.
	type scored struct {
		b     *mBlock
		score float64
		in    [4]float64
	}
	var active []*mBlock
	for _, b := range g.blocks {
		if b.status == "active" && !r.archived[b.id] {
			active = append(active, b)
			if slices.Contains(b.tags, "self/constitutional") {
				r.constitutional[b.id] = true
			}
		}
	}

	// Phase 6: top N by composite over what is left.
	kdeg := modelDegrees(kept)
	var maxDeg, maxCount float64
	for _, b := range active {
		maxDeg = math.Max(maxDeg, kdeg[b.id])
		maxCount = math.Max(maxCount, float64(b.count)+boolf(r.constitutional[b.id]))
	}
	var ranked []scored
	for _, b := range active {
		count := float64(b.count) + boolf(r.constitutional[b.id])
		anchor := b.lr
		if r.constitutional[b.id] {
			anchor = &now
		}
		rec := modelRecency(modelLambda[tier[b.id]], anchor, now)
		cent := 0.0
		if maxDeg > 0 {
			cent = kdeg[b.id] / maxDeg
		}
		reinf := 0.0
		if maxCount > 0 {
			reinf = math.Log1p(count) / math.Log1p(maxCount)
		}
		s := (0.30*b.conf + 0.05*rec + 0.25*cent + 0.30*reinf) / 0.90
		ranked = append(ranked, scored{b, s, [4]float64{b.conf, rec, cent, reinf}})
	}
	slices.SortFunc(ranked, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.b.id, b.b.id)) })
	n := min(cfg.topN, len(ranked))
	if n > 0 && n < len(ranked) {
		a, b := ranked[n-1], ranked[n]
		if tooClose(a.score, b.score) || (a.score == b.score && a.in != b.in) {
			r.fragile = append(r.fragile, fmt.Sprintf("top-N boundary %s %v / %s %v", a.b.id, a.score, b.b.id, b.score))
		}
	}
	for _, s := range ranked[:n] {
		r.top = append(r.top, s.b.id)
	}
	return r
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
