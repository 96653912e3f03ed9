package main

import (
	"fmt"
	"io"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// printSweepDetail is the detail block under a sweep's summary (demo, and
// sweep --verbose): what was archived, pruned, decayed and reinforced, per
// policy, the facts, the rows skipped as invalid and a sample of the
// decayed edges.
func printSweepDetail(w io.Writer, r *worker.Report) {
	if r.ClockOnWall {
		fmt.Fprintf(w, "  clock                      %.2f h of the wall clock (hours since 1970), wall %s\n", r.ClockHours, wallDate(r.WallTime))
	} else {
		fmt.Fprintf(w, "  clock                      %.2f active hours (h), wall %s\n", r.ClockHours, wallDate(r.WallTime))
	}
	fmt.Fprintf(w, "  archived blocks            %d (%d orphans; and %d of their edges)\n", r.Archived, r.OrphansArchived, r.EdgesRemovedWithBlocks)
	fmt.Fprintf(w, "  edges pruned (static)      %d\n", r.EdgesPruned)
	fmt.Fprintf(w, "  edges decayed (temporal)   %d (%d deferred by max_decay_fraction)\n", r.EdgesDecayed, r.EdgesDeferred)
	fmt.Fprintf(w, "  edges left                 %d of %d\n", r.TotalEdgesAfter, r.EdgesBefore)
	fmt.Fprintf(w, "  reinforced                 %d top, %d constitutional\n", r.Reinforced, r.ConstitutionalReinforced)
	for _, p := range r.Policies {
		fmt.Fprintf(w, "  policy %-19s %d processed: %d decayed, %d excluded, %d readmitted, %d pinned\n",
			safe(p.RelationType), p.Processed, p.Decayed, p.Excluded, p.Readmitted, p.Pinned)
	}
	f := r.Facts
	fmt.Fprintf(w, "  facts                      %d processed: %d archived, %d pruned, %d kept, %d immune\n",
		f.Processed, f.Archived, f.Pruned, f.Kept, f.Immune)
	if r.EventsExpired > 0 {
		fmt.Fprintf(w, "  events expired             %d\n", r.EventsExpired)
	}
	printInvalidSample(w, r)
	for _, e := range r.DecayedSample {
		fmt.Fprintf(w, "  decayed %s — %s: weight %.2f, effective %.3f\n", safe(e.From), safe(e.To), e.Weight, e.EffectiveWeight)
	}
}

// wallDate renders unix seconds as a UTC date and time.
func wallDate(unix int64) string {
	return time.Unix(unix, 0).UTC().Format("2006-01-02 15:04:05 UTC")
}
