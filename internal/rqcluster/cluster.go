// Package rqcluster starts and controls real rqlite clusters on the loopback
// interface, for the tests and benchmarks that run memworker against rqlite.
//
// Each node is an rqlited process listening on free 127.0.0.1 ports, started
// with -extensions-path naming memdecay.so (or with no extension at all).
// Its files live under Options.Dir:
//
//	<Dir>/node<ID>/data          the node's data directory
//	<Dir>/node<ID>/rqlited.log   its stdout and stderr (appended to on restart)
//	<Dir>/node<ID>/rqlited.pid   its process id, which is also its process group id
//
// Node 1 bootstraps the cluster; the others join it through its Raft address.
// Every wait (for readiness, a leader, or nodes that agree) is bounded: by
// the context's deadline, and by Timeout when that is sooner or absent.
//
// # Processes
//
// Every node runs in a process group of its own (Setpgid), so that Kill and
// Stop reach the whole group, and so that a node left behind by a test binary
// that was itself killed can be found and ended by its group:
//
//	kill -- -$(cat <Dir>/node<ID>/rqlited.pid)
//
// On Linux a node is also sent SIGKILL by the kernel when the test binary
// that started it dies, however it dies. Being in its own group, a node does
// not get the terminal's Ctrl-C: a program that starts a cluster stops it
// itself (StartT registers Cluster.Stop with t.Cleanup; the demo program
// stops it on SIGINT).
package rqcluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Timeout bounds every wait of this package whose context has no sooner
// deadline: a cluster's start, a restart, the election of a leader, and
// nodes coming to agree (WaitSame).
const Timeout = 30 * time.Second

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 15 * time.Second

// pollEvery is the pause between two probes of a wait.
const pollEvery = 100 * time.Millisecond

// Options describe a cluster to start.
type Options struct {
	// Nodes is the number of nodes; 0 means 3.
	Nodes int
	// Extension is the path of memdecay.so, loaded into every node with
	// -extensions-path; "" starts the nodes without any extension.
	Extension string
	// Dir is where the nodes' data directories and logs go. Start makes it
	// if needed; StartT defaults it to t.TempDir(). Start with Dir ""
	// makes a temporary directory that Stop removes.
	Dir string
	// Args are extra rqlited flags given to every node, before its data
	// directory (for example "-raft-snap", "64").
	Args []string
}

// Cluster is a set of running rqlited nodes.
type Cluster struct {
	nodes  []*Node
	dir    string
	ownDir bool

	mu      sync.Mutex // held by Restart while it starts a node, so Stop cannot miss it
	stopped bool
	stop    sync.Once
}

// Node is one rqlited process of a Cluster.
type Node struct {
	// ID is the node's Raft id: "1", "2", ...
	ID string
	// URL is the node's HTTP API: "http://127.0.0.1:PORT".
	URL string
	// RaftAddr is the node's Raft address, host:port.
	RaftAddr string
	// Dir holds the node's data directory, log and pid files.
	Dir string
	// LogPath is the node's log file (its stdout and stderr).
	LogPath string

	c         *Cluster
	bin       string
	httpAddr  string
	extension string
	extra     []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed once the process is reaped
	exit error         // the process's exit status, once reaped
}

var client = &http.Client{Transport: &http.Transport{
	Proxy:               nil, // loopback: never through a proxy from the environment
	MaxIdleConnsPerHost: 4,
	IdleConnTimeout:     30 * time.Second,
}}

