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

// shellRun feeds script to the sqlite3 shell on path, with memdecay loaded
// (some steps re-read the views, which call its functions), stopping at the
// first error.
func shellRun(t *testing.T, path, script string) {
	t.Helper()
	so := os.Getenv("MEMDECAY_SO")
	if so == "" {
		t.Fatal("MEMDECAY_SO is not set: run make unit (or set it to build/memdecay.so)")
	}
	cmd := exec.Command("sqlite3", "-bail", path)
	cmd.Stdin = strings.NewReader(".load " + strings.TrimSuffix(so, ".so") + "\n" + script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3 on the printed SQL: %v\n%s", err, out)
	}
}

// The SQL migrate sql prints, run by another tool (the sqlite3 shell here),
// installs exactly what migrate up installs, recorded so memworker accepts
// it; its down script takes it all away again.
func TestMigrateSQLByAnotherTool(t *testing.T) {
	dir := t.TempDir()
	byShell, byWorker := filepath.Join(dir, "shell.db"), filepath.Join(dir, "worker.db")
	shellRun(t, byShell, ok(t, "migrate", "sql").stdout)
	ok(t, "migrate", "up", "--db", byWorker)
	objects := `SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`
	if a, b := queryRows(t, byShell, objects), queryRows(t, byWorker, objects); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("migrate sql | sqlite3 made:\n%s\nmigrate up made:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	latest, _ := schema.Latest()
	if r := ok(t, "migrate", "version", "--db", byShell); r.stdout != fmt.Sprintf("version %d (this memworker knows up to %d)\n", latest, latest) {
		t.Errorf("memworker reads the shell-installed schema as %q", r.stdout)
	}
	ok(t, "clock", "advance", "5", "--db", byShell)
	ok(t, "sweep", "--db", byShell)

	// One step down, then all the way.
	shellRun(t, byShell, ok(t, "migrate", "sql", "down", "--version", fmt.Sprint(latest)).stdout)
	if r := ok(t, "migrate", "version", "--db", byShell); !strings.HasPrefix(r.stdout, fmt.Sprintf("version %d ", latest-1)) {
		t.Errorf("after the down script of step %d: %q", latest, r.stdout)
	}
	shellRun(t, byShell, ok(t, "migrate", "sql", "up", "--version", fmt.Sprint(latest)).stdout)
	shellRun(t, byShell, ok(t, "migrate", "sql", "down").stdout)
	if left := queryRows(t, byShell, `SELECT name FROM sqlite_master WHERE tbl_name != 'mem_schema_migrations'`); len(left) > 0 {
		t.Errorf("the down script left %v", left)
	}

	wantExit(t, mw(t, "migrate", "sql", "--version", fmt.Sprint(latest+1)), exitFailure, "does not exist")
	wantUsage(t, mw(t, "migrate", "sql", "sideways"), `"sideways"`)
}
