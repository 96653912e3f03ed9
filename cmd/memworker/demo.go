package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func demoCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "demo",
		Usage: "migrate a fresh file, load a sample memory graph, advance the clock, sweep, report",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			path := givenDB(c)
			if path == "" {
				dir, err := os.MkdirTemp("", "memworker-demo-")
				if err != nil {
					return err
				}
				path = filepath.Join(dir, "memory.db")
			}
			db, err := worker.Open(path, worker.OpenOptions{Create: true})
			if err != nil {
				return err
			}
			defer db.Close()
			if err := worker.LoadDemo(c.Context, db); err != nil {
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				w = c.App.ErrWriter // stdout carries the JSON report alone
			}
			fmt.Fprintf(w, "sample memory graph loaded into %s\n", path)
			now, err := worker.AdvanceClock(c.Context, db, worker.DemoSweepAt-480)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "clock advanced to %g active hours\n", now)
			r, err := worker.Sweep(c.Context, db, worker.SweepOptions{})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, r)
			}
			fmt.Fprintf(w, "\n%s\n\n", r.Summary)
			fmt.Fprintf(w, "  archived blocks            %d (and %d of their edges)\n", r.Archived, r.EdgesRemovedWithBlocks)
			fmt.Fprintf(w, "  edges pruned (static)      %d\n", r.EdgesPruned)
			fmt.Fprintf(w, "  edges decayed (temporal)   %d\n", r.EdgesDecayed)
			fmt.Fprintf(w, "  edges left                 %d of %d\n", r.TotalEdgesAfter, r.EdgesBefore)
			fmt.Fprintf(w, "  reinforced                 %d top, %d constitutional\n", r.Reinforced, r.ConstitutionalReinforced)
			printInvalidSample(w, r)
			for _, e := range r.DecayedSample {
				fmt.Fprintf(w, "  decayed %s — %s: weight %.2f, effective %.3f\n", safe(e.From), safe(e.To), e.Weight, e.EffectiveWeight)
			}
			fmt.Fprintf(w, "\nExplore: memworker status --db %s; memworker decayed --db %s\n", path, path)
			return nil
		},
	})
}
