package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

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
						fmt.Fprintln(c.App.Writer, safe(values[key]))
						return nil
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, values)
					}
					for _, k := range worker.ConfigKeys {
						fmt.Fprintf(c.App.Writer, "%-28s %-10s %s\n", k.Name(), safe(values[k.Name()]), k.Doc())
					}
					return nil
				}},
			{Name: "set", Usage: "change one setting (validated)", ArgsUsage: "KEY VALUE",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "allow moving active_hours back (only if no sweep ran since)"}},
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
					set := worker.SetConfig
					if c.Bool("force") {
						set = worker.SetConfigForce
					}
					switch err := set(c.Context, db.SQL, args[0], args[1]); {
					case errors.Is(err, worker.ErrBadSetting):
						return &usageError{msg: err.Error(), hint: "Try: memworker config get (lists every key)"}
					case errors.Is(err, worker.ErrClockBack):
						return &usageError{msg: err.Error(), hint: "Try: memworker config set --force active_hours VALUE"}
					case err != nil:
						return err // the file, not the request (a lock, a full disk): a failure
					}
					// What was stored: a duration is kept in the key's unit.
					values, err := worker.ConfigValues(c.Context, db.SQL)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "%s = %s\n", args[0], safe(values[args[0]]))
					return nil
				}},
		},
	})
}
