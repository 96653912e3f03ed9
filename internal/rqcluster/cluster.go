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
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// Running reports whether the node's process is running.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runningLocked()
}

func (n *Node) runningLocked() bool {
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// PID returns the process id (and process group id) of the node's current
// or last process, 0 if it never started.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

func (n *Node) state() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.cmd == nil:
		return "never started"
	case n.runningLocked():
		return fmt.Sprintf("running as pid %d", n.cmd.Process.Pid)
	default:
		return fmt.Sprintf("exited: %v", n.exit)
	}
}

// startFresh starts a node with a new data directory on free ports,
// joining join (a Raft address) unless it is "". If the node exits at once
// because a port was taken in the meantime, it tries other ports.
func (n *Node) startFresh(ctx context.Context, join string) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var ports []int
		if ports, err = freePorts(2); err != nil {
			return err
		}
		n.httpAddr = fmt.Sprintf("127.0.0.1:%d", ports[0])
		n.RaftAddr = fmt.Sprintf("127.0.0.1:%d", ports[1])
		n.URL = "http://" + n.httpAddr
		args := n.args()
		if join != "" {
			args = append(args, "-join", join, "-join-interval", "500ms", "-join-attempts", "20")
		}
		var from int64
		if from, err = n.spawn(args); err != nil {
			return err
		}
		// Wait for the HTTP port to answer or the process to exit.
		err = poll(ctx, "node "+n.ID+" to listen on "+n.httpAddr, func() (bool, string, error) {
			if !n.Running() {
				return false, "", fmt.Errorf("rqlited exited (%s)", n.state())
			}
			c, err := net.DialTimeout("tcp", n.httpAddr, time.Second)
			if err != nil {
				return false, err.Error(), nil
			}
			c.Close()
			return true, "", nil
		})
		if err == nil {
			return nil
		}
		if !strings.Contains(n.logSince(from), "address already in use") {
			break
		}
		// Retry on other ports from an empty data directory.
		if err := os.RemoveAll(filepath.Join(n.Dir, "data")); err != nil {
			return err
		}
	}
	return fmt.Errorf("node %s: %w\nlast lines of %s:\n%s", n.ID, err, n.LogPath, n.LogTail(30))
}

// args are the flags of every start of the node, without -join.
func (n *Node) args() []string {
	args := []string{"-node-id", n.ID, "-http-addr", n.httpAddr, "-raft-addr", n.RaftAddr}
	if n.extension != "" {
		args = append(args, "-extensions-path", n.extension)
	}
	return append(args, n.extra...)
}

