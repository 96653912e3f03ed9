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
			fmt.Fprintf(w, "clock         %.2f active hours\n", st.ActiveHours)
			if st.HoursSinceCurate != nil {
				fmt.Fprintf(w, "last sweep at %.2f h (%.2f h ago)", *st.LastCurateAt, *st.HoursSinceCurate)
			} else {
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
