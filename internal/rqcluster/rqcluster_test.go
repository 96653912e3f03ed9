package rqcluster

import (
	"context"
	"errors"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"
)

// extension returns memdecay.so: $MEMDECAY_SO, else build/memdecay.so.
func extension(t *testing.T) string {
	t.Helper()
	so, err := Extension()
	if err != nil {
		t.Fatalf("memdecay.so: %v", err)
	}
	return so
}

// want is effective_weight(0.5, 0.005, 500) (docs/tiers-and-edges.md).
const want = 0.0410424993119494

func TestClusterReplicatesFailsOverAndCatchesUp(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	c := StartT(t, Options{Nodes: 3, Extension: extension(t)})
	t.Logf("3 nodes ready with a leader in %s: %v", time.Since(start).Round(time.Millisecond), c.URLs())

	followers, err := c.Followers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(followers) != 2 {
		t.Fatalf("%d followers, want 2", len(followers))
	}
	f := followers[0]
	if err := f.Execute(ctx,
		"CREATE TABLE w (id INTEGER PRIMARY KEY, v REAL)",
		"INSERT INTO w (v) SELECT effective_weight(0.5, 0.005, 500)",
		[]any{"INSERT INTO w (v) VALUES (effective_weight(?, ?, ?))", 0.5, 0.005, 500},
		[]any{"INSERT INTO w (v) VALUES (effective_weight(:w, 0.005, :t))", map[string]any{"w": 0.5, "t": 500}},
	); err != nil {
		t.Fatalf("writing through follower %s: %v", f.ID, err)
	}
	const rowsQuery = "SELECT id, v FROM w ORDER BY id"
	if err := c.WaitSame(ctx, rowsQuery); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		rows, err := n.Query(ctx, rowsQuery)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("node %s holds %v, want 3 rows", n.ID, rows)
		}
		for _, r := range rows {
			if v, ok := r[1].(float64); !ok || math.Abs(v-want) > 1e-15 {
				t.Fatalf("node %s: row %v: want v = %v (float64)", n.ID, r, want)
			}
		}
	}

	old, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := old.PID()
	start = time.Now()
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	if old.Running() {
		t.Fatalf("node %s still running after Kill", old.ID)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d of killed node %s: kill -0 gives %v, want ESRCH", pid, old.ID, err)
	}
	if err := old.Kill(); err == nil {
		t.Fatalf("Kill of a node that is not running succeeded")
	}
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed leader %s; %s elected in %s", old.ID, leader.ID, time.Since(start).Round(time.Millisecond))
	if leader == old {
		t.Fatalf("the killed node %s is still the leader", old.ID)
	}
	followers, err = c.Followers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(followers) != 1 {
		t.Fatalf("%d followers after a kill, want 1", len(followers))
	}
	if err := followers[0].Execute(ctx, "INSERT INTO w (v) VALUES (effective_weight(0.5, 0.005, 500))"); err != nil {
		t.Fatalf("writing after the failover: %v", err)
	}
	if err := c.WaitSame(ctx, rowsQuery); err != nil {
		t.Fatal(err)
	}
	if rows, err := leader.Query(ctx, "SELECT count(*) FROM w"); err != nil || len(rows) != 1 || rows[0][0] != int64(4) {
		t.Fatalf("leader %s: count = %v, %v; want 4", leader.ID, rows, err)
	}

	start = time.Now()
	if err := old.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSame(ctx, rowsQuery); err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s restarted and caught up in %s", old.ID, time.Since(start).Round(time.Millisecond))
	rows, err := old.Query(ctx, "SELECT count(*), typeof(v) FROM w")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != int64(4) || rows[0][1] != "real" {
		t.Fatalf("restarted node %s: %v, want [[4 real]]", old.ID, rows)
	}
	if got := len(c.Running()); got != 3 {
		t.Fatalf("%d nodes running, want 3", got)
	}

	pids := map[string]int{}
	for _, n := range c.Nodes() {
		pids[n.ID] = n.PID()
	}
	start = time.Now()
	c.Stop()
	c.Stop() // idempotent
	t.Logf("stopped in %s", time.Since(start).Round(time.Millisecond))
	for id, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("node %s (pid %d) after Stop: kill -0 gives %v, want ESRCH", id, pid, err)
		}
	}
	if err := old.Restart(ctx); err == nil {
		t.Errorf("Restart after the cluster's Stop succeeded")
	}
	if !strings.Contains(old.LogTail(1000), "loaded extensions: memdecay.so") {
		t.Errorf("node %s's log does not say it loaded memdecay.so:\n%s", old.ID, old.LogTail(20))
	}
}

func TestNodeWithoutExtensionRefusesItsFunctions(t *testing.T) {
	ctx := context.Background()
	c := StartT(t, Options{Nodes: 1})
	n := c.Nodes()[0]
	const msg = "no such function: effective_weight"

	_, err := n.Query(ctx, "SELECT effective_weight(0.5, 0.005, 500)")
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Fatalf("query: error %v, want one saying %q", err, msg)
	}
	t.Logf("query: %v", err)

	err = n.Execute(ctx, "CREATE TABLE w (v REAL)", "INSERT INTO w VALUES (effective_weight(0.5, 0.005, 500))")
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Fatalf("execute: error %v, want one saying %q", err, msg)
	}
	t.Logf("execute: %v", err)

	// The statements before the failing one were applied.
	rows, err := n.Query(ctx, "SELECT count(*) FROM w")
	if err != nil || len(rows) != 1 || rows[0][0] != int64(0) {
		t.Fatalf("count after the failed insert: %v, %v; want [[0]]", rows, err)
	}
}

func TestQueryDecodesValues(t *testing.T) {
	ctx := context.Background()
	c := StartT(t, Options{Nodes: 1, Extension: extension(t)})
	n := c.Nodes()[0]
	if err := n.Execute(ctx,
		"CREATE TABLE v (i INTEGER, r REAL, s TEXT, b BLOB)",
		"INSERT INTO v VALUES (9007199254740993, 3, 'x', x'00ff')",
	); err != nil {
		t.Fatal(err)
	}
	rows, err := n.Query(ctx, "SELECT i, r, s, b, NULL, 2.5, effective_weight(1, 0, 1) FROM v")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || len(rows[0]) != 7 {
		t.Fatalf("rows %v", rows)
	}
	r := rows[0]
	if r[0] != int64(9007199254740993) {
		t.Errorf("integer: %#v", r[0])
	}
	if r[1] != float64(3) {
		t.Errorf("real 3: %#v", r[1])
	}
	if r[2] != "x" {
		t.Errorf("text: %#v", r[2])
	}
	if b, ok := r[3].([]byte); !ok || string(b) != "\x00\xff" {
		t.Errorf("blob: %#v", r[3])
	}
	if r[4] != nil {
		t.Errorf("NULL: %#v", r[4])
	}
	if r[5] != 2.5 {
		t.Errorf("2.5: %#v", r[5])
	}
	if r[6] != float64(1) {
		t.Errorf("effective_weight(1, 0, 1): %#v", r[6])
	}
}
