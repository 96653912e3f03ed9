package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Machine describes where the numbers were taken.
type Machine struct {
	CPUs              int
	CPU, RAM, Kernel  string
	Load              string
	Go, Shell, Python string
	WorkerSQLite      string
	WorkerBinary      string // sha256 prefix and modification time of the binary
}

// Results is everything the markdown report shows.
type Results struct {
	Options    Options
	Machine    Machine
	Peers      []Peer
	GenSeconds float64
	BaseBytes  int64
	Clock      float64 // the graph's active_hours
	// EdgeTriggers counts the triggers memworker's schema puts on mem_edges.
	EdgeTriggers int
	Started      time.Time
	Scenarios    []ScenarioResult
	Rqlite       []ScenarioResult // memworker on a file and on a cluster
	Rqlited      string           // rqlited -version
	Writer       *WriterResult
	Bursts       *WriterResult // the writer in bursts
	Failure      string        // why the run stopped early, if it did
}

func describeMachine(ctx context.Context, o Options) Machine {
	m := Machine{CPUs: runtime.NumCPU(), CPU: "?", RAM: "?", Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kib, _ := strconv.ParseFloat(f[1], 64)
				m.RAM = fmt.Sprintf("%.1f GiB RAM", kib/(1<<20))
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.Load = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	if f := strings.Fields(firstLine(ctx, o.Shell, "--version")); len(f) > 0 {
		m.Shell = f[0]
	}
	m.Python = firstLine(ctx, o.Python, "-c",
		"import platform, sqlite3; print(platform.python_version(), 'with SQLite', sqlite3.sqlite_version)")
	if data, err := os.ReadFile(o.Worker); err == nil {
		sum := sha256.Sum256(data)
		m.WorkerBinary = "sha256 " + hex.EncodeToString(sum[:])[:12]
		if fi, err := os.Stat(o.Worker); err == nil {
			m.WorkerBinary += ", built " + fi.ModTime().UTC().Format("2006-01-02 15:04 UTC")
		}
	}
	if db, err := openDB(":memory:", nil); err == nil {
		db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&m.WorkerSQLite)
		db.Close()
	}
	return m
}

func firstLine(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return "?"
	}
	line, _, _ := bytes.Cut(bytes.TrimSpace(out), []byte("\n"))
	return string(line)
}

