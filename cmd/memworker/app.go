package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker"
)

// Exit statuses. exitBusy is EX_TEMPFAIL: another sweep holds the file,
// try again later (cron and systemd need not count it a failure).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitBusy    = 75
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
	return guarded(stderr, func() int {
		return exitStatus(newApp(stdout, stderr, time.Now).RunContext(context.Background(), args), stderr)
	})
}

// guarded runs f, turning a panic into a failure with its stack on stderr:
// the runtime would exit 2, which means a usage mistake here.
func guarded(stderr io.Writer, f func() int) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "memworker: internal error: %v\n%s", p, debug.Stack())
			code = exitFailure
		}
	}()
	return f()
}

// exitStatus turns what the app returned into the exit status, printing
// the error (and a usage error's hint) to stderr.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "memworker: %s\n%s\n", escapeControls(ue.msg), ue.hint)
		return exitUsage
	}
	if errors.Is(err, worker.ErrBadURL) { // --db names a node in a way it cannot be used
		fmt.Fprintf(stderr, "memworker: %s\nTry: memworker --help\n", escapeControls(err.Error()))
		return exitUsage
	}
	fmt.Fprintf(stderr, "memworker: %s\n", escapeControls(err.Error()))
	if errors.Is(err, worker.ErrSweepRunning) {
		return exitBusy
	}
	return exitFailure
}

// Flags are made per app: urfave/cli stores values in them.
func dbFlag() cli.Flag {
	return &cli.StringFlag{Name: "db", Usage: "the memory database: a SQLite file `PATH`, a glob of files, or an rqlite node's URL (http://HOST:PORT)", EnvVars: []string{"MEMWORKER_DB"}}
}

func jsonFlag() cli.Flag { return &cli.BoolFlag{Name: "json", Usage: "print JSON"} }

// newApp builds memworker writing to stdout and stderr; now is the wall
// clock of the commands that act on facts and the event log (explain,
// restore, fact).
func newApp(stdout, stderr io.Writer, now func() time.Time) *cli.App {
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
			migrateCommand(), mapCommand(now), sweepCommand(), runCommand(), statusCommand(), clockCommand(), configCommand(),
			decayedCommand(), explainCommand(now), restoreCommand(now), factCommand(now), demoCommand(), plotCommand(), tuneCommand(now), versionCommand(),
		},
	}
}

// withFlags adds the flags every command takes.
func withFlags(c *cli.Command) *cli.Command {
	c.Flags = append([]cli.Flag{dbFlag()}, c.Flags...)
	if c.OnUsageError == nil { // a command may say what a negative number means to it
		c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error { return flagUsage(ctx, err, "") }
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

// dbPath is the database givenDB names, or a usage error when none is.
func dbPath(c *cli.Context) (string, error) {
	if p := givenDB(c); p != "" {
		return p, nil
	}
	return "", usagef(commandPath(c), "no database: pass --db PATH or set MEMWORKER_DB")
}

// givenDB is --db, wherever it was written (before or after the command),
// or MEMWORKER_DB; "" when neither is set.
func givenDB(c *cli.Context) string {
	for _, cc := range c.Lineage() {
		if p := cc.String("db"); p != "" {
			return p
		}
	}
	return ""
}

// openMemory opens the migrated database named by --db, which must name
// one: only sweep, run and status take several rqlite URLs.
func openMemory(c *cli.Context, readOnly bool) (*worker.DB, error) {
	p, err := dbPath(c)
	if err != nil {
		return nil, err
	}
	if err := refuseSeveral(c, p); err != nil {
		return nil, err
	}
	return worker.OpenMemory(p, readOnly)
}

// refuseSeveral is the usage error of a command that takes one database
// given several rqlite URLs.
func refuseSeveral(c *cli.Context, p string) error {
	if worker.IsRqliteURL(p) && worker.IsFleet(p) {
		return usagef(commandPath(c), "--db %s names several rqlite clusters; %s takes one (sweep, run and status take several)",
			worker.DisplayName(p), commandPath(c))
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// flagUsage is the flag parser's error as a usage error. A negative number
// it took for a flag (clock advance -5) is an argument out of range, not an
// unknown flag: it is said to be one, with why the command takes none
// when the command says (negative).
func flagUsage(c *cli.Context, err error, negative string) error {
	msg := err.Error()
	if tok, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		if _, nerr := strconv.ParseFloat(tok, 64); nerr == nil {
			msg = fmt.Sprintf("%s is a negative number: %s takes none", tok, c.Command.HelpName)
			if negative != "" {
				msg += " (" + negative + ")"
			}
		}
	}
	return &usageError{msg: msg, hint: "Try: " + c.Command.HelpName + " --help"}
}
