package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func tuneCommand(now func() time.Time) *cli.Command {
	return withFlags(&cli.Command{
		Name:  "tune",
		Usage: "replay the app's reads against the sweep's archival rule and find each tier's best half-life (docs/tune.md)",
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "holdout", Value: 0.2, Usage: "the `SHARE` of the latest reads that judges the answer (above 0, below 1)"},
			&cli.IntFlag{Name: "miss-budget", Value: 0, Usage: "the misses `N` each tier may have on the earlier reads"},
			jsonFlag(),
			&cli.StringFlag{Name: "plot", Usage: "also draw misses and clutter against half-life per tier into `FILE` (.png or .svg)"},
			&cli.BoolFlag{Name: "apply", Usage: "write the best half-lives into the declared mapping's [tiers]"},
		},
		Action: func(c *cli.Context) error {
			if args, err := positional(c); err != nil {
				return err
			} else if len(args) > 0 {
				return usagef("tune", "tune takes no argument (got %q)", args[0])
			}
			holdout := c.Float64("holdout")
			if !(holdout > 0 && holdout < 1) {
				return usagef("tune", "--holdout %v: want a share above 0 and below 1 (0.2: the latest fifth of the reads)", holdout)
			}
			if n := c.Int("miss-budget"); n < 0 {
				return usagef("tune", "--miss-budget %d: want 0 or more misses", n)
			}
			if f := c.String("plot"); f != "" && !strings.HasSuffix(f, ".png") && !strings.HasSuffix(f, ".svg") {
				return usagef("tune", "--plot %q: want a file name ending in .png or .svg", f)
			}
			apply := c.Bool("apply")
			db, err := openMemory(c, !apply)
			if err != nil {
				return err
			}
			defer db.Close()
			if apply {
				if d, err := worker.Mapping(c.Context, db); err == nil && d.Preset != "" {
					return fmt.Errorf("tune --apply: the mapping in force is the preset %s, whose tiers are the reference's and not declared: "+
						"tune writes only an app's own mapping (declare its tables with memworker map load); nothing was changed", d.Preset)
				}
			}
			rep, err := worker.Tune(c.Context, db, worker.TuneOptions{Holdout: holdout, MissBudget: c.Int("miss-budget"), Machine: now()})
			if err != nil {
				return fmt.Errorf("tune: %w", err)
			}
			if f := c.String("plot"); f != "" {
				if err := saveTunePlot(rep, f); err != nil {
					return fmt.Errorf("tune: writing %s: %w", f, err)
				}
			}
			if c.Bool("json") {
				if err := printJSON(c.App.Writer, tuneJSON(rep)); err != nil {
					return err
				}
			} else {
				printTune(c.App.Writer, rep)
			}
			if !apply {
				return nil
			}
			best := map[string]string{}
			for _, t := range rep.Tiers {
				if t.Evidence {
					best[t.Tier] = worker.HalfLifeText(t.Best)
				}
			}
			changes, err := worker.ApplyTiers(c.Context, db, best, now())
			if err != nil {
				if errors.Is(err, worker.ErrPresetTiers) {
					return fmt.Errorf("tune --apply: %w; nothing was changed", err)
				}
				return fmt.Errorf("tune --apply: %w", err)
			}
			w := c.App.ErrWriter
			if !c.Bool("json") {
				w = c.App.Writer
			}
			if len(changes) == 0 {
				fmt.Fprintln(w, "Applied: the declared half-lives are the best already; nothing was changed.")
				return nil
			}
			fmt.Fprintln(w, "Applied to the declared mapping (map show shows it; the next sweep computes every row again):")
			for _, ch := range changes {
				fmt.Fprintf(w, "  tiers.%s: %s → %s\n", ch.Tier, safe(ch.From), ch.To)
			}
			return nil
		},
	})
}

// tuneSummary is a configuration as tune --json prints it.
type tuneSummary struct {
	Misses      int               `json:"misses"`
	ClutterDays float64           `json:"clutter_days"`
	Archived    int               `json:"archived"`
	MRR         float64           `json:"mrr"`
	Tiers       map[string]string `json:"tiers"`
}