func secs(s float64) string {
	if s < 1 {
		return strconv.FormatFloat(s, 'f', 3, 64)
	}
	return strconv.FormatFloat(s, 'f', 2, 64)
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "–"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

func mb(kib int64) string { return strconv.FormatFloat(float64(kib)/1024, 'f', 0, 64) }

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (r *ScenarioResult) median(key string) float64 {
	var xs []float64
	for _, o := range r.Runs[key] {
		xs = append(xs, o.Seconds)
	}
	return median(xs)
}

func (r *ScenarioResult) maxRSS(key string) int64 {
	var m int64
	for _, o := range r.Runs[key] {
		m = max(m, o.MaxRSSKiB)
	}
	return m
}

func (r *ScenarioResult) maxWAL(key string) int64 {
	var m int64
	for _, o := range r.Runs[key] {
		m = max(m, o.MaxWAL)
	}
	return m
}

// largestFile is the run of a peer that left the largest database file:
// its size after, and the size of the copy it started from.
func (r *ScenarioResult) largestFile(key string) (before, after int64) {
	for _, o := range r.Runs[key] {
		if o.FileAfter > after {
			before, after = o.FileBefore, o.FileAfter
		}
	}
	return before, after
}

// Markdown renders the report: the command, the machine, the table of
// medians and ratios, what each sweep removed, every peer's peak memory
// and the writer's latencies.
func (res *Results) Markdown() string {
	var b strings.Builder
	o, m := res.Options, res.Machine
	fmt.Fprintf(&b, "\n## Sweep benchmark, %s\n\n", res.Started.UTC().Format("2006-01-02 15:04 UTC"))
	extra := ""
	if o.PeerTriggers {
		extra += " -peer-triggers"
	}
	if o.Bulk {
		extra += " -bulk"
	}
	if o.Scenarios != "first,noop,steady" {
		extra += " -scenarios " + o.Scenarios
	}
	if !o.Writer {
		extra += " -writer=false"
	}
	if o.RqliteTrace {
		extra += " -rqlite-trace"
	}
	if o.Worker != "build/memworker" {
		extra += " -worker " + o.Worker
	}
	fmt.Fprintf(&b, "Command: `go run -tags sqlite_math_functions ./bench/run -blocks %d -edges %d -seed %d -runs %d%s`\n\n",
		o.Blocks, o.Edges, o.Seed, o.Runs, extra)
	fmt.Fprintf(&b, "- Machine: %d CPUs (`nproc`), %s, %s, %s; load average at start %s\n", m.CPUs, m.CPU, m.RAM, m.Kernel, m.Load)
	fmt.Fprintf(&b, "- Software: %s; sqlite3 shell %s; %s %s; %s (%s) with SQLite %s (mattn/go-sqlite3)\n",
		m.Go, m.Shell, o.Python, m.Python, o.Worker, m.WorkerBinary, m.WorkerSQLite)
	gen := "cached"
	if res.GenSeconds > 0 {
		gen = fmt.Sprintf("generated in %.0f s", res.GenSeconds)
	}
	fmt.Fprintf(&b, "- Graph: %s blocks, %s edges (seed %d), clock %g active hours, %.0f MB file, %s\n",
		thousands(int64(o.Blocks)), thousands(int64(o.Edges)), o.Seed, res.Clock, float64(res.BaseBytes)/(1<<20), gen)
	switch {
	case len(res.Scenarios) == 0:
	case res.EdgeTriggers > 0 && !o.PeerTriggers:
		fmt.Fprintf(&b, "- The app loop's, plain SQL's and bounded SQL's copies have memworker's %d mem_edges triggers dropped before each run "+
			"(an app without memworker would not have them; `-peer-triggers` keeps them)\n", res.EdgeTriggers)
	case res.EdgeTriggers > 0:
		fmt.Fprintf(&b, "- Every peer's copy keeps memworker's %d mem_edges triggers (`-peer-triggers`)\n", res.EdgeTriggers)
	}
	fmt.Fprintf(&b, "- Each time: the median of %d runs, wall seconds from process start to exit, every run on a fresh copy after a sync\n\n", o.Runs)

	if len(res.Scenarios) > 0 {
		res.tables(&b)
	}
	if len(res.Rqlite) > 0 {
		res.rqliteTables(&b)
	}
	if w := res.Writer; w != nil {
		fmt.Fprintf(&b, "\nWriter beside a sweep: while `memworker sweep` ran its first sweep on a fresh copy (%s edges, %s s, peak RSS %s MB, -wal up to %s MB), "+
			"an app on its own connection (WAL, busy_timeout 5000) wrote one edge every %s (%d inserts, %d updates): "+
			"**%d of %d writes failed**; write latency p50 %s, p99 %s, worst %s.\n",
			thousands(w.Edges), secs(w.SweepSeconds), mb(w.SweepRSSKiB), mb(w.MaxWAL>>10), ms(WriteInterval), w.Inserts, w.Updates,
			w.Failed, w.Writes, ms(w.P50), ms(w.P99), ms(w.Worst))
	}
	if w := res.Bursts; w != nil {
		fmt.Fprintf(&b, "\nWrites in bursts beside a sweep: the same, but the app wrote for %s after each %s of quiet "+
			"(%d bursts, %s s sweep): **%d of %d writes failed**; each burst's first write waited at most **%s**; "+
			"write latency p50 %s, p99 %s, worst %s.\n",
			BurstLength, BurstQuiet, w.Bursts, secs(w.SweepSeconds), w.Failed, w.Writes, ms(w.FirstWorst), ms(w.P50), ms(w.P99), ms(w.Worst))
	}
	if res.Failure != "" {
		fmt.Fprintf(&b, "\n**The run stopped early:** %s\n", strings.ReplaceAll(res.Failure, "\n", " "))
	}
	return b.String()
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

// tables writes the timing, removal and memory tables.
func (res *Results) tables(b *strings.Builder) {
	hasFull := slices.ContainsFunc(res.Peers, func(p Peer) bool { return p.Key == "worker-full" })
	fmt.Fprint(b, "| scenario | app loop (s) | plain SQL (s) | bounded SQL (s) | memworker (s) |")
	if hasFull {
		fmt.Fprint(b, " memworker --full (s) |")
	}
	fmt.Fprint(b, " memworker ÷ plain | memworker ÷ bounded | app loop ÷ memworker | worker peak RSS (MB) |\n|---|---:|---:|---:|---:|")
	if hasFull {
		fmt.Fprint(b, "---:|")
	}
	fmt.Fprint(b, "---:|---:|---:|---:|\n")
	for _, r := range res.Scenarios {
		app, plain, bounded, w := r.median("app"), r.median("plain"), r.median("bounded"), r.median("worker")
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |", r.Name, secs(app), secs(plain), secs(bounded), secs(w))
		rss := mb(r.maxRSS("worker"))
		if hasFull {
			fmt.Fprintf(b, " %s |", secs(r.median("worker-full")))
			rss += " / " + mb(r.maxRSS("worker-full"))
		}
		fmt.Fprintf(b, " %s | %s | %s | %s |\n", ratio(w, plain), ratio(w, bounded), ratio(app, w), rss)
	}
	if hasFull {
		fmt.Fprint(b, "\nWorker peak RSS: memworker / memworker --full.\n")
	}
	if slices.ContainsFunc(res.Peers, func(p Peer) bool { return p.Key == "worker-bulk" }) {
		fmt.Fprint(b, "\nmemworker --bulk (the whole sweep in one write transaction) beside the others:\n\n"+
			"| scenario | memworker --bulk (s) | --bulk ÷ plain | --bulk ÷ bounded | app loop ÷ --bulk | --bulk ÷ memworker | --bulk peak RSS (MB) |\n"+
			"|---|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range res.Scenarios {
			k := r.median("worker-bulk")
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Name, secs(k), ratio(k, r.median("plain")), ratio(k, r.median("bounded")),
				ratio(r.median("app"), k), ratio(k, r.median("worker")), mb(r.maxRSS("worker-bulk")))
		}
	}
	if slices.ContainsFunc(res.Peers, func(p Peer) bool { return p.Key == "mapped" }) {
		fmt.Fprint(b, "\nThe same rows in an app's own tables (app_nodes, app_tags, app_links with integer ids), swept in place "+
			"through a mapping, beside memworker's own tables (target: at most 1.2×):\n\n"+
			"| scenario | memworker (s) | memworker mapped (s) | mapped ÷ memworker | mapped peak RSS (MB) |\n|---|---:|---:|---:|---:|\n")
		for _, r := range res.Scenarios {
			w, m := r.median("worker"), r.median("mapped")
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", r.Name, secs(w), secs(m), ratio(m, w), mb(r.maxRSS("mapped")))
		}
	}

	fmt.Fprint(b, "\nWhat each sweep removed (every peer the same; the digest covers each surviving edge's key, weight, count, origin, anchor and pin):\n\n")
	fmt.Fprint(b, "| scenario | edges before | static prune | temporal decay | edges after | surviving edges |\n|---|---:|---:|---:|---:|---|\n")
	for _, r := range res.Scenarios {
		w := r.Runs["worker"][len(r.Runs["worker"])-1]
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", r.Name, thousands(r.EdgesBefore), thousands(w.Pruned),
			thousands(w.Decayed), thousands(w.After), r.Digest)
	}

	fmt.Fprint(b, "\nPeak RSS of each process / largest -wal file seen during the run, MB (largest of the runs):\n\n| scenario |")
	for _, p := range res.Peers {
		fmt.Fprintf(b, " %s |", p.Name)
	}
	fmt.Fprint(b, "\n|---|")
	for range res.Peers {
		fmt.Fprint(b, "---:|")
	}
	fmt.Fprintln(b)
	for _, r := range res.Scenarios {
		fmt.Fprintf(b, "| %s |", r.Name)
		for _, p := range res.Peers {
			fmt.Fprintf(b, " %s / %s |", mb(r.maxRSS(p.Key)), mb(r.maxWAL(p.Key)>>10))
		}
		fmt.Fprintln(b)
	}
	res.fileTable(b)
}

// fileTable writes what each peer leaves on disk. A sweep that writes an
// event per removal grows the file while it shrinks the edges; the reader
// checks memworker's first sweep against at most 1.4× the file before.
func (res *Results) fileTable(b *strings.Builder) {
	fmt.Fprint(b, "\nDatabase file each peer leaves, MB: the main file plus any -wal file left once the process exits; "+
		"before is the copy the run started from (the graph, or the peer's first-sweep result after the scenario's writes); "+
		"from the run that left the largest file; the ratio is of the sizes in bytes. "+
		"Target: memworker's first sweep at most 1.4× the file before, events included.\n\n")
	fmt.Fprint(b, "| scenario | peer | file before (MB) | file after (MB) | after ÷ before |\n|---|---|---:|---:|---:|\n")
	for _, r := range res.Scenarios {
		for _, p := range res.Peers {
			before, after := r.largestFile(p.Key)
			grew := ratio(float64(after), float64(before))
			if p.Worker {
				grew = "**" + grew + "**" // the figure the target is about
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", r.Name, p.Name, mb(before>>10), mb(after>>10), grew)
		}
	}
}
