package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a mistake in how memworker was called; it exits 2 with a hint.
type usageError struct {
	msg, hint string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...), hint: "Try: memworker " + cmd + " --help"}
}

// run executes memworker with args, writing to the given streams, and
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.RunContext(context.Background(), args)
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "memworker: %s\n%s\n", ue.msg, ue.hint)
		return exitUsage
	}
	fmt.Fprintf(stderr, "memworker: %v\n", err)
	return exitFailure
}

// Flags are made per app: urfave/cli stores values in them.
func dbFlag() cli.Flag {
	return &cli.StringFlag{Name: "db", Usage: "SQLite `PATH` of the memory database", EnvVars: []string{"MEMWORKER_DB"}}
}

func jsonFlag() cli.Flag { return &cli.BoolFlag{Name: "json", Usage: "print JSON"} }

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:           "memworker",
		Usage:          "memory decay for SQLite: migrate, sweep, inspect",
		Version:        sqlfuncs.Version,
		Writer:         stdout,
		ErrWriter:      stderr,
		Flags:          []cli.Flag{dbFlag()},
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &usageError{msg: err.Error(), hint: "Try: memworker --help"}
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return &usageError{msg: fmt.Sprintf("unknown command %q", c.Args().First()), hint: "Try: memworker --help"}
			}
			return cli.ShowAppHelp(c)
		},
		Commands: []*cli.Command{
			migrateCommand(), sweepCommand(), runCommand(), statusCommand(), clockCommand(), configCommand(),
			decayedCommand(), explainCommand(), restoreCommand(), factCommand(), demoCommand(),
		},
	}
}

// withFlags adds the flags every command takes.
func withFlags(c *cli.Command) *cli.Command {
	c.Flags = append([]cli.Flag{dbFlag()}, c.Flags...)
	c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error {
		return &usageError{msg: err.Error(), hint: "Try: " + ctx.Command.HelpName + " --help"}
	}
	if len(c.Subcommands) > 0 && c.Action == nil {
		c.Action = func(ctx *cli.Context) error {
			if ctx.Args().Present() {
				return usagef(commandPath(ctx), "unknown subcommand %q", ctx.Args().First())
			}
			return cli.ShowSubcommandHelp(ctx)
		}
	}
	for _, sub := range c.Subcommands {
		withFlags(sub)
	}
	return c
}

// commandPath is the command as typed after "memworker", for hints.
func commandPath(c *cli.Context) string {
	return strings.TrimPrefix(c.Command.HelpName, "memworker ")
}

