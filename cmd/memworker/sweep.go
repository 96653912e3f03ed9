package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker"
)

// sweepFlags are the flags sweep and run share.
func sweepFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "compute and report; change no byte of the file"},
		&cli.BoolFlag{Name: "full", Usage: "evaluate every row, not only those changed or due (same result, slower)"},
		&cli.StringFlag{Name: "now", Usage: "sweep at active hour `H` instead of mem_config active_hours"},
		&cli.BoolFlag{Name: "force", Usage: "sweep even at a clock behind the last sweep's (last_curate_at), as at a new one: reinforcing again, and setting last_curate_at back to it"},
		&cli.StringFlag{Name: "wall-now", Usage: "wall clock `T` (unix seconds, or ISO-8601 / SQLite datetime text: 2026-01-02T15:04:05Z, 2026-01-02 15:04:05 in UTC) for facts, policies and events"},
		&cli.IntFlag{Name: "chunk", Value: worker.DefaultChunkSize, Usage: "rows per transaction while another connection writes to the file"},
		&cli.IntFlag{Name: "solo-chunk", Value: worker.DefaultSoloChunkSize, Usage: "rows per transaction while no other connection writes to the file (when above --chunk)"},
		durationFlag("solo-hold", worker.DefaultSoloHold, "while no other connection writes, a transaction grows towards --solo-chunk rows only as far as fits in this long (`DURATION`)"),
		durationFlag("pause", worker.DefaultPause, "least time (`DURATION`) the lock stays free between two transactions, so app writers get it (100ms bounds an app's wait to about one transaction; none while no other process has the file open, on Linux)"),
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "databases swept at once when --db is a glob or several rqlite URLs"},
	}
}

// sweepOptions reads the shared sweep flags.
func sweepOptions(c *cli.Context, cmd string) (worker.SweepOptions, error) {
	opt := worker.SweepOptions{DryRun: c.Bool("dry-run"), Full: c.Bool("full"), Bulk: c.Bool("bulk"), Force: c.Bool("force"), ChunkSize: c.Int("chunk"),
		SoloChunkSize: c.Int("solo-chunk"), SoloHold: durationOf(c, "solo-hold"), Pause: durationOf(c, "pause"),
		OwnProcess: true} // the CLI's process holds no app's connection
	if s := c.String("now"); s != "" {
		h, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(h) || math.IsInf(h, 0) || h < 0 {
			return opt, usagef(cmd, "--now %q is not a non-negative number of active hours", s)
		}
		opt.Now = &h
	}
	if s := c.String("wall-now"); s != "" {
		t, err := parseWallTime(s)
		if err != nil {
			return opt, usagef(cmd, "--wall-now: %v", err)
		}
		opt.WallNow = &t
	}
	if opt.ChunkSize <= 0 || opt.SoloChunkSize <= 0 || opt.SoloHold <= 0 {
		return opt, usagef(cmd, "--chunk, --solo-chunk and --solo-hold must be positive")
	}
	if opt.Pause < 0 || c.Int("jobs") < 1 {
		return opt, usagef(cmd, "--pause must not be negative and --jobs must be at least 1")
	}
	return opt, nil
}

func sweepCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "sweep",
		Usage: "archive faded blocks, prune and decay edges, run policies and the fact lifecycle, report",
		Description: "--db may be a glob (\"memories/*.db\"): the files are swept -j at a time, " +
			"with one report per file and a total; or several rqlite URLs separated by commas " +
			"(\"http://a:4001,http://b:4001\"), one cluster each, never globbed.",
		Flags: append(sweepFlags(), jsonFlag(),
			&cli.BoolFlag{Name: "bulk", Usage: "the whole sweep in one write transaction, for a first sweep at adoption or in a maintenance window: " +
				"faster, but an app writing meanwhile waits for all of it (its busy timeout); cut off, it rolls back whole. Same result; " +
				"files only (not rqlite); with --dry-run, a dry run"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "under the summary, the detail: per phase, per policy, facts, invalid rows, decayed edges"},
			&cli.BoolFlag{Name: "list", Usage: "with --dry-run: under the summary, every row the sweep would change, one a line, " +
				"with why and the numbers that decided it (--json: the report's \"planned\")"},
			&cli.BoolFlag{Name: "wait", Usage: "when another sweep holds the file, wait for it to finish, then sweep (else exit 75)"}),
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			if len(args) > 0 {
				return usagef("sweep", "unexpected argument %q", args[0])
			}
			opt, err := sweepOptions(c, "sweep")
			if err != nil {
				return err
			}
			if opt.List = c.Bool("list"); opt.List && !opt.DryRun {
				return usagef("sweep", "--list lists what a sweep would change: it needs --dry-run")
			}
			pattern, err := dbPath(c)
			if err != nil {
				return err
			}
			paths, err := worker.ExpandPaths(pattern)
			if err != nil {
				return err
			}
			if len(paths) == 1 {
				if !c.Bool("json") {
					opt.Progress = progressBar(c.App.ErrWriter)
				}
				r, err := sweepWaiting(c, paths[0], opt)
				if errors.Is(err, worker.ErrClockBehind) {
					return usagef("sweep", "%v; nothing was changed (--force sweeps there anyway)", err)
				}
				if err != nil {
					return err
				}
				if c.Bool("json") && opt.List {
					return printJSON(c.App.Writer, listedReport{r, r.Planned})
				}
				if c.Bool("json") {
					return printJSON(c.App.Writer, r)
				}
				fmt.Fprintln(c.App.Writer, dryRunPrefix(r)+escapeControls(r.Summary))
				for _, p := range r.Planned {
					fmt.Fprintln(c.App.Writer, plannedLine(p))
				}
				if c.Bool("verbose") {
					printSweepDetail(c.App.Writer, r)
				} else {
					printInvalidSample(c.App.Writer, r)
				}
				return nil
			}
			results, total := worker.SweepFleet(c.Context, paths, c.Int("jobs"), opt)
			if c.Bool("json") {
				if err := printJSON(c.App.Writer, map[string]any{"databases": results, "total": total}); err != nil {
					return err
				}
			} else {
				for _, r := range results {
					if r.Report != nil {
						fmt.Fprintf(c.App.Writer, "%s: %s%s\n", safe(r.Path), dryRunPrefix(r.Report), escapeControls(r.Report.Summary))
						for _, p := range r.Report.Planned {
							fmt.Fprintf(c.App.Writer, "%s: %s\n", safe(r.Path), plannedLine(p))
						}
					} else {
						fmt.Fprintf(c.App.Writer, "%s: FAILED: %s\n", safe(r.Path), escapeControls(r.Error))
					}
				}
				byPolicy := total.EdgesRemoved - total.EdgesRemovedWithBlocks - total.EdgesPruned - total.EdgesDecayed
				fmt.Fprintf(c.App.Writer, "total: %d databases (%d failed), %d archived, %d edges removed (%d with blocks, %d pruned, %d decayed, %d by policy), %d edges remain\n",
					total.Databases, total.Failed, total.Archived, total.EdgesRemoved, total.EdgesRemovedWithBlocks, total.EdgesPruned,
					total.EdgesDecayed, byPolicy, total.TotalEdgesAfter)
			}
			if total.Failed > 0 {
				busy := 0
				for _, r := range results {
					if r.Busy {
						busy++
					}
				}
				if busy == total.Failed { // only held by other sweeps or writers: try later (exit 75), not a failure
					return fmt.Errorf("%w: %d of %d databases are held by another sweep or a writer; try again later", worker.ErrSweepRunning, busy, total.Databases)
				}
				return fmt.Errorf("%d of %d databases failed", total.Failed, total.Databases)
			}
			return nil
		},
	})
}

// waitPoll is how often sweep --wait looks whether the other sweep is done.
const waitPoll = 500 * time.Millisecond

// sweepWaiting sweeps one file; with --wait, while another sweep holds it,
// it says so once and tries again until that sweep ends (or Ctrl-C).
func sweepWaiting(c *cli.Context, path string, opt worker.SweepOptions) (*worker.Report, error) {
	told := false
	for {
		r, err := worker.SweepFile(c.Context, path, opt)
		if !c.Bool("wait") || !errors.Is(err, worker.ErrSweepRunning) {
			return r, err
		}
		if !told {
			fmt.Fprintf(c.App.ErrWriter, "memworker: %v; waiting\n", err)
			told = true
		}
		select {
		case <-c.Context.Done():
			return nil, c.Context.Err()
		case <-time.After(waitPoll):
		}
	}
}

func dryRunPrefix(r *worker.Report) string {
	if r.DryRun {
		return "[dry run] "
	}
	return ""
}

