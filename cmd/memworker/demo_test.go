package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// TestDemoGolden: the demo's account of the sample graph's first sweep.
func TestDemoGolden(t *testing.T) {
	tr := newTranscript(t)
	tr.run("demo", "--db", filepath.Join(tr.dir, "m.db"))
	tr.check("demo")
}

func TestDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	ok(t, "demo", "--db", path) // the golden file shows what it prints
	// Like a sweep, the demo closes the file cleanly: no -wal or -shm left.
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); !os.IsNotExist(err) {
			t.Errorf("demo left %s behind (%v)", filepath.Base(path+suffix), err)
		}
	}

	// The file is a valid, migrated memory database holding one sweep.
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	v := ok(t, "migrate", "version", "--db", path)
	if !strings.HasPrefix(v.stdout, fmt.Sprintf("version %d ", latest)) {
		t.Errorf("migrate version after demo: %q, want version %d", v.stdout, latest)
	}
	if got := queryOne(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Errorf("integrity_check: %s", got)
	}
	if got := queryOne(t, path, "SELECT count(*) FROM mem_sweeps WHERE status = 'done'"); got != "1" {
		t.Errorf("demo recorded %s finished sweeps, want 1", got)
	}
	if got := queryOne(t, path, "SELECT count(*) > 0 FROM mem_blocks"); got != "1" {
		t.Error("demo loaded no blocks")
	}
	ok(t, "status", "--db", path)
}

func TestDemoRefusesAnExistingMemory(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	r := mw(t, "demo", "--db", path)
	wantExit(t, r, exitFailure, "already holds", "fresh file")
	if fileHash(t, path) != before {
		t.Error("a refused demo changed the file")
	}
}

func TestDemoRefusesANonSQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("my notes, not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mw(t, "demo", "--db", path)
	wantExit(t, r, exitFailure, "not a SQLite database")
	if b, _ := os.ReadFile(path); string(b) != "my notes, not a database\n" {
		t.Errorf("demo changed a non-SQLite file: %q", b)
	}
}

// TestDemoUsesTheGlobalDB: --db written before the command names the demo's
// file, as it does for every other command.
func TestDemoUsesTheGlobalDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	r := ok(t, "--db", path, "demo")
	if !strings.Contains(r.stdout, "loaded into "+path+"\n") {
		t.Errorf("memworker --db PATH demo did not write PATH:\n%s", r.stdout)
	}
	if got := queryOne(t, path, "SELECT count(*) FROM mem_sweeps WHERE status = 'done'"); got != "1" {
		t.Errorf("%s holds %s finished sweeps, want the demo's 1", path, got)
	}
}

// TestDemoHintRunsAsPrinted: the demo's closing hint names memworker as
// it was started (after make build it is build/memworker, not on PATH),
// so each command of it runs as printed.
func TestDemoHintRunsAsPrinted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	r := bin(t, "demo", "--db", path)
	if r.code != 0 {
		t.Fatalf("demo: %v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	hint, ok := strings.CutPrefix(lines[len(lines)-1], "Explore: ")
	if !ok {
		t.Fatalf("the demo ends with %q, want its hint", lines[len(lines)-1])
	}
	for _, command := range strings.Split(hint, "; ") {
		out, err := exec.Command("sh", "-c", command).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", command, err, out)
		}
	}
}
