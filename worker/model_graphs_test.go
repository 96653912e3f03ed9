package worker_test

// The random graphs of the differential test (model_test.go): generated,
// written into a memory file, read back, and compared with the model after
// a sweep.

import (
	"cmp"
	"database/sql"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// ptr is a pointer to a copy of v.
func ptr(v float64) *float64 { return &v }

// genGraph makes a random memory graph and configuration.
func genGraph(rng *rand.Rand) (mGraph, mConfig, float64) {
	now := float64(50+rng.Intn(1450)) + math.Round(rng.Float64()*4)/4
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	var g mGraph
	for i := range 30 {
		b := &mBlock{id: fmt.Sprintf("b%02d", i), status: "active",
			category: pick("knowledge", "knowledge", "mind", "observation", "observation", "", "project")}
		switch x := rng.Float64(); {
		case x < 0.07:
			b.tags = append(b.tags, "self/constitutional")
		case x < 0.20:
			b.tags = append(b.tags, pick("self/value", "self/constraint", "self/goal"))
		}
		if rng.Float64() < 0.3 {
			b.tags = append(b.tags, pick("python", "databases", "self/other", "travel"))
		}
		if rng.Float64() < 0.6 {
			b.conf = []float64{0.2, 0.4, 0.5, 0.6, 0.8}[rng.Intn(5)]
		} else {
			b.conf = rng.Float64()
		}
		if rng.Float64() < 0.7 {
			b.count = int64(rng.Intn(16))
		}
		switch x := rng.Float64(); {
		case x < 0.08:
		case x < 0.45:
			b.lr = ptr(now - rng.Float64()*100)
		case x < 0.60:
			b.lr = ptr(math.Floor(now - rng.Float64()*400)) // whole hours: ties in recency
		case x < 0.92:
			b.lr = ptr(rng.Float64() * now)
		default:
			b.lr = ptr(now + rng.Float64()*50) // ahead of the clock
		}
		g.blocks = append(g.blocks, b)
	}
	pairs := map[[2]int]bool{}
	for len(pairs) < 120 {
		i, j := rng.Intn(30), rng.Intn(30)
		if i == j {
			continue
		}
		pairs[[2]int{min(i, j), max(i, j)}] = true
	}
	keys := make([][2]int, 0, len(pairs))
	for p := range pairs {
		keys = append(keys, p)
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, p := range keys {
		e := mEdge{from: g.blocks[p[0]].id, to: g.blocks[p[1]].id, origin: "similarity"}
		if rng.Float64() < 0.15 {
			e.weight = rng.Float64() * 0.15
		} else {
			e.weight = rng.Float64()
		}
		if rng.Float64() < 0.6 {
			e.count = int64(rng.Intn(16))
		}
		switch x := rng.Float64(); {
		case x < 0.10:
			e.origin = "agent"
		case x < 0.25:
			e.origin = "outcome"
		case x < 0.30:
			e.origin = "observed"
		}
		if rng.Float64() >= 0.10 {
			e.anchor = ptr(rng.Float64() * (now + 30))
		}
		e.pinned = rng.Float64() < 0.04
		g.edges = append(g.edges, e)
	}
	cfg := mConfig{prune: 0.10, decay: 0.10, decayAuto: true, established: 10, blockThr: 0.05, topN: 5, maxFrac: 1, archival: true}
	if rng.Float64() < 0.5 {
		cfg.maxFrac = 0.5
	}
	if rng.Float64() < 0.3 {
		cfg.established = 5
	}
	if rng.Float64() < 0.2 {
		cfg.prune = 0.08
		cfg.decay = 0.08
	}
	if rng.Float64() < 0.3 {
		cfg.decay, cfg.decayAuto = []float64{0.05, 0.15}[rng.Intn(2)], false
	}
	cfg.topN = []int{0, 3, 5, 5, 8}[rng.Intn(5)]
	cfg.archival = rng.Float64() < 0.9
	return g, cfg, now
}

func nullable(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// loadGraph writes a generated graph and config into a new memory file,
// blocks in a shuffled order so ties cannot follow rowids.
func loadGraph(t *testing.T, rng *rand.Rand, g mGraph, cfg mConfig) *worker.DB {
	t.Helper()
	db, _ := newMemory(t, "")
	tx, err := db.SQL.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range rng.Perm(len(g.blocks)) {
		b := g.blocks[i]
		var cat any
		if b.category != "" {
			cat = b.category
		}
		if _, err := tx.Exec(`INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours)
			VALUES (?, ?, ?, ?, ?)`, b.id, cat, b.conf, b.count, nullable(b.lr)); err != nil {
			t.Fatal(err)
		}
		for _, tag := range b.tags {
			if _, err := tx.Exec(`INSERT INTO mem_block_tags VALUES (?, ?)`, b.id, tag); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range g.edges {
		if _, err := tx.Exec(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, e.from, e.to, e.weight, e.count, e.origin, nullable(e.anchor), e.pinned); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	set := map[string]string{
		"edge_prune_threshold":       fmt.Sprint(cfg.prune),
		"established_edge_threshold": fmt.Sprint(cfg.established),
		"block_prune_threshold":      fmt.Sprint(cfg.blockThr),
		"reinforce_top_n":            fmt.Sprint(cfg.topN),
		"max_decay_fraction":         fmt.Sprint(cfg.maxFrac),
		"block_archival":             map[bool]string{true: "auto", false: "off"}[cfg.archival],
		"edge_decay_threshold":       "auto",
	}
	if !cfg.decayAuto {
		set["edge_decay_threshold"] = fmt.Sprint(cfg.decay)
	}
	for k, v := range set {
		setConfig(t, db, k, v)
	}
	return db
}

// readGraph reads the database back into the model's terms (rows only).
func readGraph(t *testing.T, db *worker.DB) mGraph {
	t.Helper()
	var g mGraph
	rows, err := db.SQL.Query(`SELECT id, coalesce(category, ''), status, confidence, reinforcement_count, last_reinforced_hours
		FROM mem_blocks ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		b := &mBlock{}
		var lr sql.NullFloat64
		if err := rows.Scan(&b.id, &b.category, &b.status, &b.conf, &b.count, &lr); err != nil {
			t.Fatal(err)
		}
		if lr.Valid {
			b.lr = ptr(lr.Float64)
		}
		g.blocks = append(g.blocks, b)
	}
	rows.Close()
	rows, err = db.SQL.Query(`SELECT block_id, tag FROM mem_block_tags ORDER BY block_id, tag`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, tag string
		if err := rows.Scan(&id, &tag); err != nil {
			t.Fatal(err)
		}
		b := g.block(id)
		b.tags = append(b.tags, tag)
	}
	rows.Close()
	rows, err = db.SQL.Query(`SELECT from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned
		FROM mem_edges ORDER BY from_id, to_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e mEdge
		var anchor sql.NullFloat64
		if err := rows.Scan(&e.from, &e.to, &e.weight, &e.count, &e.origin, &anchor, &e.pinned); err != nil {
			t.Fatal(err)
		}
		if anchor.Valid {
			e.anchor = ptr(anchor.Float64)
		}
		g.edges = append(g.edges, e)
	}
	return g
}

// compareSweep checks the database and report after a sweep against the
// model, returning the differences.
func compareSweep(t *testing.T, db *worker.DB, before mGraph, m mResult, r *worker.Report, now float64) []string {
	t.Helper()
	var diffs []string
	after := readGraph(t, db)
	gotEdges := map[string]bool{}
	for _, e := range after.edges {
		gotEdges[e.key()] = true
	}
	for _, e := range before.edges {
		k := e.key()
		wantGone := m.withBlocks[k] || m.pruned[k] || m.decayed[k]
		if gotEdges[k] == wantGone {
			why := "kept"
			switch {
			case m.withBlocks[k]:
				why = "removed with its block"
			case m.pruned[k]:
				why = "statically pruned"
			case m.decayed[k]:
				why = "decayed"
			}
			diffs = append(diffs, fmt.Sprintf("edge %+v (anchor %v): model says %s, sweep %s",
				e, fmtPtr(e.anchor), why, map[bool]string{true: "kept it", false: "removed it"}[gotEdges[k]]))
		}
	}
	for _, b := range before.blocks {
		a := after.block(b.id)
		if b.status == "active" && (a.status == "archived") != m.archived[b.id] {
			diffs = append(diffs, fmt.Sprintf("block %+v (lr %v, tier %s): model archived=%v, sweep status %s",
				*b, fmtPtr(b.lr), modelTier(b), m.archived[b.id], a.status))
		}
		wantCount := b.count + int64(boolf(m.constitutional[b.id])) + int64(boolf(slices.Contains(m.top, b.id)))
		wantLR := b.lr
		if wantCount != b.count {
			wantLR = &now
		}
		if a.count != wantCount || fmtPtr(a.lr) != fmtPtr(wantLR) {
			diffs = append(diffs, fmt.Sprintf("block %s: count %d lr %v, model wants count %d lr %v (constitutional %v, top %v)",
				b.id, a.count, fmtPtr(a.lr), wantCount, fmtPtr(wantLR), m.constitutional[b.id], slices.Contains(m.top, b.id)))
		}
	}
	want := fmt.Sprintf("archived=%d pruned=%d decayed=%d deferred=%d after=%d reinforced=%d constitutional=%d",
		len(m.archived), len(m.pruned), len(m.decayed), m.deferred, m.after, len(m.top), len(m.constitutional))
	got := fmt.Sprintf("archived=%d pruned=%d decayed=%d deferred=%d after=%d reinforced=%d constitutional=%d",
		r.Archived, r.EdgesPruned, r.EdgesDecayed, r.EdgesDeferred, r.TotalEdgesAfter, r.Reinforced, r.ConstitutionalReinforced)
	if got != want {
		diffs = append(diffs, "report "+got+"\n     model "+want)
	}
	// One event per removed edge, and the report counts edges, not events.
	if r.EdgesRemovedWithBlocks != int64(len(m.withBlocks)) {
		diffs = append(diffs, fmt.Sprintf("edges_removed_with_blocks %d, model %d", r.EdgesRemovedWithBlocks, len(m.withBlocks)))
	}
	for _, e := range before.edges {
		k := e.key()
		if !(m.withBlocks[k] || m.pruned[k] || m.decayed[k]) {
			continue
		}
		n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE sweep_id = ? AND subject_kind = 'edge' AND subject_id = ?`,
			r.SweepID, edgeSubject(e.from, e.to))
		if n != 1 {
			diffs = append(diffs, fmt.Sprintf("edge %s removed with %d events in this sweep, want 1", k, n))
		}
	}
	if (r.BridgeThreshold == nil) != (m.bridge == nil) || (m.bridge != nil && !near(*r.BridgeThreshold, *m.bridge, 1e-9)) {
		diffs = append(diffs, fmt.Sprintf("bridge threshold %v, model %v", fmtPtr(r.BridgeThreshold), fmtPtr(m.bridge)))
	}
	return diffs
}
