package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func explainCommand(now func() time.Time) *cli.Command {
	return withFlags(&cli.Command{
		Name:      "explain",
		Usage:     "why an edge or a fact will or will not decay, and when",
		ArgsUsage: "--edge A B | --fact ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "edge", Usage: "explain the edge between blocks A and B"},
			&cli.StringFlag{Name: "fact", Usage: "explain the fact `ID`"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			switch {
			case c.Bool("edge") && len(args) == 2 && c.String("fact") == "":
				return explainEdge(c, args[0], args[1])
			case c.String("fact") != "" && !c.Bool("edge") && len(args) == 0:
				return explainFact(c, now())
			}
			return usagef("explain", "want --edge A B or --fact ID")
		},
	})
}

func explainEdge(c *cli.Context, a, b string) error {
	db, err := openMemory(c, true)
	if err != nil {
		return err
	}
	defer db.Close()
	x, err := worker.ExplainEdge(c.Context, db, a, b)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, x)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "edge %s — %s (%s, origin %s)\n", safe(x.From), safe(x.To), safe(x.RelationType), safe(x.Origin))
	if x.Invalid {
		fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
		return nil
	}
	fmt.Fprintf(w, "  tiers      %s / %s\n", safe(x.TierFrom), safe(x.TierTo))
	fmt.Fprintf(w, "  weight     %.4f, reinforced %g times (established: %v)\n", x.Weight, x.ReinforcementCount, x.Established)
	fmt.Fprintf(w, "  lambda     %g per active hour\n", x.Lambda)
	if x.ElapsedHours != nil {
		fmt.Fprintf(w, "  elapsed    %.2f active hours since %.2f\n", *x.ElapsedHours, *x.LastActiveHours)
	}
	fmt.Fprintf(w, "  effective  %.4f (threshold %.4f)\n", x.EffectiveWeight, x.Threshold)
	fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
	return nil
}

func explainFact(c *cli.Context, now time.Time) error {
	db, err := openMemory(c, true)
	if err != nil {
		return err
	}
	defer db.Close()
	x, err := worker.ExplainFact(c.Context, db, c.String("fact"), now)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, x)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "fact %s (%s, tier %s, %s)\n", safe(x.ID), safe(x.Segment), safe(x.Tier), safe(x.Status))
	if x.Invalid {
		fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
		return nil
	}
	fmt.Fprintf(w, "  importance %.3f, decay rate %.3f, recalled %g times\n", x.Importance, x.DecayRate, x.AccessCount)
	fmt.Fprintf(w, "  last use   %.1f days ago\n", x.DaysSinceAccess)
	fmt.Fprintf(w, "  score      %.4f → %s\n", x.Score, x.Action)
	if x.ArchiveInDays != nil {
		fmt.Fprintf(w, "  archived   in %.1f days without use\n", *x.ArchiveInDays)
	}
	if x.PruneInDays != nil {
		fmt.Fprintf(w, "  pruned     in %.1f days without use\n", *x.PruneInDays)
	}
	fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
	return nil
}
