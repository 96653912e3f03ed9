package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func statusCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "status",
		Usage: "counts, the clock, hours since the last sweep",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			if p := givenDB(c); worker.IsFleet(p) {
				return fleetStatus(c, p)
			}
			db, err := openMemory(c, true)
			if err != nil {
				return err
			}
			defer db.Close()
			st, err := worker.GetStatus(c.Context, db)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, st)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "database      %s (schema %d)\n", st.Path, st.SchemaVersion)
			if st.MappingTables != "" {
				fmt.Fprintf(w, "mapping       %s (%s): swept in place; the counts and the clock below are of the app's tables\n",
					safe(st.Mapping), safe(st.MappingTables))
			}
			if st.WallClockHours {
				fmt.Fprintf(w, "clock         %.2f h: the wall clock in hours since 1970 (the mapping's times are wall times)\n", st.ActiveHours)
			} else {
				fmt.Fprintf(w, "clock         %.2f active hours\n", st.ActiveHours)
			}
			switch {
			case st.SweepAheadHours != nil:
				fmt.Fprintf(w, "last sweep at %.2f h (%.2f h ahead of the clock: swept with --now)", *st.LastCurateAt, *st.SweepAheadHours)
			case st.HoursSinceCurate != nil:
				fmt.Fprintf(w, "last sweep at %.2f h (%.2f h ago)", *st.LastCurateAt, *st.HoursSinceCurate)
			default:
				fmt.Fprint(w, "last sweep at never")
			}
			if st.CurateDue {
				fmt.Fprint(w, ", a sweep is due")
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "blocks        %s\n", counts(st.Blocks))
			fmt.Fprintf(w, "edges         %d (%d decayed in all)\n", st.Edges, st.EdgesDecayed)
			fmt.Fprintf(w, "facts         %s\n", counts(st.Facts))
			fmt.Fprintf(w, "events        %d\n", st.Events)
			if st.LargeWAL() {
				fmt.Fprintf(w, "wal           %.1f MB beside a %.1f MB file: a read transaction held open kept it from restarting; the next sweep cuts it back once none is (docs/running.md)\n",
					float64(*st.WALBytes)/(1<<20), float64(*st.FileBytes)/(1<<20))
			}
			if ls := st.LastSweep; ls != nil {
				fmt.Fprintf(w, "sweep %d       %s at %.2f h: %s\n", ls.ID, ls.Status, ls.ClockHours, escapeControls(ls.Summary))
			}
			return nil
		},
	})
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range []string{"active", "inbox", "confirmed", "archived"} {
		if n, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

// fleetStatus prints one line per file a glob matches, or per rqlite URL
// (--json: an array), and fails when any could not be read, after
// reporting the others.
func fleetStatus(c *cli.Context, pattern string) error {
	paths, err := worker.ExpandPaths(pattern)
	if err != nil {
		return err
	}
	type entry struct {
		*worker.Status
		Path  string `json:"path"`
		Error string `json:"error,omitempty"`
	}
	var all []entry
	failed := 0
	for _, p := range paths {
		e := entry{Path: worker.DisplayName(p)}
		db, err := worker.OpenMemory(p, true)
		if err == nil {
			e.Status, err = worker.GetStatus(c.Context, db)
			db.Close()
		}
		if err != nil {
			e.Error = err.Error()
			failed++
		}
		all = append(all, e)
	}
	if c.Bool("json") {
		if err := printJSON(c.App.Writer, all); err != nil {
			return err
		}
	} else {
		for _, e := range all {
			fmt.Fprintln(c.App.Writer, statusLine(e.Path, e.Status, e.Error))
		}
	}
	if failed > 0 {
		what := "files"
		if worker.IsRqliteURL(pattern) {
			what = "clusters"
		}
		return fmt.Errorf("status: %d of %d %s could not be read", failed, len(paths), what)
	}
	return nil
}

// statusLine is one file's status on one line, with units.
func statusLine(path string, st *worker.Status, problem string) string {
	if st == nil {
		return fmt.Sprintf("%s  error: %s", safe(path), escapeControls(problem))
	}
	since := "never swept"
	switch {
	case st.SweepAheadHours != nil:
		since = fmt.Sprintf("last sweep %.2f h ahead of the clock", *st.SweepAheadHours)
	case st.HoursSinceCurate != nil:
		since = fmt.Sprintf("last sweep %.2f h ago", *st.HoursSinceCurate)
	}
	due := ""
	if st.CurateDue {
		due = ", due"
	}
	return fmt.Sprintf("%s  schema %d, clock %.2f h, %s%s; blocks %s; edges %d; facts %s; events %d",
		safe(path), st.SchemaVersion, st.ActiveHours, since, due, counts(st.Blocks), st.Edges, counts(st.Facts), st.Events)
}
