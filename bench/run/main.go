// Command run benchmarks memworker's sweep against the ways an app does
// the same job without it, side by side on copies of one generated memory
// graph, and prints a markdown table of seconds, ratios and peak memory:
//
//   - app loop:   bench/apploop.py under /usr/bin/python3, reference 000's
//     loop (fetch every edge and endpoint tag, compute in Python, delete
//     pair by pair);
//   - plain SQL:  bench/plain.sql in the sqlite3 shell (a temp tier table,
//     one DELETE per rule, built-in exp());
//   - bounded SQL: plain SQL plus what every memworker sweep guarantees
//     (an event per removal in its transaction, 5,000 rows per transaction;
//     bench/bounded.sql), the floor under memworker's sweep;
//   - memworker:  build/memworker sweep --db COPY --json (and with --full
//     when the binary has that flag).
//
// Scenarios: the first sweep of the graph; a no-op sweep at the same clock;
// a steady-state sweep after the clock advances 40 h and 1 % of the edges
// are reinforced; and a writer beside a sweep (an app writing every 5 ms
// while memworker sweeps). After each scenario every peer must leave the
// same edges (an ordered digest of the surviving rows), or run fails.
//
// Run from the repository root:
//
//	go run -tags sqlite_math_functions ./bench/run [-blocks N] [-edges N] [-runs N] [-out bench/RESULTS.md]
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // digests, the steady-state writes and the writer
	"github.com/memdecay/memdecay/schema"
)

// Options are the command's flags.
type Options struct {
	Blocks, Edges, Runs int
	Seed                uint64
	Out                 string
	Dir                 string
	Worker              string
	Python              string
	Shell               string
	Writer              bool
	Scenarios           string
	PeerTriggers        bool
	Bulk                bool
	Keep                bool
	RqliteTrace         bool
	Mapped              bool
}

func main() {
	var o Options
	flag.IntVar(&o.Blocks, "blocks", 100_000, "memory blocks in the generated graph")
	flag.IntVar(&o.Edges, "edges", 1_000_000, "edges in the generated graph")
	flag.Uint64Var(&o.Seed, "seed", 1, "generator seed")
	flag.IntVar(&o.Runs, "runs", 3, "timed runs per peer and scenario (the median is reported)")
	flag.StringVar(&o.Out, "out", "", "also append the results to this markdown `file`")
	flag.StringVar(&o.Dir, "dir", filepath.Join(os.TempDir(), "memdecay-bench"), "cache of generated graphs and scratch copies")
	flag.StringVar(&o.Worker, "worker", "build/memworker", "memworker binary (built when missing)")
	flag.StringVar(&o.Python, "python", "/usr/bin/python3", "Python for the app loop")
	flag.StringVar(&o.Shell, "sqlite3", "sqlite3", "sqlite3 shell for the plain-SQL peer")
	flag.BoolVar(&o.Mapped, "mapped", true, "also time memworker sweeping the same rows kept in an app's own tables, through a mapping")
	flag.BoolVar(&o.Writer, "writer", true, "also run the writer-beside-a-sweep scenarios (continuous writes, and bursts)")
	flag.StringVar(&o.Scenarios, "scenarios", "first,noop,steady",
		"which of first, noop, steady, rqlite-first, rqlite-steady to run (noop and steady need first, rqlite-steady rqlite-first), or none")
	flag.BoolVar(&o.Bulk, "bulk", false, "also time `memworker sweep --bulk` (the whole sweep in one transaction) as a further peer")
	flag.BoolVar(&o.PeerTriggers, "peer-triggers", false, "keep memworker's mem_edges triggers in the app loop's, plain SQL's and bounded SQL's copies")
	flag.BoolVar(&o.Keep, "keep", false, "keep the scratch copies")
	flag.BoolVar(&o.RqliteTrace, "rqlite-trace", false, "after each rqlite scenario, one more cluster sweep through a recording proxy: requests, phases, node counters")
	flag.Parse()
	if flag.NArg() > 0 || o.Runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/run [-blocks N] [-edges N] [-seed S] [-runs N] [-scenarios LIST] [-out FILE]")
		os.Exit(2)
	}
	if _, err := parseScenarios(o.Scenarios); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(ctx context.Context, o Options) error {
	if err := chdirRoot(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	if err := ensureWorker(ctx, o.Worker); err != nil {
		return err
	}
	peers, err := setupPeers(ctx, o)
	if err != nil {
		return err
	}
	m := describeMachine(ctx, o)
	base, genSecs, err := baseGraph(ctx, o)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp(o.Dir, "work-")
	if err != nil {
		return err
	}
	failed := true
	defer func() {
		if o.Keep || failed {
			logf("scratch copies kept in %s", work)
			return
		}
		os.RemoveAll(work)
	}()

	if o.Mapped {
		peers = append(peers, mappedPeer(o, work))
	}
	b := &bench{o: o, peers: peers, base: base, work: work}
	res := &Results{Options: o, Machine: m, Peers: peers, GenSeconds: genSecs, Started: time.Now()}
	if fi, err := os.Stat(base); err == nil {
		res.BaseBytes = fi.Size()
	}
	if db, err := openDB(base, nil); err == nil {
		db.QueryRowContext(ctx, "SELECT value FROM mem_config WHERE key = 'active_hours'").Scan(&res.Clock)
		db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'mem_edges'").Scan(&res.EdgeTriggers)
		db.Close()
	}
	runErr := b.all(ctx, res)
	if runErr != nil {
		res.Failure = runErr.Error()
	}
	// The report is printed (and appended) even when a scenario failed, so
	// the finished ones are not lost; the failure is stated in it.
	md := res.Markdown()
	fmt.Print(md)
	if o.Out != "" {
		if err := appendFile(o.Out, md); err != nil {
			return err
		}
		logf("results appended to %s", o.Out)
	}
	if runErr != nil {
		return runErr
	}
	failed = false
	return nil
}

// all runs every scenario in order, stopping at the first failure.
func (b *bench) all(ctx context.Context, res *Results) error {
	want, err := parseScenarios(b.o.Scenarios)
	if err != nil {
		return err
	}
	for _, sc := range b.scenarios() {
		if !want[sc.key] {
			continue
		}
		if sc.rqlite && b.rqlite == nil {
			if b.rqlite, err = setupRqlite(ctx, b.o); err != nil {
				return err
			}
			res.Rqlited = b.rqlite.version
		}
		logf("scenario: %s", sc.key)
		r, err := b.scenario(ctx, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.key, err)
		}
		if sc.rqlite && b.o.RqliteTrace {
			logf("  a traced cluster sweep (-rqlite-trace)")
			if r.Trace, err = b.rqlite.traced(ctx, sc.from(b.rqlite.peers[1]), b.work, sc.writes); err != nil {
				return fmt.Errorf("%s, traced: %w", sc.key, err)
			}
		}
		if sc.rqlite {
			res.Rqlite = append(res.Rqlite, *r)
		} else {
			res.Scenarios = append(res.Scenarios, *r)
		}
	}
	if !b.o.Writer {
		return nil
	}
	for _, bursts := range []bool{false, true} {
		name := "writer beside a sweep"
		if bursts {
			name = "writes in bursts beside a sweep"
		}
		logf("scenario: %s", name)
		w, err := b.writerBesideSweep(ctx, bursts)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if bursts {
			res.Bursts = w
		} else {
			res.Writer = w
		}
		if w.Failed > 0 {
			return fmt.Errorf("%s: %d of %d writes failed (first: %s)", name, w.Failed, w.Writes, w.FirstError)
		}
	}
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// chdirRoot moves to the module root (the directory holding go.mod), so
// bench/… and build/… resolve wherever run is started.
func chdirRoot() error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(data), "module github.com/memdecay/memdecay") {
			return os.Chdir(dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return errors.New("run me inside the memdecay repository")
		}
		dir = parent
	}
}

