package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
)

func TestNoDatabase(t *testing.T) {
	for _, args := range [][]string{
		{"sweep"}, {"status"}, {"clock", "show"}, {"clock", "advance", "1"}, {"config", "get"},
		{"decayed"}, {"migrate", "up"}, {"migrate", "version"}, {"explain", "--fact", "f"},
		{"restore", "--fact", "f"}, {"fact", "recall", "f"},
	} {
		r := mw(t, args...)
		wantUsage(t, r, "--db", "MEMWORKER_DB")
	}
}

func TestHelpGolden(t *testing.T) {
	tr := newTranscript(t)
	tr.run("--help")
	tr.check("help")
}

func TestHelp(t *testing.T) {
	ok(t, "help")
	for _, cmd := range [][]string{
		{"migrate"}, {"migrate", "up"}, {"migrate", "down"}, {"migrate", "version"},
		{"sweep"}, {"status"}, {"clock"}, {"clock", "show"}, {"clock", "advance"},
		{"config"}, {"config", "get"}, {"config", "set"}, {"decayed"}, {"explain"}, {"restore"},
		{"fact"}, {"fact", "feedback"}, {"fact", "recall"}, {"demo"},
	} {
		for _, h := range []string{"--help", "-h"} {
			r := mw(t, append(cmd, h)...)
			if r.code != exitOK {
				t.Errorf("memworker %s %s: %v", strings.Join(cmd, " "), h, r)
				continue
			}
			if !strings.Contains(r.stdout, "memworker "+strings.Join(cmd, " ")) || !strings.Contains(r.stdout, "--db") {
				t.Errorf("memworker %s %s printed:\n%s", strings.Join(cmd, " "), h, r.stdout)
			}
		}
	}
	r := ok(t, "sweep", "--help")
	for _, flag := range []string{"--dry-run", "--now", "--wall-now", "--json", "--chunk", "--solo-chunk", "--solo-hold"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("sweep --help lacks %s", flag)
		}
	}
}

func TestVersion(t *testing.T) {
	r := ok(t, "--version")
	if !strings.Contains(r.stdout, sqlfuncs.Version) || !strings.HasPrefix(r.stdout, "memworker version ") {
		t.Errorf("--version: %q, want the version %s", r.stdout, sqlfuncs.Version)
	}
}

func TestUnknownFlag(t *testing.T) {
	wantUsage(t, mw(t, "--bogus"), "bogus")
	wantUsage(t, mw(t, "status", "--bogus"), "bogus", "status --help")
}

// --- the built binary -----------------------------------------------------

func TestBinaryEndToEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	r := bin(t, "demo", "--db", path)
	if r.code != 0 || !strings.Contains(r.stdout, "\nCurated: ") {
		t.Fatalf("demo: %v", r)
	}
	r = bin(t, "sweep", "--json", "--now", "900", "--db", path)
	if r.code != 0 {
		t.Fatalf("sweep --json: %v", r)
	}
	wantReport(t, decodeJSON(t, r))

	r = bin(t, "--version")
	if r.code != 0 || !strings.Contains(r.stdout, sqlfuncs.Version) {
		t.Errorf("--version: %v", r)
	}
	r = bin(t, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "sweep") {
		t.Errorf("--help: %v", r)
	}
	r = bin(t, "no-such-command")
	wantUsage(t, r, "unknown command", "no-such-command", "memworker --help")
	r = bin(t, "sweep", "--now", "abc", "--db", path)
	wantUsage(t, r, "sweep --help")
	r = bin(t, "sweep", "--db", filepath.Join(t.TempDir(), "missing.db"))
	wantExit(t, r, exitFailure, "no such database file")
}

func TestBinaryEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	if r := bin(t, "demo", "--db", path); r.code != 0 {
		t.Fatalf("demo: %v", r)
	}
	t.Setenv("MEMWORKER_DB", path)
	r := bin(t, "status")
	if r.code != 0 || !strings.Contains(r.stdout, path) {
		t.Fatalf("status with MEMWORKER_DB: %v", r)
	}
	r = bin(t, "clock", "advance", "10")
	if r.code != 0 || r.stdout != "510\n" {
		t.Errorf("clock advance with MEMWORKER_DB: %v", r)
	}
	r = bin(t, "sweep", "--json")
	if r.code != 0 || num(t, decodeJSON(t, r), "clock_hours") != 510 {
		t.Errorf("sweep with MEMWORKER_DB: %v", r)
	}
	// --db wins over the environment.
	t.Setenv("MEMWORKER_DB", filepath.Join(t.TempDir(), "missing.db"))
	r = bin(t, "clock", "show", "--db", path)
	if r.code != 0 || r.stdout != "510\n" {
		t.Errorf("--db over MEMWORKER_DB: %v", r)
	}
	r = bin(t, "clock", "show")
	wantExit(t, r, exitFailure, "no such database file")
	// An empty MEMWORKER_DB is no database.
	t.Setenv("MEMWORKER_DB", "")
	wantUsage(t, bin(t, "status"), "MEMWORKER_DB")
}

// TestNotARegularFile: a FIFO, a directory or a socket as --db is refused
// at once, saying what it is (opening a FIFO would wait for a writer
// forever), and is left as it was.
func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.db")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "named pipe", dir: "directory"} {
		for _, args := range [][]string{{"status"}, {"sweep"}, {"migrate", "up"}} {
			done := make(chan result, 1)
			go func() { done <- mw(t, append(args, "--db", path)...) }()
			select {
			case r := <-done:
				wantExit(t, r, exitFailure, kind, "not a regular file")
			case <-time.After(10 * time.Second):
				t.Fatalf("%v on a %s hangs", args, kind)
			}
		}
	}
}
