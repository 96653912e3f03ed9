package rqcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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
