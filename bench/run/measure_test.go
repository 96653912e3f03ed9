package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMeasureCountsTheWALLeft: a process that grows the database and
// leaves a -wal file behind is charged for both in the size after, and
// the size before is the file as the process found it.
func TestMeasureCountsTheWALLeft(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(db, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `head -c 8192 /dev/zero >> "$1" && head -c 1000 /dev/zero > "$1-wal"`, "sh", db)
	m, err := measure(cmd, db)
	if err != nil {
		t.Fatal(err)
	}
	main, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	wal, err := os.Stat(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if m.FileBefore != 4096 || m.FileAfter != main.Size()+wal.Size() || m.FileAfter != 4096+8192+1000 {
		t.Errorf("file %d -> %d bytes, want 4096 -> %d (main %d + -wal %d)",
			m.FileBefore, m.FileAfter, 4096+8192+1000, main.Size(), wal.Size())
	}
	if m.MaxWAL > wal.Size() {
		t.Errorf("largest -wal seen %d bytes, more than the %d it ever held", m.MaxWAL, wal.Size())
	}
}

// TestMeasureWithoutTheFile: a database that is not there is an error, not
// a size of 0 in the report.
func TestMeasureWithoutTheFile(t *testing.T) {
	if _, err := measure(exec.Command("true"), filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("measure of a missing database: no error")
	}
}
