package main

import (
	"fmt"
	"slices"
	"strings"
)

// rqliteTables writes the rqlite scenarios' times, removals and data.
func (res *Results) rqliteTables(b *strings.Builder) {
	file, cluster := rqFileName, rqClusterName
	fmt.Fprintf(b, "\n### memworker on a %d-node rqlite cluster\n\n", RqliteNodes)
	fmt.Fprintf(b, "- %s: %d nodes on loopback, each with memdecay.so, started afresh for every run; the copy copied in "+
		"row by row through the leader's /db/execute, in requests of at most %d MB (one /db/load of a 1M-edge graph, a single Raft entry, "+
		"cost the leader its quorum on this machine), the scenario's writes sent as one request, every node caught up, all untimed; "+
		"then `memworker sweep --db LEADER --json`, timed from process start to exit\n", res.Rqlited, RqliteNodes, loadRequestBytes>>20)
	fmt.Fprintf(b, "- %s: the same sweep of a copy of the same file, VACUUMed first (untimed), as loading row by row compacts the cluster's; "+
		"the two alternate, run by run\n\n", file)
	fmt.Fprintf(b, "| scenario | %s (s) | %s (s) | rqlite ÷ file | CPU s, file | CPU s, rqlite: worker + each node | "+
		"worker peak RSS, file / rqlite (MB) | rqlited peak RSS during the sweep, per node (MB) |\n", file, cluster)
	fmt.Fprint(b, "|---|---:|---:|---:|---:|---|---:|---|\n")
	for _, r := range res.Rqlite {
		f, c := r.median("rq-file"), r.median("rq-cluster")
		fmt.Fprintf(b, "| %s | %s | %s | **%s** | %s | %s | %s / %s | %s |\n", r.Name, secs(f), secs(c), ratio(c, f),
			secs(r.medianCPU("rq-file")), clusterCPU(r.Runs["rq-cluster"]),
			mb(r.maxRSS("rq-file")), mb(r.maxRSS("rq-cluster")), nodeList(r.Runs["rq-cluster"], func(o Outcome) []int64 { return o.NodeRSSKiB }, 0))
	}
	fmt.Fprint(b, "\nWhat each sweep removed (the file's surviving edges and every node's, read at level none, the same):\n\n")
	fmt.Fprint(b, "| scenario | edges before | static prune | temporal decay | edges after | surviving edges |\n|---|---:|---:|---:|---:|---|\n")
	for _, r := range res.Rqlite {
		runs := r.Runs["rq-cluster"]
		if len(runs) == 0 {
			continue
		}
		w := runs[len(runs)-1]
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", r.Name, thousands(r.EdgesBefore), thousands(w.Pruned),
			thousands(w.Decayed), thousands(w.After), r.Digest)
	}
	fmt.Fprint(b, "\nData, MB: the file (with any -wal) before and after the sweep; after it, the leader's SQLite database "+
		"(db.sqlite and its -wal), Raft log (raft.db, which does not shrink) and snapshots, from the run that left the largest database; "+
		"each node's data directory (those three; not its copy of memdecay.so) once loaded and after the sweep, largest of the runs:\n\n")
	fmt.Fprint(b, "| scenario | file before | file after | leader: database | Raft log | snapshots | data directory per node, loaded | after the sweep |\n"+
		"|---|---:|---:|---:|---:|---:|---|---|\n")
	for _, r := range res.Rqlite {
		before, after := r.largestFile("rq-file")
		var l nodeFiles
		for _, o := range r.Runs["rq-cluster"] {
			if o.LeaderFiles.DB >= l.DB {
				l = o.LeaderFiles
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Name, mb(before>>10), mb(after>>10),
			mb(l.DB>>10), mb(l.Raft>>10), mb(l.Snapshots>>10),
			nodeList(r.Runs["rq-cluster"], func(o Outcome) []int64 { return o.NodeDataBefore }, 10),
			nodeList(r.Runs["rq-cluster"], func(o Outcome) []int64 { return o.NodeData }, 10))
	}
	var ids []string
	for _, r := range res.Rqlite {
		for _, o := range r.Runs["rq-cluster"] {
			if !slices.Contains(ids, o.Leader) {
				ids = append(ids, o.Leader)
			}
		}
	}
	slices.Sort(ids)
	fmt.Fprintf(b, "\nNodes in id order; the leader (the node memworker was given): node %s.\n", strings.Join(ids, ", node "))
	for _, r := range res.Rqlite {
		if r.Trace != nil {
			r.Trace.markdown(b, r.Name)
		}
	}
}

// nodeList is each node's largest value over the runs, in MB, as
// "a / b / c"; get gives a run's values in KiB shifted left by shift.
func nodeList(runs []Outcome, get func(Outcome) []int64, shift uint) string {
	var most []int64
	for _, o := range runs {
		for i, v := range get(o) {
			if i >= len(most) {
				most = append(most, 0)
			}
			most[i] = max(most[i], v)
		}
	}
	if len(most) == 0 {
		return "–"
	}
	parts := make([]string, len(most))
	for i, v := range most {
		parts[i] = mb(v >> shift)
	}
	return strings.Join(parts, " / ")
}

func (r *ScenarioResult) medianCPU(key string) float64 {
	var xs []float64
	for _, o := range r.Runs[key] {
		xs = append(xs, o.CPUSeconds)
	}
	return median(xs)
}

// clusterCPU is the medians of the cluster runs' CPU seconds: the worker's,
// each node's, and their sum, as "w + a + b + c = s".
func clusterCPU(runs []Outcome) string {
	if len(runs) == 0 {
		return "–"
	}
	var worker []float64
	var nodes [][]float64
	for _, o := range runs {
		worker = append(worker, o.CPUSeconds)
		for i, v := range o.NodeCPU {
			if i >= len(nodes) {
				nodes = append(nodes, nil)
			}
			nodes[i] = append(nodes[i], v)
		}
	}
	sum := median(worker)
	parts := []string{secs(sum)}
	for _, xs := range nodes {
		m := median(xs)
		sum += m
		parts = append(parts, secs(m))
	}
	return strings.Join(parts, " + ") + " = " + secs(sum)
}
