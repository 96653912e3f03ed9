package main

import (
	"fmt"

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
		return worker.Open(p, worker.OpenOptions{Create: c.Command.Name == "up", ReadOnly: c.Command.Name == "version"})
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