// ensureWorker builds the memworker binary when it is missing (make bench
// builds it first, so it is fresh there).
func ensureWorker(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	logf("building %s", path)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "sqlite_math_functions", "-o", path, "./cmd/memworker")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", path, err)
	}
	return nil
}

// baseGraph returns the generated graph for these flags, generating it
// once. The cache key covers the flags, the generator's source and the
// schema migrations, so a change to either makes a new file.
func baseGraph(ctx context.Context, o Options) (string, float64, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%d %d %d\n", o.Blocks, o.Edges, o.Seed)
	files, _ := filepath.Glob("schema/migrations/*.sql")
	for _, f := range append([]string{"bench/gen/main.go"}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", 0, err
		}
		h.Write(data)
	}
	latest, err := schema.Latest()
	if err != nil {
		return "", 0, err
	}
	name := fmt.Sprintf("graph-b%d-e%d-s%d-v%d-%s.db", o.Blocks, o.Edges, o.Seed, latest, hex.EncodeToString(h.Sum(nil))[:12])
	path := filepath.Join(o.Dir, name)
	if _, err := os.Stat(path); err == nil {
		logf("graph: %s (cached)", path)
		return path, 0, nil
	}
	gen := filepath.Join(o.Dir, "gen")
	build := exec.CommandContext(ctx, "go", "build", "-tags", "sqlite_math_functions", "-o", gen, "./bench/gen")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", 0, fmt.Errorf("building bench/gen: %w", err)
	}
	tmp := path + ".tmp"
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(tmp + suffix)
	}
	logf("graph: generating %d blocks, %d edges", o.Blocks, o.Edges)
	start := time.Now()
	cmd := exec.CommandContext(ctx, gen, "-out", tmp, "-blocks", fmt.Sprint(o.Blocks), "-edges", fmt.Sprint(o.Edges),
		"-seed", fmt.Sprint(o.Seed))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("generating the graph: %w", err)
	}
	secs := time.Since(start).Seconds()
	if _, err := os.Stat(tmp + "-wal"); err == nil {
		return "", 0, fmt.Errorf("%s-wal left behind: the generator did not close cleanly", tmp)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", 0, err
	}
	return path, secs, nil
}
