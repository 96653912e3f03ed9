package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func decayedCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "decayed",
		Usage: "recent removals, and the edges closest to decaying",
		Flags: []cli.Flag{&cli.IntFlag{Name: "limit", Value: 10, Usage: "rows per list"}, jsonFlag()},
		Action: func(c *cli.Context) error {
			db, err := openMemory(c, true)
			if err != nil {
				return err
			}
			defer db.Close()
			events, soon, err := worker.Decayed(c.Context, db, c.Int("limit"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, map[string]any{"events": events, "closest_to_decay": soon})
			}
			w := c.App.Writer
			fmt.Fprintln(w, "recent removals:")
			for _, e := range events {
				fmt.Fprintf(w, "  #%d at %.2f h  %s %s %s (%s)\n", e.ID, e.ClockHours, e.Action, e.Kind, e.Subject, e.Reason)
			}
			fmt.Fprintln(w, "closest to decay:")
			for _, o := range soon {
				fmt.Fprintf(w, "  %s — %s  weight %.3f, effective %.3f, %.1f h left\n", o.From, o.To, o.Weight, o.EffectiveWeight, o.HoursLeft)
			}
			return nil
		},
	})
}
