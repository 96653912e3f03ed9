// Command memworker installs the memdecay memory schema into a SQLite file
// and sweeps it: archive, prune and decay with an audit trail.
package main

import "os"

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
