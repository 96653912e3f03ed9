// Command demo runs memworker's demo against a 3-node rqlite cluster on
// loopback: it starts the cluster with memdecay.so loaded into every node,
// runs memworker migrate up, demo and status against the leader's URL, then
// reads the memory's counts from each node's own copy, and stops the
// cluster (also on Ctrl-C, and on failure).
//
//	go run ./internal/rqcluster/demo -memworker build/memworker -extension build/memdecay.so
//
// make demo-cluster builds both and runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
)

func main() {
	memworker := flag.String("memworker", "build/memworker", "the memworker binary to run")
	extension := flag.String("extension", "build/memdecay.so", "memdecay.so, loaded into every node")
	nodes := flag.Int("nodes", 3, "how many rqlite nodes")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "demo: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *memworker, *extension, *nodes); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, memworker, extension string, nodes int) (err error) {
	for _, p := range []*string{&memworker, &extension} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
		if _, err := os.Stat(*p); err != nil {
			return fmt.Errorf("%w (make build makes it)", err)
		}
	}
	if _, err := rqcluster.Binaries(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "memdecay-cluster-")
	if err != nil {
		return err
	}
	fmt.Printf("Starting %d rqlite nodes with %s in %s\n", nodes, filepath.Base(extension), dir)
	start := time.Now()
	c, err := rqcluster.Start(ctx, rqcluster.Options{Nodes: nodes, Extension: extension, Dir: dir})
	if err != nil {
		if ctx.Err() != nil {
			os.RemoveAll(dir)
			return errors.New("interrupted")
		}
		return fmt.Errorf("%w\n(the nodes' files are kept in %s)", err, dir)
	}
	defer func() {
		failed := err != nil && ctx.Err() == nil
		if failed {
			for _, n := range c.Nodes() {
				fmt.Fprintf(os.Stderr, "\nnode %s (%s), last lines of its log:\n%s\n", n.ID, n.URL, n.LogTail(10))
			}
		}
		fmt.Println("\nStopping the cluster")
		c.Stop()
		if failed {
			err = fmt.Errorf("%w\n(the nodes' data and logs are kept in %s)", err, dir)
		} else {
			os.RemoveAll(dir)
		}
	}()
	leader, err := c.Leader(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("Ready in %s; node %s at %s is the leader\n", time.Since(start).Round(time.Millisecond), leader.ID, leader.URL)
	for _, n := range c.Nodes() {
		fmt.Printf("  node %s  %s  (data and log in %s)\n", n.ID, n.URL, n.Dir)
	}

	for _, args := range [][]string{{"migrate", "up"}, {"demo"}, {"status"}} {
		full := append([]string{"--db", leader.URL}, args...)
		fmt.Printf("\n$ memworker %s\n", strings.Join(full, " "))
		cmd := exec.CommandContext(ctx, memworker, full...)
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return errors.New("interrupted")
			}
			return fmt.Errorf("memworker %s: %w", strings.Join(args, " "), err)
		}
	}

	const counts = "SELECT (SELECT count(*) FROM mem_blocks), (SELECT count(*) FROM mem_edges), (SELECT count(*) FROM mem_events)"
	same := c.WaitSame(ctx, counts)
	fmt.Println("\nEach node's own copy (read locally, level=none):")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node\trole\tmem_blocks\tmem_edges\tmem_events\t")
	for _, n := range c.Nodes() {
		role := "follower"
		if n == leader {
			role = "leader"
		}
		rows, err := n.Query(ctx, counts)
		if err != nil || len(rows) != 1 || len(rows[0]) != 3 {
			fmt.Fprintf(tw, "%s\t%s\t%v\t\t\t\n", n.ID, role, orRows(err, rows))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%v\t\n", n.ID, role, rows[0][0], rows[0][1], rows[0][2])
	}
	tw.Flush()
	if same != nil {
		return fmt.Errorf("the nodes do not agree: %w", same)
	}
	return nil
}

func orRows(err error, rows [][]any) any {
	if err != nil {
		return err
	}
	return rows
}
