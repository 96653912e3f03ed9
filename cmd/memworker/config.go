package main

import (
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
