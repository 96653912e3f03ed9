package main

// The rqlite scenarios: memworker's sweep of a 3-node rqlite cluster on
// loopback (every node with memdecay loaded), beside the same sweep of a
// file. Each cluster run starts a fresh cluster, loads its copy into it
// and applies the scenario's writes through it (untimed), times
// `memworker sweep --db LEADER`, then checks that every node holds the
// edges the leader's backup holds; that backup is the run's result, which
// the scenario compares with the file's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
)

// RqliteNodes is the size of the benchmarked cluster.
const RqliteNodes = 3

// The rqlite scenarios' peers, as the tables name them.
var (
	rqFileName    = "memworker, file"
	rqClusterName = fmt.Sprintf("memworker, %d-node rqlite", RqliteNodes)
)

// rqliteBootWait bounds loading a graph into a cluster and the nodes
// coming to agree on it (a 1M-edge graph is one Raft entry of 230 MB).
const rqliteBootWait = 5 * time.Minute

// agreeQuery is what every node must answer alike before a timed sweep.
const agreeQuery = `SELECT (SELECT count(*) FROM mem_edges), (SELECT total(reinforcement_count) FROM mem_edges),
	(SELECT value FROM mem_config WHERE key = 'active_hours')`

// digestPage is the rows of one read of a node's edges.
const digestPage = 50_000

// rqliteRunner runs the rqlite scenarios' peers.
type rqliteRunner struct {
	worker, so string
	keep       bool
	version    string // rqlited -version
	peers      []Peer // memworker on a file, on a cluster
}

// setupRqlite finds rqlited and memdecay.so.
func setupRqlite(ctx context.Context, o Options) (*rqliteRunner, error) {
	so, err := rqcluster.Extension()
	if err != nil {
		return nil, fmt.Errorf("the rqlite scenarios: %w", err)
	}
	bin, err := rqcluster.Binaries()
	if err != nil {
		return nil, fmt.Errorf("the rqlite scenarios need rqlited: %w", err)
	}
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "rqlited"), "-version").CombinedOutput() // on stderr
	if err != nil {
		return nil, fmt.Errorf("rqlited -version: %w: %s", err, out)
	}
	r := &rqliteRunner{worker: o.Worker, so: so, keep: o.Keep}
	r.version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	r.peers = []Peer{
		{Key: "rq-file", Name: rqFileName, Worker: true, prepare: vacuum, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
			return exec.CommandContext(ctx, o.Worker, "sweep", "--db", db, "--json"), nil
		}},
		{Key: "rq-cluster", Name: rqClusterName, Worker: true, runWith: r.run},
	}
	return r, nil
}

// traced runs one more cluster sweep of the scenario, through the
// recording proxy (rqtrace.go).
func (r *rqliteRunner) traced(ctx context.Context, from, work string, writes []string) (*rqliteTrace, error) {
	db := filepath.Join(work, "rq-trace.db")
	defer removeDB(db)
	if err := copyDB(from, db); err != nil {
		return nil, err
	}
	_, tr, err := r.sweep(ctx, db, writes, true)
	return tr, err
}

func (r *rqliteRunner) run(ctx context.Context, db string, writes []string) (Outcome, error) {
	o, _, err := r.sweep(ctx, db, writes, false)
	return o, err
}

