package store

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"testing"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

func TestOthersInLocks(t *testing.T) {
	const file = "fe:00:9979083"
	for _, tc := range []struct {
		name, locks string
		others      bool
	}{
		{"only this process", "1: POSIX  ADVISORY  READ 42 fe:00:9979083 128 128\n2: POSIX  ADVISORY  READ 42 fe:00:9979045 1073741826 1073742335\n", false},
		{"another process too", "1: POSIX  ADVISORY  READ 42 fe:00:9979083 128 128\n2: POSIX  ADVISORY  READ 7 fe:00:9979083 128 128\n", true},
		{"another process waiting", "1: POSIX  ADVISORY  READ 42 fe:00:9979083 128 128\n1: -> POSIX  ADVISORY  WRITE 7 fe:00:9979083 128 128\n", true},
		{"an open file description's lock", "1: POSIX  ADVISORY  READ 42 fe:00:9979083 128 128\n2: OFDLCK ADVISORY  READ -1 fe:00:9979083 128 128\n", true},
		{"another file's only", "1: POSIX  ADVISORY  READ 7 fe:00:9979084 128 128\n2: POSIX  ADVISORY  READ 42 fe:00:9979083 120 120\n", false},
		{"not this process's file: unknown", "1: POSIX  ADVISORY  READ 42 fe:00:99790830 128 128\n", true},
		{"no locks: unknown", "", true},
	} {
		if got := othersInLocks(tc.locks, file, 42); got != tc.others {
			t.Errorf("%s: others %v, want %v", tc.name, got, tc.others)
		}
	}
	for _, tc := range []struct {
		dev, ino uint64
		want     string
	}{
		{0xfe00, 9979083, "fe:00:9979083"},
		{0x0801, 12, "08:01:12"},
		{0x12310345, 7, "103:12345:7"}, // major 0x103, minor 0x12345: glibc's makedev
	} {
		if got := lockedFile(tc.dev, tc.ino); got != tc.want {
			t.Errorf("lockedFile(%#x, %d) = %s, want %s", tc.dev, tc.ino, got, tc.want)
		}
	}
}

// A sweep in a process of its own leaves the lock free between its
// transactions only while another process has the file open: here the
// sqlite3 shell, from its first read until it quits. A sweep that shares
// its process with an app always leaves it.
func TestTurnsOnlyWhileOthersHaveTheFileOpen(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/m.db"
	db, err := memdb.Open(path, memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	open := func(own bool) *fileStore {
		st, err := OpenFile(ctx, db, Options{ChunkSize: DefaultChunkSize, SoloChunkSize: DefaultSoloChunkSize,
			SoloHold: DefaultSoloHold, Pause: DefaultPause, OwnProcess: own})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	own, shared := open(true), open(false)
	if err := own.InTx(ctx, func() error {
		_, err := own.conn.ExecContext(ctx, "CREATE TABLE app_notes (body TEXT)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !shared.turnsNeeded() {
		t.Error("a sweep sharing its process with an app left it no turn")
	}
	if own.turnsNeeded() {
		t.Fatal("a sweep alone on its file left a turn")
	}

	shell := exec.Command("sqlite3", path)
	stdin, err := shell.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := shell.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := shell.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "SELECT count(*) FROM app_notes;\n")
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "0\n" {
		t.Fatalf("the shell read %q (%v)", line, err)
	}
	if !othersHaveOpen(path + "-shm") {
		t.Error("the shell's connection was not seen")
	}
	if !own.turnsNeeded() {
		t.Error("a sweep left no turn while the shell had the file open")
	}
	if err := own.InTx(ctx, func() error {
		_, err := own.conn.ExecContext(ctx, "INSERT INTO app_notes VALUES ('kept')")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := shell.Wait(); err != nil {
		t.Fatal(err)
	}
	if own.turnsNeeded() {
		t.Error("a turn was left once the shell had quit")
	}
	if !othersHaveOpen(t.TempDir() + "/none.db-shm") {
		t.Error("a wal-index that is not there counted as this process's alone")
	}
}
