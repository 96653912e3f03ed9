package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Peer is one way of running the sweep on a database file.
type Peer struct {
	Key    string // file-name safe
	Name   string // table heading
	Worker bool   // a memworker run (its peak RSS is reported)
	// prepare readies a copy for this peer before a timed run.
	prepare func(ctx context.Context, db string) error
	cmd     func(ctx context.Context, db string) (*exec.Cmd, error)
	// runWith, when set, runs the peer instead of cmd, given the copy and
	// the scenario's writes, and leaves its result in the copy (rqlite.go).
	runWith func(ctx context.Context, db string, writes []string) (Outcome, error)
}

// Outcome is what one run of a peer did.
type Outcome struct {
	Seconds    float64
	CPUSeconds float64 // the process's user and system time
	MaxRSSKiB  int64
	MaxWAL     int64 // largest size of the -wal file seen while it ran
	FileBefore int64 // the database's size on disk (dbSize) before it ran
	FileAfter  int64 // and after it exited, events and any -wal left included
	Pruned     int64
	Decayed    int64
	After      int64
	Archived   int64 // memworker only: blocks archived (must be 0 here)
	WithBlocks int64 // memworker only: edges removed with archived blocks
	InnerMS    int64 // memworker only: its own duration_ms
	// On a cluster: the surviving edges' digest every node agreed on, the
	// leader's id and its files after the sweep, and each node's peak RSS
	// and CPU time during the sweep and data directory (bytes) before and
	// after it, in id order.
	Digest                   string
	Leader                   string
	LeaderFiles              nodeFiles
	NodeRSSKiB               []int64
	NodeCPU                  []float64 // each node's user and system time during the sweep, s
	NodeDataBefore, NodeData []int64
}

func setupPeers(ctx context.Context, o Options) ([]Peer, error) {
	for _, f := range []string{"bench/apploop.py", "bench/plain.sql", "bench/bounded.sql"} {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	if _, err := exec.LookPath(o.Python); err != nil {
		return nil, fmt.Errorf("the app loop needs %s: %w", o.Python, err)
	}
	out, err := exec.CommandContext(ctx, o.Shell, ":memory:", "SELECT exp(1) > 2.7;").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		return nil, fmt.Errorf("the plain-SQL peer needs a sqlite3 shell with exp() (%s): %v %s", o.Shell, err, out)
	}
	help, err := exec.CommandContext(ctx, o.Worker, "sweep", "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s sweep --help: %w\n%s", o.Worker, err, help)
	}
	// The app loop and both SQL peers stand for an app without memworker: unless
	// -peer-triggers, their copies lose the triggers memworker's schema puts
	// on mem_edges (which queue changed rows for incremental sweeps), so
	// their deletes do not pay for memworker's bookkeeping.
	var withoutWorker func(ctx context.Context, db string) error
	if !o.PeerTriggers {
		withoutWorker = dropEdgeTriggers
	}
	peers := []Peer{
		{Key: "app", Name: "app loop", prepare: withoutWorker, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
			return exec.CommandContext(ctx, o.Python, "bench/apploop.py", db), nil
		}},
		{Key: "plain", Name: "plain SQL", prepare: withoutWorker, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
			script, err := os.Open("bench/plain.sql")
			if err != nil {
				return nil, err
			}
			return shellScript(ctx, o.Shell, db, script), nil // the file is closed by Wait
		}},
		{Key: "bounded", Name: "bounded SQL", prepare: withoutWorker, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
			script, err := boundedScript(ctx, db, BoundedChunk)
			if err != nil {
				return nil, err
			}
			return shellScript(ctx, o.Shell, db, strings.NewReader(script)), nil
		}},
		{Key: "worker", Name: "memworker", Worker: true, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
			return exec.CommandContext(ctx, o.Worker, "sweep", "--db", db, "--json"), nil
		}},
	}
	if bytes.Contains(help, []byte("--full")) {
		peers = append(peers, Peer{Key: "worker-full", Name: "memworker --full", Worker: true,
			cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
				return exec.CommandContext(ctx, o.Worker, "sweep", "--db", db, "--json", "--full"), nil
			}})
		logf("memworker sweep has --full: timing it as a fourth peer")
	}
	if o.Bulk {
		if !bytes.Contains(help, []byte("--bulk")) {
			return nil, fmt.Errorf("-bulk: %s sweep has no --bulk", o.Worker)
		}
		peers = append(peers, Peer{Key: "worker-bulk", Name: "memworker --bulk", Worker: true,
			cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
				return exec.CommandContext(ctx, o.Worker, "sweep", "--db", db, "--json", "--bulk"), nil
			}})
	}
	return peers, nil
}

