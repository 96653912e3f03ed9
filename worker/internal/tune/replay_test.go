package tune

import (
	"math"
	"math/rand"
	"testing"
)

// simulate runs sweeps every hour of a log on whole hours, as a sweep
// decides (recency below the threshold archives an unpinned node of a
// tunable tier), and reads after each sweep: a read of an archived node
// is a miss and brings it back. It counts misses of reads at or after
// splitAt, and the hours each node is kept after its last read within
// [splitAt, end].
func simulate(in Input, halfLives map[string]float64, threshold, splitAt float64) (misses int, clutter float64) {
	byHour := map[float64][]Read{}
	start := math.Inf(1)
	for _, r := range in.Reads {
		byHour[r.At] = append(byHour[r.At], r)
		start = min(start, r.At)
	}
	last := map[int32]float64{}
	archivedAt := map[int32]float64{}
	finalRead := map[int32]float64{}
	for _, r := range in.Reads {
		finalRead[r.Node] = max(finalRead[r.Node], r.At)
	}
	for now := start; now <= in.End; now++ {
		for node, at := range last {
			nd := in.Nodes[node]
			h, tunable := halfLives[nd.Tier]
			if _, gone := archivedAt[node]; gone || !tunable || nd.Pinned {
				continue
			}
			if math.Exp(-math.Ln2/h*(now-at)) < threshold {
				archivedAt[node] = now
			}
		}
		for _, r := range byHour[now] {
			if _, gone := archivedAt[r.Node]; gone {
				if now >= splitAt {
					misses++
				}
				delete(archivedAt, r.Node)
			}
			last[r.Node] = now
		}
	}
	for node, at := range finalRead {
		nd := in.Nodes[node]
		if _, tunable := halfLives[nd.Tier]; !tunable || nd.Pinned {
			continue
		}
		until := in.End
		if a, gone := archivedAt[node]; gone {
			until = a
		}
		if from := max(at, splitAt); until > from {
			clutter += until - from
		}
	}
	return misses, clutter
}

// smallLog is a log of whole hours: a few nodes of each tier, one pinned
// and one permanent, read at random gaps.
func smallLog(seed int64) Input {
	rng := rand.New(rand.NewSource(seed))
	tiers := []string{"durable", "standard", "ephemeral", "standard", "permanent", "durable", "ephemeral"}
	in := Input{End: 400, Holdout: 0.3}
	for i, tier := range tiers {
		in.Nodes = append(in.Nodes, Node{Tier: tier, Pinned: i == 3})
		for at := float64(rng.Intn(50)); at < 380; at += float64(1 + rng.Intn(60)) {
			in.Reads = append(in.Reads, Read{Node: int32(i), At: at})
		}
	}
	return in
}

func TestReplayAgreesWithSweeps(t *testing.T) {
	// A threshold a hair above 1/16 keeps a node just under 4 half-lives:
	// whole-hour sweeps then archive it at the hour its horizon ends.
	threshold := 0.0625 * (1 + 1e-9)
	for seed := int64(1); seed <= 20; seed++ {
		in := smallLog(seed)
		in.K = math.Log2(1 / threshold)
		in.Declared = map[string]float64{"durable": 9, "standard": 5, "ephemeral": 2}
		in.PermanentLambda = 1e-5
		res, err := Replay(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, cfg := range []struct {
			name string
			hl   map[string]float64
			got  Summary
		}{{"declared", in.Declared, res.Current}, {"best", map[string]float64{}, res.Best}} {
			if cfg.name == "best" {
				for _, tr := range res.Tiers {
					cfg.hl[tr.Tier] = tr.Best
				}
			}
			misses, clutter := simulate(in, cfg.hl, threshold, res.SplitAt)
			if misses != cfg.got.Misses || math.Abs(clutter-cfg.got.ClutterHours) > 1e-6*max(1, clutter) {
				t.Errorf("seed %d, %s half-lives %v: the replay gives %d misses and %v hours of clutter, sweeps %d and %v",
					seed, cfg.name, cfg.hl, cfg.got.Misses, cfg.got.ClutterHours, misses, clutter)
			}
		}
		// the earlier reads alone, at every half-life of the grid up to a week
		train := in
		train.Reads = nil
		for _, r := range in.Reads {
			if r.At < res.SplitAt {
				train.Reads = append(train.Reads, r)
			}
		}
		train.End = res.SplitAt
		for gi, h := range Grid {
			if h > 168 || h != math.Trunc(h) {
				continue
			}
			hl := map[string]float64{"durable": h, "standard": h, "ephemeral": h}
			misses, clutter := simulate(train, hl, threshold, math.Inf(-1))
			var wantMisses int
			var wantClutter float64
			for _, tr := range res.Tiers {
				wantMisses += tr.Curve[gi].Misses
				wantClutter += tr.Curve[gi].ClutterHours
			}
			// the simulation counts clutter to the earlier reads' end, from the first read
			if misses != wantMisses || math.Abs(clutter-wantClutter) > 1e-6*max(1, clutter) {
				t.Errorf("seed %d, half-life %vh on the earlier reads: the curve gives %d misses and %v hours, sweeps %d and %v",
					seed, h, wantMisses, wantClutter, misses, clutter)
			}
		}
	}
}

func TestReplayRefusesWhatItCannotSplit(t *testing.T) {
	in := smallLog(1)
	in.K, in.Declared = 4, map[string]float64{"durable": 9, "standard": 5, "ephemeral": 2}
	for _, h := range []float64{0, 1, -0.5, math.NaN()} {
		in.Holdout = h
		if _, err := Replay(in); err == nil {
			t.Errorf("holdout %v: no error", h)
		}
	}
	in.Holdout, in.Reads = 0.2, in.Reads[:1]
	if _, err := Replay(in); err == nil {
		t.Error("one read: no error")
	}
}

// BenchmarkReplay replays 1M reads over 100k nodes (b.N replays).
func BenchmarkReplay(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	in := Input{End: 24 * 365, K: math.Log2(20), Holdout: 0.2, PermanentLambda: 1e-5,
		Declared: map[string]float64{"durable": 720, "standard": 168, "ephemeral": 24}}
	tiers := []string{"durable", "standard", "standard", "ephemeral", "permanent"}
	for i := 0; i < 100_000; i++ {
		in.Nodes = append(in.Nodes, Node{Tier: tiers[i%len(tiers)], Pinned: i%97 == 0})
	}
	for i := 0; i < 1_000_000; i++ {
		in.Reads = append(in.Reads, Read{Node: int32(rng.Intn(len(in.Nodes))), At: rng.Float64() * in.End})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Replay(in); err != nil {
			b.Fatal(err)
		}
	}
}