// Start starts opt.Nodes rqlited nodes on loopback: node 1 first, which
// bootstraps the cluster, then the others, which join it. It returns once
// every node is ready (its /readyz answers 200), every node is a reachable
// voter, and every node agrees on the leader. On error, the nodes started
// are stopped and the error shows the log of the node that failed.
func Start(ctx context.Context, opt Options) (*Cluster, error) {
	if opt.Nodes == 0 {
		opt.Nodes = 3
	}
	if opt.Nodes < 0 {
		return nil, fmt.Errorf("rqcluster: %d nodes", opt.Nodes)
	}
	if opt.Extension != "" {
		abs, err := filepath.Abs(opt.Extension)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("rqcluster: extension: %w", err)
		}
		opt.Extension = abs
	}
	binDir, err := Binaries()
	if err != nil {
		return nil, fmt.Errorf("rqcluster: rqlited: %w", err)
	}
	c := &Cluster{dir: opt.Dir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "rqcluster-"); err != nil {
			return nil, err
		}
		c.ownDir = true
	}
	if c.dir, err = filepath.Abs(c.dir); err != nil {
		return nil, err
	}
	for i := 1; i <= opt.Nodes; i++ {
		id := strconv.Itoa(i)
		dir := filepath.Join(c.dir, "node"+id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			c.Stop()
			return nil, err
		}
		c.nodes = append(c.nodes, &Node{
			c:         c,
			ID:        id,
			Dir:       dir,
			LogPath:   filepath.Join(dir, "rqlited.log"),
			bin:       filepath.Join(binDir, "rqlited"),
			extension: opt.Extension,
			extra:     append([]string(nil), opt.Args...),
		})
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if err := c.start(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	first := c.nodes[0]
	if err := first.startFresh(ctx, ""); err != nil {
		return err
	}
	if err := first.waitReady(ctx, false); err != nil {
		return err
	}
	// The others join node 1 together; the leader adds them one by one.
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes[1:] {
		wg.Add(1)
		go func(i int, n *Node) {
			defer wg.Done()
			if err := n.startFresh(ctx, first.RaftAddr); err != nil {
				errs[i] = err
				return
			}
			errs[i] = n.waitReady(ctx, false)
		}(i+1, n)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	leader, err := c.Leader(ctx)
	if err != nil {
		return err
	}
	return c.waitMembers(ctx, leader)
}

// waitMembers waits until leader lists every node as a reachable voter.
func (c *Cluster) waitMembers(ctx context.Context, leader *Node) error {
	return poll(ctx, "every node to be a reachable voter in the leader's /nodes", func() (bool, string, error) {
		var members map[string]struct {
			Voter     bool   `json:"voter"`
			Reachable bool   `json:"reachable"`
			Error     string `json:"error"`
		}
		if err := leader.getJSON(ctx, "/nodes", &members); err != nil {
			return false, err.Error(), nil
		}
		var missing []string
		for _, n := range c.nodes {
			m, ok := members[n.ID]
			if !ok || !m.Voter || !m.Reachable {
				missing = append(missing, fmt.Sprintf("node %s: %+v", n.ID, m))
			}
		}
		if len(missing) == 0 {
			return true, "", nil
		}
		return false, strings.Join(missing, "; "), nil
	})
}

// StartT starts a cluster for a test (see Start) and fails the test if it
// cannot. opt.Dir defaults to t.TempDir(). The cluster is stopped when the
// test ends; if the test failed, each node's log tail is logged first.
func StartT(t testing.TB, opt Options) *Cluster {
	t.Helper()
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	c, err := Start(context.Background(), opt)
	if err != nil {
		t.Fatalf("starting an rqlite cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.nodes {
				t.Logf("node %s (%s, %s), last lines of %s:\n%s", n.ID, n.URL, n.state(), n.LogPath, n.LogTail(40))
			}
		}
		c.Stop()
	})
	return c
}

// Nodes returns the cluster's nodes, node 1 first.
func (c *Cluster) Nodes() []*Node { return append([]*Node(nil), c.nodes...) }

// Node returns the node with the given id ("1", "2", ...), or nil.
func (c *Cluster) Node(id string) *Node {
	for _, n := range c.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Dir returns the directory holding the nodes' directories.
func (c *Cluster) Dir() string { return c.dir }

// URLs returns every node's URL, node 1 first.
func (c *Cluster) URLs() []string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, n.URL)
	}
	return urls
}

// Running returns the nodes whose process is running.
func (c *Cluster) Running() []*Node {
	var live []*Node
	for _, n := range c.nodes {
		if n.Running() {
			live = append(live, n)
		}
	}
	return live
}

