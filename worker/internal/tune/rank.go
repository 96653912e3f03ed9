package tune

import (
	"math"
	"sort"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// The ranking quality of a configuration: at each held-out read of a node
// read before, the rank of that node among every node kept, by recency
// exp(−λ·elapsed) (1 the most recent by its tier's clock), its reciprocal
// averaged (MRR); a miss ranks nowhere (0). Each node counts from its
// first read. Per group of nodes sharing a rate and a cap (a tunable tier,
// its pinned nodes, permanent), a Fenwick tree over the reads' positions
// in time order holds each node's last read, so the nodes ranked above one
// are counted by a prefix sum, not by a pass over every node.

// fenwick counts ones at positions.
type fenwick []int32

func (f fenwick) add(i int, v int32) {
	for i++; i < len(f); i += i & -i {
		f[i] += v
	}
}

// prefix is the count at positions below i.
func (f fenwick) prefix(i int) int {
	s := 0
	for ; i > 0; i -= i & -i {
		s += int(f[i])
	}
	return s
}

// rankGroup is the nodes ranked alike: a tunable tier (capped: archived
// after k half-lives), its pinned nodes, or permanent.
type rankGroup struct {
	tier   string
	capped bool
	tree   fenwick
	total  int
}

// rankReads is the MRR of each configuration (tier → half-life in hours)
// on the reads from split on, and how many reads it averages.
func rankReads(in Input, reads []Read, split int, tunableGroup []int, configs []map[string]float64) ([]float64, int) {
	times := make([]float64, len(reads))
	for i, r := range reads {
		times[i] = r.At
	}
	var groups []*rankGroup
	index := map[[2]any]int{}
	nodeGroup := make([]int, len(in.Nodes))
	for i, nd := range in.Nodes {
		tier, capped := nd.Tier, tunableGroup[i] >= 0
		if _, ok := in.Declared[tier]; !ok && tier != sqlfuncs.TierPermanent {
			tier = sqlfuncs.TierStandard
		}
		key := [2]any{tier, capped}
		g, ok := index[key]
		if !ok {
			g = len(groups)
			index[key] = g
			groups = append(groups, &rankGroup{tier: tier, capped: capped, tree: make(fenwick, len(reads)+1)})
		}
		nodeGroup[i] = g
	}
	rate := func(c map[string]float64, tier string) float64 {
		if tier == sqlfuncs.TierPermanent {
			return in.PermanentLambda
		}
		return math.Ln2 / c[tier]
	}
	// count is how many nodes of g rank above a recency of score
	// (λ·elapsed) at t: last read after t − score/λ, and kept.
	count := func(g *rankGroup, c map[string]float64, t, score float64) int {
		lo := t - score/rate(c, g.tier)
		j := sort.Search(len(times), func(i int) bool { return times[i] > lo })
		if g.capped {
			keptFrom := t - in.K*c[g.tier]
			j = max(j, sort.Search(len(times), func(i int) bool { return times[i] >= keptFrom }))
		}
		return g.total - g.tree.prefix(j)
	}
	sums := make([]float64, len(configs))
	ranked := 0
	pos := make([]int, len(in.Nodes))
	last := make([]float64, len(in.Nodes))
	seen := make([]bool, len(in.Nodes))
	for i, r := range reads {
		x := r.Node
		g := groups[nodeGroup[x]]
		if i >= split && seen[x] {
			ranked++
			elapsed := r.At - last[x]
			for ci, c := range configs {
				if g.capped && elapsed > in.K*c[g.tier] {
					continue // archived: a miss
				}
				score := rate(c, g.tier) * elapsed
				above := 0
				for _, other := range groups {
					if other == g {
						// its own group: those read after it (itself excluded)
						j := sort.Search(len(times), func(i int) bool { return times[i] > last[x] })
						above += other.total - other.tree.prefix(j)
						continue
					}
					above += count(other, c, r.At, score)
				}
				sums[ci] += 1 / float64(1+above)
			}
		}
		if seen[x] {
			g.tree.add(pos[x], -1)
		} else {
			g.total++
			seen[x] = true
		}
		g.tree.add(i, 1)
		pos[x], last[x] = i, r.At
	}
	for ci := range sums {
		if ranked > 0 {
			sums[ci] /= float64(ranked)
		}
	}
	return sums, ranked
}
