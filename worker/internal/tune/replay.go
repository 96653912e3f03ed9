package tune

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// Tunable are the tiers whose half-lives a replay tunes, most durable
// first; permanent never fades.
var Tunable = []string{sqlfuncs.TierDurable, sqlfuncs.TierStandard, sqlfuncs.TierEphemeral}

// Grid are the half-lives a replay tries, in hours: from an hour to a
// year, each at most 1.5 times the one before, each a whole number of
// hours or days.
var Grid = func() []float64 {
	g := []float64{1, 1.5, 2, 3, 4, 6, 8, 12, 18}
	for _, d := range []float64{1, 1.5, 2, 3, 4, 6, 9, 12, 18, 27, 40, 60, 90, 135, 200, 300, 365} {
		g = append(g, d*24)
	}
	return g
}()

// Node is one node of the memory: its tier as the sweep computes it, and
// whether it is pinned (never archived).
type Node struct {
	Tier   string
	Pinned bool
}

// Read is one read of a node (an index into Input.Nodes) at a time in
// hours of the mapping's clock.
type Read struct {
	Node int32
	At   float64
}

// Input is what a replay learns from.
type Input struct {
	Nodes []Node
	Reads []Read  // in any order; the replay takes them in time order
	End   float64 // the clock now, in hours: the end of the log
	// K is how many half-lives a node is kept without a read:
	// log2(1 / block_prune_threshold).
	K float64
	// Declared are the tunable tiers' half-lives in force, in hours.
	Declared map[string]float64
	// PermanentLambda is the permanent tier's rate per hour (it ranks
	// with the others, and is never archived).
	PermanentLambda float64
	// Holdout is the share of the latest reads that judges the answer
	// (above 0, below 1); MissBudget the misses a tier may have on the
	// earlier reads.
	Holdout    float64
	MissBudget int
}

// Point is one half-life of the grid and what it gives on the earlier reads.
type Point struct {
	HalfLife     float64 `json:"half_life_hours"`
	Misses       int     `json:"misses"`
	ClutterHours float64 `json:"clutter_hours"`
}

// Outcome is what a tier's half-life gives on the held-out reads.
type Outcome struct {
	Misses       int     `json:"misses"`
	ClutterHours float64 `json:"clutter_hours"`
	Archived     int     `json:"archived"`
}

// TierResult is one tunable tier: its declared and best half-lives, and
// what each gives on the held-out reads.
type TierResult struct {
	Tier           string  `json:"tier"`
	Nodes          int     `json:"nodes"`
	Reads          int     `json:"reads"`
	Declared       float64 `json:"declared_hours"`
	Best           float64 `json:"best_hours"`
	Evidence       bool    `json:"evidence"`   // repeat reads among the earlier ones: else Best is Declared
	BudgetMet      bool    `json:"budget_met"` // else Best is the grid's longest
	Current, Tuned Outcome
	Curve          []Point `json:"curve"` // the grid on the earlier reads
}

// Summary is a whole configuration on the held-out reads.
type Summary struct {
	Misses       int     `json:"misses"`
	ClutterHours float64 `json:"clutter_hours"`
	Archived     int     `json:"archived"`
	MRR          float64 `json:"mrr"`
}

// Result is a replay's answer.
type Result struct {
	Tiers         []TierResult
	Current, Best Summary
	Reads         int
	TrainReads    int
	HeldOutReads  int
	SplitAt       float64 // the time of the first held-out read
	RankedReads   int     // held-out reads of a node read before: the MRR's
	NeverArchived int     // reads of pinned nodes and permanent ones
	Start, End    float64
	K             float64
}

// ErrTooFewReads: a log too short to split into earlier and later reads.
var ErrTooFewReads = errors.New("too few reads")