// positional returns a command's arguments, first applying any of its flags
// written after them (urfave/cli stops at the first argument, but users
// write `memworker clock advance 40 --db memory.db`).
func positional(c *cli.Context) ([]string, error) {
	var out []string
	raw := c.Args().Slice()
	for i := 0; i < len(raw); i++ {
		tok := raw[i]
		if _, err := strconv.ParseFloat(tok, 64); err == nil || !strings.HasPrefix(tok, "-") || tok == "-" {
			out = append(out, tok)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		var flag cli.Flag
		for _, f := range c.Command.Flags {
			for _, n := range f.Names() {
				if n == name {
					flag = f
				}
			}
		}
		if flag == nil {
			return nil, usagef(commandPath(c), "unknown flag %s", tok)
		}
		if _, isBool := flag.(*cli.BoolFlag); isBool && !hasValue {
			value, hasValue = "true", true
		}
		if !hasValue {
			if i+1 >= len(raw) {
				return nil, usagef(commandPath(c), "flag %s needs a value", tok)
			}
			i++
			value = raw[i]
		}
		if err := c.Set(name, value); err != nil {
			return nil, usagef(commandPath(c), "flag %s: %v", tok, err)
		}
	}
	return out, nil
}

// dbPath is --db, wherever it was written (before or after the command),
// or MEMWORKER_DB.
func dbPath(c *cli.Context) (string, error) {
	for _, cc := range c.Lineage() {
		if p := cc.String("db"); p != "" {
			return p, nil
		}
	}
	return "", usagef(commandPath(c), "no database: pass --db PATH or set MEMWORKER_DB")
}

// openMemory opens the migrated database named by --db.
func openMemory(c *cli.Context, readOnly bool) (*worker.DB, error) {
	p, err := dbPath(c)
	if err != nil {
		return nil, err
	}
	return worker.OpenMemory(p, readOnly)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func migrateCommand() *cli.Command {
	open := func(c *cli.Context) (*worker.DB, error) {
		p, err := dbPath(c)
		if err != nil {
			return nil, err
		}
		return worker.Open(p, worker.OpenOptions{Create: c.Command.Name == "up"})
	}
	return withFlags(&cli.Command{
		Name:  "migrate",
		Usage: "install, revert or show the memory schema",
		Subcommands: []*cli.Command{
			{Name: "up", Usage: "apply every pending migration (creates the file if missing)",
				Action: func(c *cli.Context) error {
					db, err := open(c)
					if err != nil {
						return err
					}
					defer db.Close()
					v, err := schema.Up(db.SQL)
					if err != nil {
						return err
					}
					if err := db.UseWAL(); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "schema at version %d\n", v)
					return nil
				}},
			{Name: "down", Usage: "revert the newest migration (--all: every migration)",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "revert every migration, dropping the mem_ tables"}},
				Action: func(c *cli.Context) error {
					db, err := open(c)
					if err != nil {
						return err
					}
					defer db.Close()
					v, err := schema.Down(db.SQL, c.Bool("all"))
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "schema at version %d\n", v)
					return nil
				}},
			{Name: "version", Usage: "print the installed schema version",
				Action: func(c *cli.Context) error {
					db, err := open(c)
					if err != nil {
						return err
					}
					defer db.Close()
					v, dirty, err := schema.Version(db.SQL)
					if err != nil {
						return err
					}
					latest, _ := schema.Latest()
					fmt.Fprintf(c.App.Writer, "version %d (this memworker knows up to %d)", v, latest)
					if dirty {
						fmt.Fprint(c.App.Writer, ", dirty")
					}
					fmt.Fprintln(c.App.Writer)
					return nil
				}},
		},
	})
}

// sweepFlags are the flags sweep and run share.
func sweepFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "compute and report; change no byte of the file"},
		&cli.BoolFlag{Name: "full", Usage: "evaluate every row, not only those changed or due (same result, slower)"},
		&cli.StringFlag{Name: "now", Usage: "sweep at active hour `H` instead of mem_config active_hours"},
		&cli.StringFlag{Name: "wall-now", Usage: "wall clock `T` (unix seconds or RFC 3339) for facts, policies and events"},
		&cli.IntFlag{Name: "chunk", Value: worker.DefaultChunkSize, Usage: "rows per transaction while another connection writes to the file"},
		&cli.IntFlag{Name: "solo-chunk", Value: worker.DefaultSoloChunkSize, Usage: "rows per transaction while no other connection writes to the file (when above --chunk)"},
		&cli.DurationFlag{Name: "solo-hold", Value: worker.DefaultSoloHold, Usage: "while no other connection writes, a transaction grows towards --solo-chunk rows only as far as fits in this long"},
		&cli.DurationFlag{Name: "pause", Value: worker.DefaultPause, Usage: "least time the lock stays free between two transactions, so app writers get it (100ms bounds an app's wait to about one transaction)"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "databases swept at once when --db is a glob"},
	}
}

