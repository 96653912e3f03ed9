package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

func migrateCommand() *cli.Command {
	open := func(c *cli.Context) (*worker.DB, error) {
		p, err := dbPath(c)
		if err != nil {
			return nil, err
		}
		if err := refuseSeveral(c, p); err != nil {
			return nil, err
		}
		return worker.Open(p, worker.OpenOptions{Create: c.Command.Name == "up", ReadOnly: c.Command.Name == "version"})
	}
	return withFlags(&cli.Command{
		Name:  "migrate",
		Usage: "install, revert or show the memory schema",
		Subcommands: []*cli.Command{
			{Name: "up", Usage: "apply every pending migration, all or nothing (creates the file if missing)",
				Action: func(c *cli.Context) error {
					db, err := open(c)
					if err != nil {
						return err
					}
					defer db.Close()
					v, err := schema.Up(db.SQL, worker.NoSweepRunning)
					if err != nil {
						return err
					}
					if err := worker.StoreReaderViews(c.Context, db); err != nil {
						return fmt.Errorf("migrate up: storing the readers' views: %w", err)
					}
					if err := db.UseWAL(); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "schema at version %d\n", v)
					return nil
				}},
			{Name: "down", Usage: "revert the newest migration (--all: every migration); refused while a sweep runs, and refused for a step that drops data unless --force",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "all", Usage: "revert every migration, dropping the mem_ tables (needs --force)"},
					&cli.BoolFlag{Name: "force", Usage: "run down steps that drop data the database holds: step 1 drops every mem_ table, step 2 the policies' soft exclusions, step 5 a pinned wall clock, step 11 the declared mapping"},
				},
				Action: func(c *cli.Context) error {
					db, err := open(c)
					if err != nil {
						return err
					}
					defer db.Close()
					v, err := schema.Down(db.SQL, schema.DownOptions{All: c.Bool("all"), Force: c.Bool("force")}, worker.NoSweepRunning)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "schema at version %d\n", v)
					return nil
				}},
			{Name: "force", Usage: "record VERSION as installed without running any step (for a file another tool left dirty)",
				ArgsUsage: "VERSION",
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) != 1 {
						return usagef("migrate force", "migrate force: give exactly one VERSION (0 to the latest)")
					}
					v, err := strconv.ParseUint(args[0], 10, 0)
					if err != nil {
						return usagef("migrate force", "migrate force: VERSION %q is not a whole number >= 0", args[0])
					}
					db, err := open(c)
					if err != nil {
						return err
					}
					defer db.Close()
					if err := schema.Force(db.SQL, uint(v), worker.NoSweepRunning); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "schema recorded at version %d\n", v)
					return nil
				}},
			{Name: "sql", Usage: "print the migrations' SQL (up, or down newest first), for an app whose own migration tool owns the DDL; run it with memdecay loaded",
				ArgsUsage: "[up|down]",
				Flags:     []cli.Flag{&cli.UintFlag{Name: "version", Usage: "only migration `N`"}},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					dir := "up"
					if len(args) > 0 {
						dir = args[0]
					}
					if len(args) > 1 || (dir != "up" && dir != "down") {
						return usagef("migrate sql", "migrate sql: want up or down, got %q", strings.Join(args, " "))
					}
					script, err := schema.Script(dir == "up", c.Uint("version"))
					if err != nil {
						return err
					}
					_, err = io.WriteString(c.App.Writer, script)
					return err
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
