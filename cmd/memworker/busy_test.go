package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holdLease records a sweep that another host is running on path, with a
// live lease; release ends it.
func holdLease(t *testing.T, path string) (release func()) {
	t.Helper()
	exec1(t, path, `INSERT INTO mem_sweeps (id, started_at, clock_hours, status, lease_until, owner)
		VALUES (9999, ?, 0, 'running', ?, 'pid 1 on elsewhere')`, time.Now().Unix(), time.Now().Add(time.Minute).Unix())
	return func() {
		exec1(t, path, `UPDATE mem_sweeps SET status = 'done', finished_at = ? WHERE id = 9999`, time.Now().Unix())
	}
}

// TestSweepBusyExit75: a sweep refused because another holds the file
// exits 75 (EX_TEMPFAIL), naming the other sweep, and changes nothing.
func TestSweepBusyExit75(t *testing.T) {
	path := demoDB(t)
	holdLease(t, path)
	before := fileHash(t, path)
	r := bin(t, "sweep", "--db", path)
	if r.code != 75 || !strings.Contains(r.stderr, "already running") || !strings.Contains(r.stderr, "9999") {
		t.Errorf("sweep beside another: exit %d, stderr %q; want 75 naming sweep 9999", r.code, r.stderr)
	}
	if fileHash(t, path) != before {
		t.Error("a refused sweep changed the file")
	}
}

// TestSweepWait: with --wait, the sweep says it waits, and sweeps once the
// other one is done.
func TestSweepWait(t *testing.T) {
	path := demoDB(t)
	release := holdLease(t, path)
	done := make(chan result, 1)
	go func() { done <- mw(t, "sweep", "--wait", "--db", path) }()
	select {
	case r := <-done:
		t.Fatalf("sweep --wait returned while the other sweep held the file: %v", r)
	case <-time.After(1500 * time.Millisecond):
	}
	release()
	select {
	case r := <-done:
		if r.code != 0 || !strings.Contains(r.stderr, "waiting") || !strings.Contains(r.stdout, "Curated") {
			t.Errorf("sweep --wait: %v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("sweep --wait did not sweep after the other sweep ended")
	}
}

// A fleet sweep whose only failures are files held by another sweep exits
// 75 (try later), after sweeping the rest; any other failure is exit 1.
func TestFleetBusyExit75(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	ok(t, "demo", "--db", a)
	ok(t, "demo", "--db", b)
	holdLease(t, b)
	r := bin(t, "sweep", "--db", filepath.Join(dir, "*.db"))
	if r.code != exitBusy || !strings.Contains(r.stderr, "1 of 2 databases are held by another sweep") {
		t.Errorf("fleet sweep with one file held: exit %d, stderr %q; want 75", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, a+": ") || strings.Contains(r.stdout, a+": FAILED") {
		t.Errorf("the free file was not swept:\n%s", r.stdout)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.db"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := bin(t, "sweep", "--db", filepath.Join(dir, "*.db")); r.code != exitFailure {
		t.Errorf("fleet sweep with a broken file and a held one: exit %d, want 1", r.code)
	}
}
