package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func restoreCommand(now func() time.Time) *cli.Command {
	return withFlags(&cli.Command{
		Name:      "restore",
		Usage:     "bring back what a sweep archived or removed, from the event log",
		ArgsUsage: "--edge A B | --edge KEY | --block ID | --fact ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "edge", Usage: "restore the edge between blocks A and B (through a mapping: the edge of key KEY, or A B for a key of two columns)"},
			&cli.StringFlag{Name: "block", Usage: "restore the archived block `ID` with its tags and edges"},
			&cli.StringFlag{Name: "fact", Usage: "restore the archived or pruned fact `ID`"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			chosen := 0
			for _, set := range []bool{c.Bool("edge"), c.String("block") != "", c.String("fact") != ""} {
				if set {
					chosen++
				}
			}
			if chosen != 1 || (c.Bool("edge") != (len(args) == 1 || len(args) == 2)) || (!c.Bool("edge") && len(args) > 0) {
				return usagef("restore", "want exactly one of --edge A B (or --edge KEY through a mapping), --block ID, --fact ID")
			}
			db, err := openMemory(c, false)
			if err != nil {
				return err
			}
			defer db.Close()
			var r *worker.Restored
			wall := now()
			switch {
			case c.Bool("edge"):
				a, b, argErr := edgeArgs(c, db, args, "restore", "want exactly one of --edge A B, --block ID, --fact ID")
				if argErr != nil {
					return argErr
				}
				r, err = worker.RestoreEdge(c.Context, db, a, b, wall)
			case c.String("block") != "":
				r, err = worker.RestoreBlock(c.Context, db, c.String("block"), wall)
			default:
				r, err = worker.RestoreFact(c.Context, db, c.String("fact"), wall)
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, r)
			}
			fmt.Fprintf(c.App.Writer, "restored %s %s (from event #%d)", r.Kind, safe(r.ID), r.FromEvent)
			if r.Kind == "block" {
				fmt.Fprintf(c.App.Writer, " with %d edges", r.Edges)
				if len(r.EdgesSkipped) > 0 {
					fmt.Fprintf(c.App.Writer, "; %d edges wait for their other end: %s", len(r.EdgesSkipped), strings.Join(safeAll(r.EdgesSkipped), ", "))
				}
				if r.Dependents > 0 || r.DependentsSkipped > 0 {
					fmt.Fprintf(c.App.Writer, "; %d dependent rows back", r.Dependents)
					if r.DependentsSkipped > 0 {
						fmt.Fprintf(c.App.Writer, ", %d wait for another node they name", r.DependentsSkipped)
					}
				}
			}
			fmt.Fprintln(c.App.Writer)
			if r.Warning != "" {
				fmt.Fprintln(c.App.ErrWriter, "memworker: warning: "+escapeControls(r.Warning))
			}
			return nil
		},
	})
}

// edgeArgs are the edge --edge names: its two ends (memworker's own
// tables), or through a mapping its key of one column (the second "") or
// two; one argument for memworker's own tables is a usage error of cmd,
// saying want.
func edgeArgs(c *cli.Context, db *worker.DB, args []string, cmd, want string) (string, string, error) {
	if len(args) == 2 {
		return args[0], args[1], nil
	}
	d, err := worker.Mapping(c.Context, db)
	if err != nil {
		return "", "", err
	}
	if d.IsDefault() {
		return "", "", usagef(cmd, "%s (an edge of memworker's own tables is named by both its ends)", want)
	}
	return args[0], "", nil
}