// sweepOptions reads the shared sweep flags.
func sweepOptions(c *cli.Context, cmd string) (worker.SweepOptions, error) {
	opt := worker.SweepOptions{DryRun: c.Bool("dry-run"), Full: c.Bool("full"), ChunkSize: c.Int("chunk"),
		SoloChunkSize: c.Int("solo-chunk"), SoloHold: c.Duration("solo-hold"), Pause: c.Duration("pause")}
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
			"with one report per file and a total.",
		Flags: append(sweepFlags(), jsonFlag()),
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
				r, err := worker.SweepFile(c.Context, paths[0], opt)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c.App.Writer, r)
				}
				fmt.Fprintln(c.App.Writer, dryRunPrefix(r)+r.Summary)
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
						fmt.Fprintf(c.App.Writer, "%s: %s%s\n", r.Path, dryRunPrefix(r.Report), r.Report.Summary)
					} else {
						fmt.Fprintf(c.App.Writer, "%s: FAILED: %s\n", r.Path, r.Error)
					}
				}
				fmt.Fprintf(c.App.Writer, "total: %d databases (%d failed), %d archived, %d edges pruned, %d edges decayed, %d edges remain\n",
					total.Databases, total.Failed, total.Archived, total.EdgesPruned, total.EdgesDecayed, total.TotalEdgesAfter)
			}
			if total.Failed > 0 {
				return fmt.Errorf("%d of %d databases failed", total.Failed, total.Databases)
			}
			return nil
		},
	})
}

func dryRunPrefix(r *worker.Report) string {
	if r.DryRun {
		return "[dry run] "
	}
	return ""
}

func runCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "run",
		Usage: "the daemon: sweep on a schedule until SIGINT or SIGTERM",
		Description: "Exactly one of --schedule (cron, local time), --every or --when-due " +
			"(when active_hours − last_curate_at ≥ curate_interval_hours, polled). --db may be a glob.",
		Flags: append(sweepFlags(),
			&cli.StringFlag{Name: "schedule", Usage: "cron `EXPR`, e.g. \"30 4 * * 0\" (Sundays 04:30)"},
			&cli.DurationFlag{Name: "every", Usage: "sweep now and then every `DURATION`, e.g. 1h"},
			&cli.BoolFlag{Name: "when-due", Usage: "sweep when curate_interval_hours of activity have passed"},
			&cli.DurationFlag{Name: "poll", Value: time.Minute, Usage: "how often --when-due looks"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
		),
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			if len(args) > 0 {
				return usagef("run", "unexpected argument %q", args[0])
			}
			opt, err := sweepOptions(c, "run")
			if err != nil {
				return err
			}
			pattern, err := dbPath(c)
			if err != nil {
				return err
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
				return usagef("run", "--log-level %q: want debug, info, warn or error", c.String("log-level"))
			}
			handlerOpts := &slog.HandlerOptions{Level: level}
			var handler slog.Handler
			switch c.String("log-format") {
			case "text":
				handler = slog.NewTextHandler(c.App.ErrWriter, handlerOpts)
			case "json":
				handler = slog.NewJSONHandler(c.App.ErrWriter, handlerOpts)
			default:
				return usagef("run", "--log-format %q: want text or json", c.String("log-format"))
			}
			ro := worker.RunOptions{
				Schedule: c.String("schedule"), Every: c.Duration("every"), WhenDue: c.Bool("when-due"),
				Poll: c.Duration("poll"), Jobs: c.Int("jobs"), Sweep: opt, Logger: slog.New(handler),
			}
			if err := ro.Validate(); err != nil {
				return usagef("run", "%v", err)
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return worker.Run(ctx, pattern, ro)
		},
	})
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
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(stepNames[step]),
				progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		bar.Set64(done)
	}
}

// stepNames label the progress of each chunked step.
var stepNames = map[string]string{
	"refresh_ids":   "refreshing",
	"refresh_edges": "refreshing edges",
	"plan_blocks":   "archiving blocks",
	"plan_edges":    "removing edges",
	"plan_flags":    "excluding edges",
	"plan_facts":    "archiving facts",
}

// parseWallTime reads unix seconds or an RFC 3339 time.
func parseWallTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither unix seconds nor RFC 3339 (2026-01-02T15:04:05Z)", s)
	}
	return t, nil
}

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
				fmt.Fprintf(w, "sweep %d       %s at %.2f h: %s\n", ls.ID, ls.Status, ls.ClockHours, ls.Summary)
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

func configCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "config",
		Usage: "read or change settings in mem_config",
		Subcommands: []*cli.Command{
			{Name: "get", Usage: "print one setting, or all", ArgsUsage: "[KEY]", Flags: []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) > 1 {
						return usagef("config get", "want at most one KEY")
					}
					db, err := openMemory(c, true)
					if err != nil {
						return err
					}
					defer db.Close()
					values, err := worker.ConfigValues(c.Context, db.SQL)
					if err != nil {
						return err
					}
					if len(args) == 1 {
						key := args[0]
						if _, ok := worker.LookupConfigKey(key); !ok {
							return usagef("config get", "unknown key %q", key)
						}
						fmt.Fprintln(c.App.Writer, values[key])
						return nil
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, values)
					}
					for _, k := range worker.ConfigKeys {
						fmt.Fprintf(c.App.Writer, "%-28s %-10s %s\n", k.Name(), values[k.Name()], k.Doc())
					}
					return nil
				}},
			{Name: "set", Usage: "change one setting (validated)", ArgsUsage: "KEY VALUE",
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) != 2 {
						return usagef("config set", "want KEY VALUE")
					}
					db, err := openMemory(c, false)
					if err != nil {
						return err
					}
					defer db.Close()
					if err := worker.SetConfig(c.Context, db.SQL, args[0], args[1]); err != nil {
						return &usageError{msg: err.Error(), hint: "Try: memworker config get (lists every key)"}
					}
					fmt.Fprintf(c.App.Writer, "%s = %s\n", args[0], args[1])
					return nil
				}},
		},
	})
}

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

func explainCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:      "explain",
		Usage:     "why an edge or a fact will or will not decay, and when",
		ArgsUsage: "--edge A B | --fact ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "edge", Usage: "explain the edge between blocks A and B"},
			&cli.StringFlag{Name: "fact", Usage: "explain the fact `ID`"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			switch {
			case c.Bool("edge") && len(args) == 2 && c.String("fact") == "":
				return explainEdge(c, args[0], args[1])
			case c.String("fact") != "" && !c.Bool("edge") && len(args) == 0:
				return explainFact(c)
			}
			return usagef("explain", "want --edge A B or --fact ID")
		},
	})
}

func explainEdge(c *cli.Context, a, b string) error {
	db, err := openMemory(c, true)
	if err != nil {
		return err
	}
	defer db.Close()
	x, err := worker.ExplainEdge(c.Context, db, a, b)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, x)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "edge %s — %s (%s, origin %s)\n", x.From, x.To, x.RelationType, x.Origin)
	if x.Invalid {
		fmt.Fprintf(w, "  verdict    %s\n", x.Verdict)
		return nil
	}
	fmt.Fprintf(w, "  tiers      %s / %s\n", x.TierFrom, x.TierTo)
	fmt.Fprintf(w, "  weight     %.4f, reinforced %g times (established: %v)\n", x.Weight, x.ReinforcementCount, x.Established)
	fmt.Fprintf(w, "  lambda     %g per active hour\n", x.Lambda)
	if x.ElapsedHours != nil {
		fmt.Fprintf(w, "  elapsed    %.2f active hours since %.2f\n", *x.ElapsedHours, *x.LastActiveHours)
	}
	fmt.Fprintf(w, "  effective  %.4f (threshold %.4f)\n", x.EffectiveWeight, x.Threshold)
	fmt.Fprintf(w, "  verdict    %s\n", x.Verdict)
	return nil
}