// Replay replays in's reads and finds each tunable tier's best half-life.
func Replay(in Input) (*Result, error) {
	if !(in.Holdout > 0 && in.Holdout < 1) {
		return nil, fmt.Errorf("holdout %v: want a fraction above 0 and below 1", in.Holdout)
	}
	if in.MissBudget < 0 {
		return nil, fmt.Errorf("miss budget %d: want 0 or more", in.MissBudget)
	}
	if !(in.K > 0) || math.IsInf(in.K, 0) {
		return nil, fmt.Errorf("half-lives kept %v: want a finite number above 0 (block_prune_threshold between 0 and 1)", in.K)
	}
	n := len(in.Reads)
	split := int(math.Floor((1 - in.Holdout) * float64(n)))
	if split < 1 || split >= n {
		return nil, fmt.Errorf("%w: %d reads cannot be split %v earlier and %v later", ErrTooFewReads, n, 1-in.Holdout, in.Holdout)
	}
	reads := slices.Clone(in.Reads)
	slices.SortStableFunc(reads, func(a, b Read) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	splitAt := reads[split].At
	for split > 0 && reads[split-1].At == splitAt { // reads at one time are on one side
		split--
	}
	if split == 0 {
		return nil, fmt.Errorf("%w: the earliest reads are all at one time", ErrTooFewReads)
	}
	res := &Result{Reads: n, TrainReads: split, HeldOutReads: n - split, SplitAt: splitAt, Start: reads[0].At, End: in.End, K: in.K}

	tierOf := map[string]int{}
	for i, t := range Tunable {
		tierOf[t] = i
	}
	group := make([]int, len(in.Nodes)) // the tunable tier, or -1: never archived
	perTier := make([]struct {
		nodes, reads int
		trainGaps    []float64
		trainRooms   []float64
		test         testWindow
	}, len(Tunable))
	for i, nd := range in.Nodes {
		g, ok := tierOf[nd.Tier]
		if !ok || nd.Pinned {
			g = -1
		}
		group[i] = g
	}
	const never = math.MaxFloat64
	last := make([]float64, len(in.Nodes))
	lastTrain := make([]float64, len(in.Nodes))
	for i := range last {
		last[i], lastTrain[i] = never, never
	}
	for i, r := range reads {
		g := group[r.Node]
		if g < 0 {
			res.NeverArchived++
		} else {
			pt := &perTier[g]
			pt.reads++
			if last[r.Node] != never {
				gap := r.At - last[r.Node]
				if i < split {
					pt.trainGaps = append(pt.trainGaps, gap)
				} else {
					pt.test.gaps = append(pt.test.gaps, gap)
					pt.test.from = append(pt.test.from, last[r.Node])
				}
			}
		}
		last[r.Node] = r.At
		if i < split {
			lastTrain[r.Node] = r.At
		}
	}
	for node, g := range group {
		if g < 0 || last[node] == never {
			continue
		}
		pt := &perTier[g]
		pt.nodes++
		if lastTrain[node] != never {
			pt.trainRooms = append(pt.trainRooms, splitAt-lastTrain[node])
		}
		pt.test.lasts = append(pt.test.lasts, last[node])
	}

	current, best := map[string]float64{}, map[string]float64{}
	for g, tier := range Tunable {
		pt := &perTier[g]
		declared := in.Declared[tier]
		tr := TierResult{Tier: tier, Nodes: pt.nodes, Reads: pt.reads, Declared: declared, Best: declared, Evidence: len(pt.trainGaps) > 0}
		w := newWindow(pt.trainGaps, pt.trainRooms)
		for _, h := range Grid {
			p := Point{HalfLife: h, Misses: w.misses(in.K * h), ClutterHours: w.clutter(in.K * h)}
			tr.Curve = append(tr.Curve, p)
			if tr.Evidence && !tr.BudgetMet && p.Misses <= in.MissBudget {
				tr.Best, tr.BudgetMet = h, true
			}
		}
		if tr.Evidence && !tr.BudgetMet {
			tr.Best = Grid[len(Grid)-1]
		}
		pt.test.splitAt, pt.test.end = splitAt, in.End
		tr.Current = pt.test.outcome(in.K * declared)
		tr.Tuned = pt.test.outcome(in.K * tr.Best)
		for _, s := range []struct {
			sum *Summary
			o   Outcome
		}{{&res.Current, tr.Current}, {&res.Best, tr.Tuned}} {
			s.sum.Misses += s.o.Misses
			s.sum.ClutterHours += s.o.ClutterHours
			s.sum.Archived += s.o.Archived
		}
		current[tier], best[tier] = declared, tr.Best
		res.Tiers = append(res.Tiers, tr)
	}
	mrr, ranked := rankReads(in, reads, split, group, []map[string]float64{current, best})
	res.Current.MRR, res.Best.MRR, res.RankedReads = mrr[0], mrr[1], ranked
	return res, nil
}

// window is one tier's earlier reads, sorted: the gaps between a node's
// reads, and the time from each node's last read to the window's end.
type window struct {
	gaps, rooms []float64
	roomSums    []float64 // roomSums[i]: the sum of rooms[:i]
}

func newWindow(gaps, rooms []float64) window {
	sort.Float64s(gaps)
	sort.Float64s(rooms)
	sums := make([]float64, len(rooms)+1)
	for i, r := range rooms {
		sums[i+1] = sums[i] + r
	}
	return window{gaps: gaps, rooms: rooms, roomSums: sums}
}

// misses are the gaps longer than horizon (k half-lives): at exactly the
// horizon the recency equals the threshold, and the sweep keeps the node.
func (w window) misses(horizon float64) int {
	return len(w.gaps) - sort.Search(len(w.gaps), func(i int) bool { return w.gaps[i] > horizon })
}

// clutter is the time the nodes are kept after their last read: each
// min(horizon, room).
func (w window) clutter(horizon float64) float64 {
	j := sort.Search(len(w.rooms), func(i int) bool { return w.rooms[i] > horizon })
	return w.roomSums[j] + horizon*float64(len(w.rooms)-j)
}

// testWindow is one tier's held-out reads [splitAt, end]: each gap ending
// in it with the read it started from, and every node's last read.
type testWindow struct {
	gaps, from, lasts []float64
	splitAt, end      float64
}

// outcome is what horizon (k half-lives) gives in the window: misses, the
// time kept after a node's last read that falls in the window, and the
// archivals made in it.
func (t testWindow) outcome(horizon float64) Outcome {
	var o Outcome
	for i, gap := range t.gaps {
		if gap > horizon {
			o.Misses++
			if t.from[i]+horizon >= t.splitAt {
				o.Archived++
			}
		}
	}
	for _, last := range t.lasts {
		from := max(last, t.splitAt)
		until := min(last+horizon, t.end)
		if until > from {
			o.ClutterHours += until - from
		}
		if at := last + horizon; at >= t.splitAt && at < t.end {
			o.Archived++
		}
	}
	return o
}
