package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func clockCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "clock",
		Usage: "show or advance the active-hours clock",
		Subcommands: []*cli.Command{
			{Name: "show", Usage: "print active hours",
				Action: func(c *cli.Context) error {
					db, err := openMemory(c, true)
					if err != nil {
						return err
					}
					defer db.Close()
					cfg, err := worker.LoadConfig(c.Context, db.SQL)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "%g\n", cfg.ActiveHours)
					return nil
				}},
			{Name: "advance", Usage: "add H active hours", ArgsUsage: "H",
				OnUsageError: func(c *cli.Context, err error, _ bool) error {
					return flagUsage(c, err, "the clock only moves forward; to set it back: memworker config set --force active_hours H")
				},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) != 1 {
						return usagef("clock advance", "want exactly one argument: the hours to add")
					}
					h, err := strconv.ParseFloat(args[0], 64)
					if err != nil || h < 0 || math.IsInf(h, 0) || math.IsNaN(h) {
						return usagef("clock advance", "%q is not a non-negative number of hours", args[0])
					}
					db, err := openMemory(c, false)
					if err != nil {
						return err
					}
					defer db.Close()
					now, err := worker.AdvanceClock(c.Context, db, h)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "%g\n", now)
					return nil
				}},
		},
	})
}