// Stop stops every node (SIGTERM, then SIGKILL after a grace period) and
// waits for each to exit. It is safe to call more than once; a stopped
// cluster's nodes cannot be restarted.
func (c *Cluster) Stop() {
	c.stop.Do(func() {
		c.mu.Lock()
		c.stopped = true
		c.mu.Unlock()
		var wg sync.WaitGroup
		for _, n := range c.nodes {
			wg.Add(1)
			go func(n *Node) {
				defer wg.Done()
				_ = n.Stop()
			}(n)
		}
		wg.Wait()
		if c.ownDir {
			os.RemoveAll(c.dir)
		}
	})
}

type nodeStatus struct {
	Store struct {
		NodeID string `json:"node_id"`
		Raft   struct {
			State string `json:"state"`
		} `json:"raft"`
		Leader struct {
			NodeID string `json:"node_id"`
			Addr   string `json:"addr"`
		} `json:"leader"`
	} `json:"store"`
}

// Leader waits until exactly one running node is the Raft leader and every
// running node names it as the leader, and returns it.
func (c *Cluster) Leader(ctx context.Context) (*Node, error) {
	var leader *Node
	err := poll(ctx, "one leader that every running node agrees on", func() (bool, string, error) {
		live := c.Running()
		if len(live) == 0 {
			return false, "", errors.New("no node is running")
		}
		var says []string
		var leaders []*Node
		named := map[string]bool{}
		ok := true
		for _, n := range live {
			var st nodeStatus
			if err := n.getJSON(ctx, "/status", &st); err != nil {
				says = append(says, fmt.Sprintf("node %s: %v", n.ID, err))
				ok = false
				continue
			}
			says = append(says, fmt.Sprintf("node %s: %s, leader %q", n.ID, st.Store.Raft.State, st.Store.Leader.NodeID))
			if st.Store.Raft.State == "Leader" {
				leaders = append(leaders, n)
			}
			named[st.Store.Leader.NodeID] = true
		}
		if ok && len(leaders) == 1 && len(named) == 1 && named[leaders[0].ID] {
			leader = leaders[0]
			return true, "", nil
		}
		return false, strings.Join(says, "; "), nil
	})
	return leader, err
}

// Followers returns the running nodes other than the leader (see Leader),
// in id order.
func (c *Cluster) Followers(ctx context.Context) ([]*Node, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return nil, err
	}
	var fs []*Node
	for _, n := range c.Running() {
		if n != leader {
			fs = append(fs, n)
		}
	}
	return fs, nil
}

// WaitSame polls every running node's local answer to query (Node.Query)
// until they all answer alike, without error. On timeout the error shows
// each node's last answer.
func (c *Cluster) WaitSame(ctx context.Context, query string) error {
	return poll(ctx, "every running node to answer "+strconv.Quote(query)+" alike", func() (bool, string, error) {
		live := c.Running()
		if len(live) == 0 {
			return false, "", errors.New("no node is running")
		}
		var answers []string
		var first [][]any
		same := true
		for i, n := range live {
			rows, err := n.Query(ctx, query)
			if err != nil {
				answers = append(answers, fmt.Sprintf("node %s: error: %v", n.ID, err))
				same = false
				continue
			}
			answers = append(answers, fmt.Sprintf("node %s: %v", n.ID, rows))
			if i == 0 {
				first = rows
			} else if !reflect.DeepEqual(first, rows) {
				same = false
			}
		}
		if same {
			return true, "", nil
		}
		return false, "\n  " + strings.Join(answers, "\n  "), nil
	})
}

// poll calls probe every pollEvery until it reports done or an error, or
// until ctx ends or Timeout passes; the timeout error names what was awaited
// and the probe's last status.
func poll(ctx context.Context, what string, probe func() (done bool, status string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	start := time.Now()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		done, status, err := probe()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: gave up after %s (%v); last: %s",
				what, time.Since(start).Round(time.Millisecond), ctx.Err(), status)
		case <-tick.C:
		}
	}
}
