package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func factCommand(now func() time.Time) *cli.Command {
	change := func(c *cli.Context, r *worker.FactChange) error {
		if c.Bool("json") {
			return printJSON(c.App.Writer, r)
		}
		fmt.Fprintf(c.App.Writer, "fact %s: %s; importance %.3f → %.3f, recalled %d times", safe(r.ID), safe(r.DirectionOrKind),
			r.ImportanceBefore, r.ImportanceAfter, r.AccessCountAfter)
		if r.ClockReset {
			fmt.Fprint(c.App.Writer, ", decay clock reset")
		}
		if !r.Recorded {
			fmt.Fprint(c.App.Writer, " (passive: nothing changed)")
		}
		fmt.Fprintln(c.App.Writer)
		if r.Problem != "" {
			fmt.Fprintf(c.App.Writer, "  sweeps skip it while %s\n", safe(r.Problem))
		}
		return nil
	}
	return withFlags(&cli.Command{
		Name:  "fact",
		Usage: "feedback on and recall of facts",
		Subcommands: []*cli.Command{
			{Name: "feedback", Usage: "up: importance +0.05 and the clock reset; down: importance −0.10", ArgsUsage: "ID up|down",
				Flags: []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) != 2 || (args[1] != "up" && args[1] != "down") {
						return usagef("fact feedback", "want ID up|down")
					}
					db, err := openMemory(c, false)
					if err != nil {
						return err
					}
					defer db.Close()
					r, err := worker.Feedback(c.Context, db, args[0], args[1] == "up", now())
					if err != nil {
						return err
					}
					return change(c, r)
				}},
			{Name: "recall", Usage: "record a use: access count +1, the clock reset (--auto: passive, changes nothing)", ArgsUsage: "ID",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "auto", Usage: "a passive auto-recall, which never reinforces"}, jsonFlag()},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) != 1 {
						return usagef("fact recall", "want ID")
					}
					db, err := openMemory(c, c.Bool("auto"))
					if err != nil {
						return err
					}
					defer db.Close()
					r, err := worker.Recall(c.Context, db, args[0], c.Bool("auto"), now())
					if err != nil {
						return err
					}
					return change(c, r)
				}},
		},
	})
}