// Run runs the peer on db and measures its wall time, peak RSS and the
// database's size before and after.
func (p Peer) Run(ctx context.Context, db string) (Outcome, error) {
	cmd, err := p.cmd(ctx, db)
	if err != nil {
		return Outcome{}, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	m, err := measure(cmd, db)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w\n%s%s", p.Name, err, stdout.Bytes(), stderr.Bytes())
	}
	o := Outcome{Seconds: m.Seconds, CPUSeconds: m.CPUSeconds, MaxRSSKiB: m.PeakRSSKiB, MaxWAL: m.MaxWAL, FileBefore: m.FileBefore, FileAfter: m.FileAfter}
	if err := p.parse(stdout.Bytes(), &o); err != nil {
		return o, fmt.Errorf("%s: reading its output: %w\n%s", p.Name, err, stdout.Bytes())
	}
	return o, nil
}

// parse reads the counts each peer prints: JSON from the app loop and
// memworker, "name|count" lines from the shell.
func (p Peer) parse(out []byte, o *Outcome) error {
	if p.Key == "plain" || p.Key == "bounded" {
		got := map[string]int64{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), "|")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return err
			}
			got[k] = n
		}
		if len(got) != 3 {
			return fmt.Errorf("want edges_pruned, edges_decayed and total_edges_after")
		}
		o.Pruned, o.Decayed, o.After = got["edges_pruned"], got["edges_decayed"], got["total_edges_after"]
		return nil
	}
	return parseWorker(out, o)
}

// parseWorker reads the counts of the JSON report the app loop and
// memworker print.
func parseWorker(out []byte, o *Outcome) error {
	var r map[string]any
	if err := json.Unmarshal(out, &r); err != nil {
		return err
	}
	num := func(k string) int64 {
		f, _ := r[k].(float64)
		return int64(f)
	}
	o.Pruned, o.Decayed, o.After = num("edges_pruned"), num("edges_decayed"), num("total_edges_after")
	o.Archived, o.WithBlocks, o.InnerMS = num("archived"), num("edges_removed_with_blocks"), num("duration_ms")
	return nil
}

// shellScript runs script in the sqlite3 shell on db, stopping at the
// first error.
func shellScript(ctx context.Context, shell, db string, script io.Reader) *exec.Cmd {
	cmd := exec.CommandContext(ctx, shell, "-bail", db)
	cmd.Stdin = script
	return cmd
}

// BoundedChunk is the bounded-SQL peer's rows per transaction, memworker's
// own while no other connection writes.
const BoundedChunk = 5000

// boundedScript makes the bounded-SQL peer's script for db: the settings
// and block rates of bench/plain.sql, the plan of bench/bounded.sql, its
// chunk once per chunk edges in db, and its report.
func boundedScript(ctx context.Context, db string, chunk int64) (string, error) {
	plain, err := os.ReadFile("bench/plain.sql")
	if err != nil {
		return "", err
	}
	head, _, ok := strings.Cut(string(plain), "-- The rules")
	if !ok {
		return "", fmt.Errorf("bench/plain.sql: no \"-- The rules\" line")
	}
	text, err := os.ReadFile("bench/bounded.sql")
	if err != nil {
		return "", err
	}
	part := map[string]string{}
	for _, sec := range strings.Split(string(text), "-- name: ")[1:] {
		name, body, _ := strings.Cut(sec, "\n")
		part[strings.TrimSpace(name)] = body
	}
	if part["plan"] == "" || part["chunk"] == "" || part["report"] == "" {
		return "", fmt.Errorf("bench/bounded.sql: want the sections plan, chunk and report")
	}
	conn, err := openDB(db, nil)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	var edges int64
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM mem_edges").Scan(&edges); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(part["plan"])
	for lo := int64(1); lo <= edges; lo += chunk {
		fmt.Fprintf(&b, ".parameter set :lo %d\n.parameter set :hi %d\n", lo, lo+chunk-1)
		b.WriteString(part["chunk"])
	}
	b.WriteString(part["report"])
	return b.String(), nil
}

// dropEdgeTriggers drops every trigger on mem_edges.
func dropEdgeTriggers(ctx context.Context, path string) error {
	db, err := openDB(path, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'mem_edges'`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := db.ExecContext(ctx, `DROP TRIGGER "`+strings.ReplaceAll(n, `"`, `""`)+`"`); err != nil {
			return err
		}
	}
	return db.Close()
}
