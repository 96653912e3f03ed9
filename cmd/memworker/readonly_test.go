package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// readOnlyCommands only read the file.
var readOnlyCommands = [][]string{
	{"sweep", "--dry-run"},
	{"status"},
	{"clock", "show"},
	{"config", "get"},
	{"decayed"},
	{"decayed", "--invalid"},
	{"explain", "--edge", "late-a", "late-b"},
	{"migrate", "version"},
}

// leftoverWAL makes a memory whose last writer died with its changes still
// in the -wal (as after a crash or kill -9): the files are copied while an
// app's connection that never checkpoints holds them open.
func leftoverWAL(t *testing.T) string {
	t.Helper()
	src := demoDB(t)
	app, err := sql.Open("sqlite3", "file:"+src+"?mode=rw&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	app.SetMaxOpenConns(1)
	for _, q := range []string{
		`PRAGMA wal_autocheckpoint = 0`,
		`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('late-a', 'knowledge', 1), ('late-b', 'knowledge', 1)`,
		`INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('late-a', 'late-b', 0.5, 1)`,
	} {
		if _, err := app.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dst := filepath.Join(t.TempDir(), "crashed.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatalf("the app's files: %v", err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestReadOnlyCommandsChangeNoByte: commands that only read open the file
// read-only: a -wal an app left behind is neither copied into the file nor
// removed, and no byte of either changes (they still see its rows).
func TestReadOnlyCommandsChangeNoByte(t *testing.T) {
	for _, args := range readOnlyCommands {
		path := leftoverWAL(t)
		before, wal := fileHash(t, path), fileHash(t, path+"-wal")
		r := bin(t, append(args, "--db", path)...)
		if r.code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
			continue
		}
		if _, err := os.Stat(path + "-wal"); err != nil {
			t.Errorf("%v removed the -wal an app left: %v", args, err)
			continue
		}
		if fileHash(t, path) != before || fileHash(t, path+"-wal") != wal {
			t.Errorf("%v changed the file or its -wal", args)
		}
	}
}

// TestReadOnlyCommandsLeaveNoWAL: on a file closed cleanly (no -wal beside
// it) the same commands change no byte and leave no -wal or -shm behind.
func TestReadOnlyCommandsLeaveNoWAL(t *testing.T) {
	path := demoDB(t)
	exec1(t, path, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('late-a', 'knowledge', 1), ('late-b', 'knowledge', 1);
		INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('late-a', 'late-b', 0.5, 1)`)
	before := fileHash(t, path)
	for _, args := range readOnlyCommands {
		if r := bin(t, append(args, "--db", path)...); r.code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + suffix); err == nil {
				t.Errorf("%v left %s behind", args, suffix)
			}
		}
		if fileHash(t, path) != before {
			t.Errorf("%v changed the file", args)
		}
	}
}