func explainFact(c *cli.Context) error {
	db, err := openMemory(c, true)
	if err != nil {
		return err
	}
	defer db.Close()
	x, err := worker.ExplainFact(c.Context, db, c.String("fact"), time.Now())
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, x)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "fact %s (%s, tier %s, %s)\n", x.ID, x.Segment, x.Tier, x.Status)
	fmt.Fprintf(w, "  importance %.3f, decay rate %.3f, recalled %g times\n", x.Importance, x.DecayRate, x.AccessCount)
	fmt.Fprintf(w, "  last use   %.1f days ago\n", x.DaysSinceAccess)
	fmt.Fprintf(w, "  score      %.4f → %s\n", x.Score, x.Action)
	if x.ArchiveInDays != nil {
		fmt.Fprintf(w, "  archived   in %.1f days without use\n", *x.ArchiveInDays)
	}
	if x.PruneInDays != nil {
		fmt.Fprintf(w, "  pruned     in %.1f days without use\n", *x.PruneInDays)
	}
	fmt.Fprintf(w, "  verdict    %s\n", x.Verdict)
	return nil
}

func restoreCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:      "restore",
		Usage:     "bring back what a sweep archived or removed, from the event log",
		ArgsUsage: "--edge A B | --block ID | --fact ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "edge", Usage: "restore the edge between blocks A and B"},
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
			if chosen != 1 || (c.Bool("edge") != (len(args) == 2)) || (!c.Bool("edge") && len(args) > 0) {
				return usagef("restore", "want exactly one of --edge A B, --block ID, --fact ID")
			}
			db, err := openMemory(c, false)
			if err != nil {
				return err
			}
			defer db.Close()
			var r *worker.Restored
			now := time.Now()
			switch {
			case c.Bool("edge"):
				r, err = worker.RestoreEdge(c.Context, db, args[0], args[1], now)
			case c.String("block") != "":
				r, err = worker.RestoreBlock(c.Context, db, c.String("block"), now)
			default:
				r, err = worker.RestoreFact(c.Context, db, c.String("fact"), now)
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, r)
			}
			fmt.Fprintf(c.App.Writer, "restored %s %s (from event #%d)", r.Kind, r.ID, r.FromEvent)
			if r.Kind == "block" {
				fmt.Fprintf(c.App.Writer, " with %d edges", r.Edges)
				if len(r.EdgesSkipped) > 0 {
					fmt.Fprintf(c.App.Writer, "; %d edges wait for their other end: %s", len(r.EdgesSkipped), strings.Join(r.EdgesSkipped, ", "))
				}
			}
			fmt.Fprintln(c.App.Writer)
			if r.Warning != "" {
				fmt.Fprintln(c.App.ErrWriter, "memworker: warning: "+r.Warning)
			}
			return nil
		},
	})
}

func factCommand() *cli.Command {
	change := func(c *cli.Context, r *worker.FactChange) error {
		if c.Bool("json") {
			return printJSON(c.App.Writer, r)
		}
		fmt.Fprintf(c.App.Writer, "fact %s: %s; importance %.3f → %.3f, recalled %d times", r.ID, r.DirectionOrKind,
			r.ImportanceBefore, r.ImportanceAfter, r.AccessCountAfter)
		if r.ClockReset {
			fmt.Fprint(c.App.Writer, ", decay clock reset")
		}
		if !r.Recorded {
			fmt.Fprint(c.App.Writer, " (passive: nothing changed)")
		}
		fmt.Fprintln(c.App.Writer)
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
					r, err := worker.Feedback(c.Context, db, args[0], args[1] == "up", time.Now())
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
					r, err := worker.Recall(c.Context, db, args[0], c.Bool("auto"), time.Now())
					if err != nil {
						return err
					}
					return change(c, r)
				}},
		},
	})
}

func demoCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "demo",
		Usage: "migrate a fresh file, load a sample memory graph, advance the clock, sweep, report",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			path := c.String("db")
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
			for _, s := range r.InvalidRows.Sample {
				fmt.Fprintf(w, "  skipped invalid %s %s: %s\n", s.Kind, s.ID, s.Problem)
			}
			for _, e := range r.DecayedSample {
				fmt.Fprintf(w, "  decayed %s — %s: weight %.2f, effective %.3f\n", e.From, e.To, e.Weight, e.EffectiveWeight)
			}
			fmt.Fprintf(w, "\nExplore: memworker status --db %s; memworker decayed --db %s\n", path, path)
			return nil
		},
	})
}
