package main

import (
	"fmt"

	"github.com/mattn/go-sqlite3"
	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/sqlfuncs"
)

// versionCommand prints what a bug report needs: memworker's release, the
// newest schema it installs and the SQLite it is linked with.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print memworker's version, the schema version it installs and its SQLite version",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("version", "version takes no arguments")
			}
			latest, err := schema.Latest()
			if err != nil {
				return err
			}
			sqlite, _, _ := sqlite3.Version()
			fmt.Fprintf(c.App.Writer, "memworker %s (schema %d, SQLite %s)\n", sqlfuncs.Version, latest, sqlite)
			return nil
		},
	}
}
