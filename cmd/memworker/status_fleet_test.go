package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// status over a glob: one line per file (an array with --json), a file
// that is not a memory database named with its problem and exit 1, and no
// file changed.
func TestStatusFleet(t *testing.T) {
	dir := t.TempDir()
	demo := demoDB(t)
	for _, name := range []string{"a.db", "b.db"} {
		data, err := os.ReadFile(demo)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	glob := filepath.Join(dir, "*.db")
	r := ok(t, "status", "--db", glob)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("status over 2 files printed %d lines:\n%s", len(lines), r.stdout)
	}
	for i, name := range []string{"a.db", "b.db"} {
		want := filepath.Join(dir, name) + "  schema "
		if !strings.HasPrefix(lines[i], want) || !strings.Contains(lines[i], " h, last sweep ") || !strings.Contains(lines[i], "edges ") {
			t.Errorf("line %d %q, want it to start %q and give the clock in h and the counts", i, lines[i], want)
		}
	}
	var all []map[string]any
	if err := json.Unmarshal([]byte(ok(t, "status", "--json", "--db", glob).stdout), &all); err != nil || len(all) != 2 ||
		all[1]["path"] != filepath.Join(dir, "b.db") || all[1]["edges"] == nil {
		t.Errorf("status --json over a glob: %v %v", all, err)
	}

	junk := filepath.Join(dir, "c.db")
	if err := os.WriteFile(junk, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, filepath.Join(dir, "a.db"))
	r = mw(t, "status", "--db", glob)
	wantExit(t, r, exitFailure, "1 of 3 files could not be read")
	if !strings.Contains(r.stdout, junk+"  error: ") || strings.Count(r.stdout, "\n") != 3 {
		t.Errorf("status with a bad file in the glob:\n%s", r.stdout)
	}
	if fileHash(t, filepath.Join(dir, "a.db")) != before {
		t.Error("status over a glob changed a file")
	}
	wantExit(t, mw(t, "status", "--db", filepath.Join(dir, "*.none")), exitFailure, "matches no file")
}

// A glob such as dir/* matches SQLite's companion files too (-wal, -shm,
// -journal): they belong to their database and are not swept or reported.
func TestGlobSkipsCompanionFiles(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	ok(t, "demo", "--db", db)
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.WriteFile(db+suffix, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An orphan -wal (no database beside it) is still named as what it is.
	orphan := filepath.Join(dir, "gone.db-wal")
	if err := os.WriteFile(orphan, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mw(t, "status", "--db", filepath.Join(dir, "*"))
	if strings.Contains(r.stdout, db+"-") || !strings.Contains(r.stdout, db+"  schema ") || !strings.Contains(r.stdout, orphan+"  error:") {
		t.Errorf("status over dir/*:\n%s", r.stdout)
	}
}