// spawn starts rqlited with args and the node's data directory, writing a
// header to the log, and returns the log's size before the header.
//
// The process is started on a goroutine locked to its OS thread until the
// process is reaped: Linux sends the parent-death signal when the thread
// that started the child exits, not the process, and the Go runtime may
// otherwise end idle threads.
func (n *Node) spawn(args []string) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runningLocked() {
		return 0, fmt.Errorf("node %s is already running", n.ID)
	}
	args = append(args, filepath.Join(n.Dir, "data"))
	logf, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	fi, err := logf.Stat()
	if err != nil {
		logf.Close()
		return 0, err
	}
	from := fi.Size()
	fmt.Fprintf(logf, "==== %s: %s %s\n", time.Now().Format(time.RFC3339Nano), n.bin, strings.Join(args, " "))

	cmd := exec.Command(n.bin, args...)
	cmd.Dir = n.Dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	done := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		defer logf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		err := cmd.Wait()
		n.mu.Lock()
		n.exit = err
		n.mu.Unlock()
		close(done)
	}()
	if err := <-started; err != nil {
		return 0, fmt.Errorf("node %s: starting %s: %w", n.ID, n.bin, err)
	}
	n.cmd, n.done, n.exit = cmd, done, nil
	_ = os.WriteFile(filepath.Join(n.Dir, "rqlited.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	return from, nil
}

// waitReady waits until the node's /readyz answers 200: it knows a leader,
// the leader answers, and its store and database are open. With caughtUp, the
// node must also have applied to its database every write the leader had
// applied (waitApplied).
func (n *Node) waitReady(ctx context.Context, caughtUp bool) error {
	path := "/readyz?timeout=2s"
	if caughtUp {
		path += "&sync"
	}
	err := poll(ctx, "node "+n.ID+" to be ready", func() (bool, string, error) {
		if !n.Running() {
			return false, "", fmt.Errorf("rqlited exited (%s)", n.state())
		}
		code, body, err := n.get(ctx, path)
		if err != nil {
			return false, err.Error(), nil
		}
		if code == http.StatusOK {
			return true, "", nil
		}
		return false, fmt.Sprintf("GET %s: %d %q", path, code, body), nil
	})
	if err == nil && caughtUp {
		err = n.waitApplied(ctx)
	}
	if err != nil {
		return fmt.Errorf("node %s: %w\nlast lines of %s:\n%s", n.ID, err, n.LogPath, n.LogTail(30))
	}
	return nil
}

// fsmStatus holds the index of the last log entry a node applied to its
// database, from its /status.
type fsmStatus struct {
	Store struct {
		FSMIndex uint64 `json:"fsm_index"`
	} `json:"store"`
}

// waitApplied waits until the node has applied to its database the log up
// to the last entry the leader has applied. /readyz?sync only waits for the
// node's commit index, which a restarted node learns from the leader's
// first message, before it has replayed its log: until then it answers
// queries from an older state (no tables at all, early on).
func (n *Node) waitApplied(ctx context.Context) error {
	leader, err := n.c.Leader(ctx)
	if err != nil {
		return err
	}
	var ls fsmStatus
	if err := leader.getJSON(ctx, "/status", &ls); err != nil {
		return fmt.Errorf("leader %s: %w", leader.ID, err)
	}
	target := ls.Store.FSMIndex
	return poll(ctx, fmt.Sprintf("node %s to apply the log up to index %d", n.ID, target), func() (bool, string, error) {
		if !n.Running() {
			return false, "", fmt.Errorf("rqlited exited (%s)", n.state())
		}
		var st fsmStatus
		if err := n.getJSON(ctx, "/status", &st); err != nil {
			return false, err.Error(), nil
		}
		return st.Store.FSMIndex >= target, fmt.Sprintf("applied up to %d", st.Store.FSMIndex), nil
	})
}

// Kill sends SIGKILL to the node's process group and waits for the process
// to be reaped. It is an error if the node is not running.
func (n *Node) Kill() error {
	n.mu.Lock()
	running := n.runningLocked()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if !running {
		return fmt.Errorf("node %s is not running", n.ID)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("node %s: kill: %w", n.ID, err)
	}
	return n.waitExit(done, 10*time.Second)
}

// Stop stops the node: SIGTERM, then, if it has not exited within a grace
// period, SIGKILL to its process group. Stopping a node that is not running
// does nothing.
func (n *Node) Stop() error {
	n.mu.Lock()
	running := n.runningLocked()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if !running {
		return nil
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err == nil {
		select {
		case <-done:
			return nil
		case <-time.After(stopGrace):
		}
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("node %s: kill: %w", n.ID, err)
	}
	return n.waitExit(done, 10*time.Second)
}

func (n *Node) waitExit(done chan struct{}, d time.Duration) error {
	select {
	case <-done:
		return nil
	case <-time.After(d):
		return fmt.Errorf("node %s: still not reaped %s after SIGKILL", n.ID, d)
	}
}

// Restart starts the node again after Kill or Stop, with the same data
// directory, ports and extension. It rejoins the cluster from its own Raft
// state (no -join) and returns once the node is ready and has applied to
// its database every write the leader had applied.
func (n *Node) Restart(ctx context.Context) error {
	if n.Running() {
		return fmt.Errorf("node %s is still running", n.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	n.c.mu.Lock()
	if n.c.stopped {
		n.c.mu.Unlock()
		return fmt.Errorf("node %s: the cluster was stopped", n.ID)
	}
	_, err := n.spawn(n.args())
	n.c.mu.Unlock()
	if err != nil {
		return err
	}
	return n.waitReady(ctx, true)
}

// LogTail returns the last n lines of the node's log.
func (n *Node) LogTail(lines int) string {
	b, err := os.ReadFile(n.LogPath)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return tailLines(string(b), lines)
}

func (n *Node) logSince(off int64) string {
	b, err := os.ReadFile(n.LogPath)
	if err != nil || off > int64(len(b)) {
		return ""
	}
	return string(b[off:])
}

// Query runs one read-only statement on the node's own database
// (level=none: not forwarded to the leader, so a follower answers from what
// it has applied) and returns its rows. Values are decoded as int64
// (integers), float64 (reals, and any value of a column rqlite types
// "real"), string, []byte (columns rqlite types "blob") or nil. A statement
// error is returned as an error carrying rqlite's message.
func (n *Node) Query(ctx context.Context, sql string) ([][]any, error) {
	var resp queryResponse
	if err := n.postJSON(ctx, "/db/query?level=none", []string{sql}, &resp); err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("node %s: %s", n.ID, resp.Error)
	}
	if len(resp.Results) != 1 {
		return nil, fmt.Errorf("node %s: %d results for one statement", n.ID, len(resp.Results))
	}
	r := resp.Results[0]
	if r.Error != "" {
		return nil, fmt.Errorf("node %s: %s", n.ID, r.Error)
	}
	rows := make([][]any, 0, len(r.Values))
	for _, raw := range r.Values {
		row := make([]any, len(raw))
		for i, v := range raw {
			typ := ""
			if i < len(r.Types) {
				typ = strings.ToLower(r.Types[i])
			}
			val, err := decodeValue(v, typ)
			if err != nil {
				return nil, fmt.Errorf("node %s: column %d: %w", n.ID, i, err)
			}
			row[i] = val
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Execute runs statements through the node's /db/execute (forwarded to the
// leader by a follower). Each statement is a string, or a []any of SQL and
// its parameters as rqlite takes them ([sql, p1, p2, ...], or [sql,
// map[string]any{...}] for named parameters). It fails on the first
// statement that failed.
func (n *Node) Execute(ctx context.Context, stmts ...any) error {
	var resp struct {
		Results []struct {
			Error string `json:"error"`
		} `json:"results"`
		Error string `json:"error"`
	}
	if err := n.postJSON(ctx, "/db/execute", stmts, &resp); err != nil {
		return err
	}
	if resp.Error != "" {
		return fmt.Errorf("node %s: %s", n.ID, resp.Error)
	}
	for i, r := range resp.Results {
		if r.Error != "" {
			return fmt.Errorf("node %s: statement %d: %s", n.ID, i+1, r.Error)
		}
	}
	if len(resp.Results) != len(stmts) {
		return fmt.Errorf("node %s: %d results for %d statements", n.ID, len(resp.Results), len(stmts))
	}
	return nil
}

type queryResponse struct {
	Results []struct {
		Columns []string            `json:"columns"`
		Types   []string            `json:"types"`
		Values  [][]json.RawMessage `json:"values"`
		Error   string              `json:"error"`
	} `json:"results"`
	Error string `json:"error"`
}

func decodeValue(raw json.RawMessage, typ string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case json.Number:
		isReal := strings.Contains(typ, "real") || strings.Contains(typ, "floa") || strings.Contains(typ, "doub")
		if !isReal {
			if i, err := v.Int64(); err == nil {
				return i, nil
			}
		}
		return v.Float64()
	case string:
		if typ == "blob" {
			return base64.StdEncoding.DecodeString(v)
		}
		return v, nil
	default:
		return v, nil
	}
}

func (n *Node) getJSON(ctx context.Context, path string, into any) error {
	code, body, err := n.get(ctx, path)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, code, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// get makes one GET request of at most a few seconds.
func (n *Node) get(ctx context.Context, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	return do(req)
}

func (n *Node) postJSON(ctx context.Context, path string, body, into any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	code, out, err := do(req)
	if err != nil {
		return fmt.Errorf("node %s: %w", n.ID, err)
	}
	if code != http.StatusOK {
		return fmt.Errorf("node %s: POST %s: %d %s", n.ID, path, code, strings.TrimSpace(string(out)))
	}
	if err := json.Unmarshal(out, into); err != nil {
		return fmt.Errorf("node %s: POST %s: %w: %s", n.ID, path, err, out)
	}
	return nil
}

func do(req *http.Request) (int, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return 0, nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// freePorts returns k distinct loopback ports that were free a moment ago.
func freePorts(k int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for len(ports) < k {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