// sweep sweeps a fresh cluster loaded with db after writes, then replaces
// db with the leader's backup (the run's result). With trace, memworker
// goes through a recording proxy (rqtrace.go).
func (r *rqliteRunner) sweep(ctx context.Context, db string, writes []string, trace bool) (o Outcome, tr *rqliteTrace, err error) {
	dir := db + ".cluster"
	os.RemoveAll(dir)
	c, err := rqcluster.Start(ctx, rqcluster.Options{Nodes: RqliteNodes, Extension: r.so, Dir: dir})
	if err != nil {
		return o, nil, err
	}
	defer func() {
		c.Stop()
		if err != nil || r.keep {
			logf("  the cluster's data and logs are kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	}()
	if err := loadRows(ctx, c, db); err != nil {
		return o, nil, fmt.Errorf("loading the copy: %w", err)
	}
	if err := waitAgree(ctx, c); err != nil {
		return o, nil, err
	}
	if len(writes) > 0 {
		err := untilLeader(ctx, c, func(l *rqcluster.Node) error { return executeTx(ctx, l.URL, writes) })
		if err != nil {
			return o, nil, fmt.Errorf("the scenario's writes: %w", err)
		}
		if err := waitAgree(ctx, c); err != nil {
			return o, nil, err
		}
	}
	leader, err := c.Leader(ctx)
	if err != nil {
		return o, nil, err
	}
	for _, n := range c.Nodes() {
		f, err := nodeData(filepath.Join(n.Dir, "data"))
		if err != nil {
			return o, nil, err
		}
		o.NodeDataBefore = append(o.NodeDataBefore, f.total())
		if n.ID == leader.ID {
			o.FileBefore = f.DB
		}
		// Each node's peak RSS from here on, not the load's.
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", n.PID()), []byte("5"), 0)
		o.NodeCPU = append(o.NodeCPU, -cpuSeconds(fmt.Sprint(n.PID())))
	}

	o.Leader = leader.ID
	target := leader.URL
	var rec *recorder
	before := map[string]map[string]int64{}
	if trace {
		var stop func()
		if rec, target, stop, err = startRecorder(leader.URL); err != nil {
			return o, nil, err
		}
		defer stop()
		target += "?disableClusterDiscovery=true" // every request through the proxy
		for _, n := range c.Nodes() {
			if before[n.ID], err = nodeCounters(ctx, n.URL); err != nil {
				return o, nil, err
			}
		}
	}
	cmd := exec.CommandContext(ctx, r.worker, "sweep", "--db", target, "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if trace {
		cmd.Env = append(os.Environ(), "MEMWORKER_TRACE=1h") // phases only
	}
	m, err := measure(cmd, "")
	if err != nil {
		return o, nil, fmt.Errorf("memworker sweep --db %s: %w\n%s%s", leader.URL, err, stdout.Bytes(), stderr.Bytes())
	}
	o.Seconds, o.CPUSeconds, o.MaxRSSKiB = m.Seconds, m.CPUSeconds, m.PeakRSSKiB
	for i, n := range c.Nodes() {
		o.NodeCPU[i] += cpuSeconds(fmt.Sprint(n.PID()))
	}
	if trace {
		tr = &rqliteTrace{Seconds: m.Seconds, Requests: rec.records(), Phases: parsePhases(stderr.String()),
			Counters: map[string][]string{}}
		for _, n := range c.Nodes() {
			after, err := nodeCounters(ctx, n.URL)
			if err != nil {
				return o, nil, err
			}
			role := "follower " + n.ID
			if n.ID == leader.ID {
				role = "leader " + n.ID
			}
			tr.Counters[role] = counterDiff(before[n.ID], after)
		}
	}
	if err := parseWorker(stdout.Bytes(), &o); err != nil {
		return o, nil, fmt.Errorf("reading memworker's output: %w\n%s", err, stdout.Bytes())
	}
	for _, n := range c.Nodes() {
		o.NodeRSSKiB = append(o.NodeRSSKiB, vmHWM(fmt.Sprint(n.PID())))
	}

	// Read back: the leader's backup is the result; every node must hold
	// its edges.
	removeDB(db)
	if err := getFile(ctx, leader.URL+"/db/backup", db); err != nil {
		return o, nil, fmt.Errorf("backing up the cluster: %w", err)
	}
	want, _, err := edgeDigest(ctx, db)
	if err != nil {
		return o, nil, err
	}
	for _, n := range c.Nodes() {
		if err := waitDigest(ctx, n, want); err != nil {
			return o, nil, err
		}
	}
	o.Digest = want
	for _, n := range c.Nodes() {
		f, err := nodeData(filepath.Join(n.Dir, "data"))
		if err != nil {
			return o, nil, err
		}
		o.NodeData = append(o.NodeData, f.total())
		if n.ID == leader.ID {
			o.FileAfter, o.LeaderFiles = f.DB, f
		}
	}
	return o, tr, nil
}

// vacuum compacts a file peer's copy, as loading it row by row compacts
// a cluster's (loadRows), so both sweeps start from the same layout.
func vacuum(ctx context.Context, path string) error {
	db, err := openDB(path, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{"VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return db.Close()
}

// waitAgree waits until every node answers agreeQuery alike: the load and
// the writes have reached them all.
func waitAgree(ctx context.Context, c *rqcluster.Cluster) error {
	deadline := time.Now().Add(rqliteBootWait)
	for {
		err := c.WaitSame(ctx, agreeQuery)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
	}
}

// untilLeader calls f with the leader until it succeeds or fails with
// something other than the cluster having no leader (nothing was applied
// then), within rqliteBootWait.
func untilLeader(ctx context.Context, c *rqcluster.Cluster, f func(leader *rqcluster.Node) error) error {
	deadline := time.Now().Add(rqliteBootWait)
	for {
		leader, err := c.Leader(ctx)
		if err == nil {
			err = f(leader)
		}
		if err == nil || !noLeader(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// noLeader reports an error of a request no node applied for want of a
// leader.
func noLeader(err error) bool {
	msg := err.Error()
	for _, s := range []string{"leader not found", "not leader", "leadership lost", "503 Service Unavailable", "connection refused", "no leader"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// waitDigest waits until node n's own copy of the edges (read at level
// none) hashes to want: a follower applies the last writes after the
// leader has answered.
func waitDigest(ctx context.Context, n *rqcluster.Node, want string) error {
	deadline := time.Now().Add(rqliteBootWait)
	for {
		got, rows, err := nodeDigest(ctx, n)
		if err == nil && got == want {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("node %s: reading its edges: %w", n.ID, err)
			}
			return fmt.Errorf("THE CLUSTER DISAGREES: node %s holds %d edges, sha256 %s; the leader's backup sha256 %s", n.ID, rows, got, want)
		}
		time.Sleep(time.Second)
	}
}

// nodeDigest is edgeDigest of node n's own copy, read a page at a time
// in key order.
func nodeDigest(ctx context.Context, n *rqcluster.Node) (string, int64, error) {
	var h edgeHasher
	after := ""
	for {
		q := `SELECT from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned FROM mem_edges` +
			after + fmt.Sprintf(` ORDER BY from_id, to_id LIMIT %d`, digestPage)
		rows, err := n.Query(ctx, q)
		if err != nil {
			return "", 0, err
		}
		for _, row := range rows {
			if err := h.addValues(row); err != nil {
				return "", 0, err
			}
		}
		if len(rows) < digestPage {
			return h.sum(), h.n, nil
		}
		last := rows[len(rows)-1]
		after = fmt.Sprintf(" WHERE (from_id, to_id) > (%s, %s)", sqlString(last[0]), sqlString(last[1]))
	}
}

// sqlString quotes a value as an SQL string literal.
func sqlString(v any) string {
	return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", "''") + "'"
}

// nodeFiles is what a node keeps in its data directory, in bytes.
type nodeFiles struct {
	DB, Raft, Snapshots int64 // db.sqlite and its -wal; raft.db; the rest
}

func (f nodeFiles) total() int64 { return f.DB + f.Raft + f.Snapshots }

// nodeData sums a node's data directory, leaving out its copy of the
// extension.
func nodeData(dir string) (nodeFiles, error) {
	var f nodeFiles
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		switch rel, _ := filepath.Rel(dir, path); {
		case rel == "db.sqlite" || rel == "db.sqlite-wal":
			f.DB += fi.Size()
		case rel == "raft.db":
			f.Raft += fi.Size()
		case strings.HasPrefix(rel, "extensions"+string(filepath.Separator)), rel == "db.sqlite-shm":
		default:
			f.Snapshots += fi.Size()
		}
		return nil
	})
	return f, err
}

// executeTx runs statements through /db/execute as one request, in one
// transaction.
func executeTx(ctx context.Context, node string, stmts []string) error {
	body, err := json.Marshal(stmts)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, node+"/db/execute?transaction", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	var out bytes.Buffer
	if err := roundTrip(req, &out); err != nil {
		return err
	}
	var resp struct {
		Results []struct {
			Error string `json:"error"`
		} `json:"results"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		return fmt.Errorf("%w: %s", err, out.Bytes())
	}
	if resp.Error != "" {
		return fmt.Errorf("rqlite: %s", resp.Error)
	}
	for i, r := range resp.Results {
		if r.Error != "" {
			return fmt.Errorf("rqlite: statement %d: %s", i+1, r.Error)
		}
	}
	if len(resp.Results) != len(stmts) {
		return fmt.Errorf("rqlite: %d results for %d statements", len(resp.Results), len(stmts))
	}
	return nil
}

// getFile writes a response's body to path.
func getFile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := roundTrip(req, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// roundTrip makes a request to a node and copies a 200 response's body to
// out (when not nil).
func roundTrip(req *http.Request, out io.Writer) error {
	resp, err := rqliteClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, strings.TrimSpace(string(body)))
	}
	if out == nil {
		out = io.Discard
	}
	_, err = io.Copy(out, resp.Body)
	return err
}

// rqliteClient talks to loopback nodes, never through a proxy.
var rqliteClient = &http.Client{Transport: &http.Transport{Proxy: nil}}
