package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
			if err := refuseSeveral(c, path); err != nil {
				return err
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
			fmt.Fprintf(w, "sample memory graph loaded into %s\n", worker.DisplayName(path))
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
			printSweepDetail(w, r)
			me := invokedAs()
			fmt.Fprintf(w, "\nExplore: %s status --db %s; %s decayed --db %s\n", me, worker.DisplayName(path), me, worker.DisplayName(path))
			return nil
		},
	})
}

// invokedAs is memworker as this process was started: the path it was
// given (build/memworker after make build, not on PATH), or memworker
// when it was found on PATH, so that a hint runs as printed.
func invokedAs() string {
	if arg := os.Args[0]; strings.ContainsRune(arg, filepath.Separator) && filepath.Base(arg) == "memworker" {
		return arg
	}
	return "memworker"
}