func tuneJSON(rep *worker.TuneReport) map[string]any {
	current := tuneSummary{Misses: rep.Current.Misses, ClutterDays: rep.Current.ClutterHours / 24, Archived: rep.Current.Archived,
		MRR: rep.Current.MRR, Tiers: map[string]string{}}
	best := tuneSummary{Misses: rep.Best.Misses, ClutterDays: rep.Best.ClutterHours / 24, Archived: rep.Best.Archived,
		MRR: rep.Best.MRR, Tiers: map[string]string{}}
	type tierJSON struct {
		Tier        string     `json:"tier"`
		Nodes       int        `json:"nodes"`
		Reads       int        `json:"reads"`
		Declared    string     `json:"declared"`
		Best        string     `json:"best"`
		Evidence    bool       `json:"evidence"`
		BudgetMet   bool       `json:"budget_met"`
		Misses      [2]int     `json:"misses"`
		ClutterDays [2]float64 `json:"clutter_days"`
		Archived    [2]int     `json:"archived"`
	}
	var tiers []tierJSON
	for _, t := range rep.Tiers {
		current.Tiers[t.Tier] = rep.Declared[t.Tier]
		best.Tiers[t.Tier] = bestText(rep, t)
		tiers = append(tiers, tierJSON{Tier: t.Tier, Nodes: t.Nodes, Reads: t.Reads, Declared: rep.Declared[t.Tier], Best: bestText(rep, t),
			Evidence: t.Evidence, BudgetMet: t.BudgetMet,
			Misses: [2]int{t.Current.Misses, t.Tuned.Misses}, ClutterDays: [2]float64{t.Current.ClutterHours / 24, t.Tuned.ClutterHours / 24},
			Archived: [2]int{t.Current.Archived, t.Tuned.Archived}})
	}
	skipped := rep.Skipped
	if skipped == nil {
		skipped = []worker.TuneSkipped{}
	}
	return map[string]any{
		"current": current, "best": best, "per_tier": tiers,
		"reads": rep.Reads, "earlier_reads": rep.TrainReads, "held_out_reads": rep.HeldOutReads, "ranked_reads": rep.RankedReads,
		"never_archived_reads": rep.NeverArchived, "half_lives_kept": rep.K, "wall_clock": rep.WallClock,
		"read_log": rep.Log.Table,
		"skipped":  rep.SkippedCount, "skipped_rows": skipped,
	}
}

// bestText is a tier's best half-life as [tiers] writes it; the declared
// one when the earlier reads hold no repeat read of the tier.
func bestText(rep *worker.TuneReport, t worker.TuneTier) string {
	if !t.Evidence {
		return rep.Declared[t.Tier]
	}
	return worker.HalfLifeText(t.Best)
}

func printTune(w io.Writer, rep *worker.TuneReport) {
	unit := "active days"
	if rep.WallClock {
		unit = "days"
	}
	fmt.Fprintf(w, "Replayed %d reads of %s: the earlier %d choose, the later %d judge (nodes archived after %.2f half-lives without a read).\n",
		rep.Reads, safe(rep.Log.Table), rep.TrainReads, rep.HeldOutReads, rep.K)
	fmt.Fprintf(w, "%-10s %7s %7s  %-16s %-17s %-22s %s\n", "tier", "nodes", "reads", "half-life", "held-out misses", "clutter ("+unit+")", "archived")
	for _, t := range rep.Tiers {
		note := ""
		switch {
		case t.Reads == 0:
			note = "  (no reads)"
		case !t.Evidence:
			note = "  (no repeat read among the earlier: kept)"
		case !t.BudgetMet:
			note = "  (no half-life up to a year within the miss budget)"
		}
		fmt.Fprintf(w, "%-10s %7d %7d  %-16s %-17s %-22s %s%s\n", t.Tier, t.Nodes, t.Reads,
			rep.Declared[t.Tier]+" → "+bestText(rep, t),
			fmt.Sprintf("%d → %d", t.Current.Misses, t.Tuned.Misses),
			fmt.Sprintf("%s → %s", days(t.Current.ClutterHours), days(t.Tuned.ClutterHours)),
			fmt.Sprintf("%d → %d", t.Current.Archived, t.Tuned.Archived), note)
	}
	fmt.Fprintf(w, "%-10s %7s %7s  %-16s %-17s %-22s %s\n", "all", "", "", "declared → best",
		fmt.Sprintf("%d → %d", rep.Current.Misses, rep.Best.Misses),
		fmt.Sprintf("%s → %s", days(rep.Current.ClutterHours), days(rep.Best.ClutterHours)),
		fmt.Sprintf("%d → %d", rep.Current.Archived, rep.Best.Archived))
	fmt.Fprintf(w, "Ranking of the next read (MRR over %d held-out reads): %.3f declared, %.3f best.\n", rep.RankedReads, rep.Current.MRR, rep.Best.MRR)
	if rep.NeverArchived > 0 {
		fmt.Fprintf(w, "%d reads are of pinned or permanent nodes, never archived: they only rank.\n", rep.NeverArchived)
	}
	total := 0
	for _, n := range rep.SkippedCount {
		total += n
	}
	if total > 0 {
		fmt.Fprintf(w, "Skipped %d rows of %s (%s):\n", total, safe(rep.Log.Table), skippedKinds(rep.SkippedCount))
		for _, s := range rep.Skipped {
			fmt.Fprintf(w, "  %s\n", safe(s.Problem))
		}
	}
}

func skippedKinds(counts map[string]int) string {
	var parts []string
	for _, k := range []struct{ key, words string }{{"node", "no node key"}, {"time", "no time"}, {"future", "after now"}, {"unknown", "no such node"}} {
		if n := counts[k.key]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k.words))
		}
	}
	return strings.Join(parts, ", ")
}

// days is node-hours as node-days, rounded so a person reads it.
func days(hours float64) string {
	d := hours / 24
	switch {
	case d == 0:
		return "0"
	case d < 10:
		return fmt.Sprintf("%.2f", d)
	}
	return fmt.Sprintf("%.0f", math.Round(d))
}
