package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
)

// The schema does not change under a running sweep: migrate down (and up,
// with a step pending) exits 75 naming the sweep, and changes nothing.
func TestMigrateRefusedDuringSweep(t *testing.T) {
	path := demoDB(t)
	release := holdLease(t, path)
	before := fileHash(t, path)
	r := bin(t, "migrate", "down", "--db", path)
	if r.code != exitBusy || !strings.Contains(r.stderr, "already running") || !strings.Contains(r.stderr, "9999") {
		t.Errorf("migrate down beside a sweep: exit %d, stderr %q; want 75 naming sweep 9999", r.code, r.stderr)
	}
	if fileHash(t, path) != before {
		t.Error("a refused migrate down changed the file")
	}
	release()
	ok(t, "migrate", "down", "--db", path)
	exec1(t, path, `UPDATE mem_sweeps SET status = 'running', lease_until = ? WHERE id = 9999`, time.Now().Add(time.Minute).Unix())
	wantExit(t, mw(t, "migrate", "up", "--db", path), exitBusy, "already running")
	release()
	latest, _ := schema.Latest()
	if r := ok(t, "migrate", "up", "--db", path); r.stdout != fmt.Sprintf("schema at version %d\n", latest) {
		t.Errorf("migrate up once the sweep ended: %q", r.stdout)
	}
}

// migrate force: usage mistakes exit 2; a dirty file (left by another
// tool) is refused by every command until force records a version.
func TestMigrateForce(t *testing.T) {
	path := demoDB(t)
	latest, _ := schema.Latest()
	wantUsage(t, mw(t, "migrate", "force", "--db", path), "exactly one VERSION")
	wantUsage(t, mw(t, "migrate", "force", "seven", "--db", path), `"seven"`, "whole number")
	wantExit(t, mw(t, "migrate", "force", fmt.Sprint(latest+1), "--db", path), exitFailure, "does not exist")

	exec1(t, path, `UPDATE mem_schema_migrations SET dirty = 1`)
	for _, args := range [][]string{{"sweep"}, {"status"}, {"migrate", "up"}, {"migrate", "down"}} {
		wantExit(t, mw(t, append(args, "--db", path)...), exitFailure, "dirty", "memworker migrate force")
	}
	if r := ok(t, "migrate", "version", "--db", path); !strings.HasSuffix(r.stdout, ", dirty\n") {
		t.Errorf("migrate version on a dirty file: %q", r.stdout)
	}
	if r := ok(t, "migrate", "force", fmt.Sprint(latest), "--db", path); r.stdout != fmt.Sprintf("schema recorded at version %d\n", latest) {
		t.Errorf("migrate force: %q", r.stdout)
	}
	ok(t, "sweep", "--db", path)
	// Once clean, force is refused: it would make the next migrate run the wrong steps.
	wantExit(t, mw(t, "migrate", "force", "1", "--db", path), exitFailure, "clean", "nothing was changed")
	if r := ok(t, "migrate", "version", "--db", path); !strings.HasPrefix(r.stdout, fmt.Sprintf("version %d ", latest)) {
		t.Errorf("a refused force changed the version: %q", r.stdout)
	}
}

// kill -9 during migrate up, at any moment, leaves the file at a clean
// version (the one it had, or the newest) with its data whole, and the next
// migrate up finishes the job.
func TestMigrateKilledLeavesCleanVersion(t *testing.T) {
	latest, _ := schema.Latest()
	for i, delay := range []time.Duration{20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond} {
		path := demoDB(t)
		// Back to version 5, with enough edges that rebuilding mem_edges
		// (step 6) takes a while.
		for v := latest; v > 5; v-- {
			ok(t, "migrate", "down", "--db", path)
		}
		exec1(t, path, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 59999)
			INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours)
			SELECT printf('k%05d', i), printf('k%05d', i + 1 + i * 7919 % 9), 0.5, 1 FROM n`)
		want := queryOne(t, path, `SELECT count(*) || ':' || total(weight) FROM mem_edges`)

		cmd := exec.Command(binary(t), "migrate", "up", "--db", path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()

		v := queryOne(t, path, `SELECT version || ':' || dirty FROM mem_schema_migrations`)
		t.Logf("killed after %v: version row %s", delay, v)
		if v != "5:0" && v != fmt.Sprintf("%d:0", latest) {
			t.Errorf("kill %d after %v: version row %q, want 5 or %d, clean", i, delay, v, latest)
		}
		if got := queryOne(t, path, `PRAGMA integrity_check`); got != "ok" {
			t.Errorf("kill %d: integrity %q", i, got)
		}
		if got := queryOne(t, path, `SELECT count(*) || ':' || total(weight) FROM mem_edges`); got != want {
			t.Errorf("kill %d: edges %q, want %q", i, got, want)
		}
		ok(t, "migrate", "up", "--db", path)
		if got := queryOne(t, path, `SELECT count(*) || ':' || total(weight) FROM mem_edges`); got != want {
			t.Errorf("kill %d, migrated again: edges %q, want %q", i, got, want)
		}
	}
}
