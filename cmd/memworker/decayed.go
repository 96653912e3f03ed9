package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func decayedCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "decayed",
		Usage: "recent removals, and the edges closest to decaying; --invalid: every row sweeps skip",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Value: 10, Usage: "rows per list"},
			&cli.BoolFlag{Name: "invalid", Usage: "list every invalid row sweeps skip (table, id, problem), not only the report's sample " +
				"(a change an app's trigger or constraint refused is found by trying it: a sweep's report names it)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			db, err := openMemory(c, true)
			if err != nil {
				return err
			}
			defer db.Close()
			if c.Bool("invalid") {
				return listInvalid(c, db)
			}
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
				fmt.Fprintf(w, "  #%d at %.2f h (%s)  %s %s %s (%s)\n", e.ID, e.ClockHours, wallDate(e.At),
					safe(e.Action), safe(e.Kind), subjectText(e), safe(e.Reason))
			}
			fmt.Fprintln(w, "closest to decay:")
			for _, o := range soon {
				link := ""
				if o.Key != "" {
					link = "  (link " + safe(o.Key) + ")"
				}
				fmt.Fprintf(w, "  %s — %s%s  weight %.3f, effective %.3f, %s left\n", safe(o.From), safe(o.To), link, o.Weight, o.EffectiveWeight, timeLeft(o))
			}
			return nil
		},
	})
}

// listInvalid prints every row a sweep now would skip as invalid.
func listInvalid(c *cli.Context, db *worker.DB) error {
	rows, err := worker.ListInvalid(c.Context, db)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, map[string]any{"count": len(rows), "invalid_rows": rows})
	}
	w := c.App.Writer
	fmt.Fprintf(w, "invalid rows: %d (sweeps skip them and never change them)\n", len(rows))
	for _, r := range rows {
		table := r.Table // the app's, through a mapping
		if table == "" {
			table = tables[r.Kind]
		}
		fmt.Fprintf(w, "  %-10s %s: %s\n", safe(table), safe(r.ID), safe(r.Problem))
	}
	return nil
}

// subjectText names an event's subject for a reader: an edge as "a — b".
func subjectText(e worker.DecayEvent) string {
	if from, to, ok := e.EdgeEnds(); ok {
		return safe(from) + " — " + safe(to)
	}
	return safe(e.Subject)
}