// progressBar draws rows done per step on a terminal; it is silent when
// stderr is not one (logs, pipes, CI).
func progressBar(w io.Writer) func(step string, done, total int64) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	current := ""
	return func(step string, done, total int64) {
		if step != current || bar == nil {
			if bar != nil {
				bar.Finish()
			}
			current = step
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(stepLabel(step)),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		bar.Set64(done)
	}
}

// stepOrder labels the progress of each chunked step, in the order a sweep
// runs them, so the bar reads "step k of n" (a sweep skips the steps it has
// nothing for).
var stepOrder = []struct{ step, label string }{
	{"refresh_ids", "refreshing blocks and facts"},
	{"refresh_edges", "refreshing edges"},
	{"sweep_edges", "storing due times"},
	{"sync_rows", "storing derived state"},
	{"plan_blocks", "archiving blocks"},
	{"plan_edges", "removing edges"},
	{"plan_flags", "excluding edges"},
	{"plan_facts", "archiving facts"},
	{"plan_rank", "storing rank bounds"},
}

// stepLabel is a step's progress label: "step k of n: what (rows)".
func stepLabel(step string) string {
	for i, s := range stepOrder {
		if s.step == step {
			return fmt.Sprintf("step %d of %d: %s", i+1, len(stepOrder), s.label)
		}
	}
	return step
}

// parseWallTime reads unix seconds or an ISO-8601 / SQLite datetime text
// (RFC 3339 included), with the parser the wall-clock columns are read by.
func parseWallTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) < 1e15 {
		whole := math.Floor(f)
		return time.Unix(int64(whole), int64((f-whole)*1e9)).UTC(), nil
	}
	secs, err := sqlfuncs.ParseWallClock("sweep", "--wall-now", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither unix seconds nor an ISO-8601 time (2026-01-02T15:04:05Z, or 2026-01-02 15:04:05 in UTC)", s)
	}
	whole := math.Floor(secs)
	return time.Unix(int64(whole), int64((secs-whole)*1e9)).UTC(), nil
}

// listedReport is the report of sweep --dry-run --list --json: its
// "planned" always there, [] when the sweep would change nothing.
type listedReport struct {
	*worker.Report
	Planned []worker.PlannedChange `json:"planned"`
}

// plannedLine is one row a sweep would change, as --list prints it:
// action, kind, key (an edge keyed by its ends as "from — to"), its table,
// the reason, then the numbers that decided it.
//
//	archive block obs1 (mem_blocks) decayed tier=ephemeral recency=0.0123 threshold=0.05 ...
func plannedLine(p worker.PlannedChange) string {
	key := make([]string, len(p.Key))
	for i, v := range p.Key {
		key[i] = safe(fmt.Sprint(v))
	}
	keyText := strings.Join(key, ", ")
	ends := p.Kind == "edge" && len(key) == 2 && fmt.Sprint(p.Key[0]) == p.From && fmt.Sprint(p.Key[1]) == p.To
	if ends {
		keyText = key[0] + " — " + key[1]
	}
	parts := []string{safe(p.Action), safe(p.Kind), keyText, "(" + safe(p.Table) + ")", safe(p.Reason)}
	text := func(name, v string) {
		if v != "" {
			parts = append(parts, name+"="+safe(v))
		}
	}
	if !ends {
		text("from", p.From)
		text("to", p.To)
	}
	text("block", p.Block)
	text("tier", p.Tier)
	unit := map[string]string{"hours": "h", "days": "d"}[p.ElapsedUnit]
	for _, n := range []struct {
		name string
		v    *float64
		unit string
	}{{"weight", p.Weight, ""}, {"effective", p.Effective, ""}, {"lambda", p.Lambda, ""}, {"elapsed", p.Elapsed, unit},
		{"recency", p.Recency, ""}, {"score", p.Score, ""}, {"threshold", p.Threshold, ""}, {"degree", p.Degree, ""},
		{"count", p.ReinforcementCount, ""}} {
		if n.v != nil {
			parts = append(parts, n.name+"="+plannedNumber(*n.v)+n.unit)
		}
	}
	if p.Rank > 0 {
		parts = append(parts, fmt.Sprintf("rank=%d", p.Rank))
	}
	return strings.Join(parts, " ")
}

// plannedNumber shows a deciding number with four significant digits,
// a large one (hours since 1970 on an app's unix clock) whole.
func plannedNumber(v float64) string {
	if math.Abs(v) >= 1e4 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
