package store

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// othersHaveOpen says whether a process other than this one may have the
// database open. Each connection to a file in WAL mode holds a shared lock
// on its wal-index (the -shm file) for as long as it has it open (the
// "dead man switch" of SQLite's WAL locking), a waiting writer included,
// and Linux lists every lock held in /proc/locks, by process and file.
// It answers false only when that list shows this process's lock on the
// wal-index and no other process's: whatever it cannot read or match
// counts as another process.
func othersHaveOpen(shmPath string) bool {
	var st syscall.Stat_t
	if syscall.Stat(shmPath, &st) != nil {
		return true
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return true
	}
	return othersInLocks(string(locks), lockedFile(st.Dev, st.Ino), os.Getpid())
}

// lockedFile is a file as /proc/locks names it: its device's major and
// minor numbers in hex, and its inode ("fe:00:9979083").
func lockedFile(dev, ino uint64) string {
	major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
	minor := dev&0xff | (dev>>12)&^uint64(0xff)
	return hex2(major) + ":" + hex2(minor) + ":" + strconv.FormatUint(ino, 10)
}

// hex2 is %02x.
func hex2(n uint64) string {
	s := strconv.FormatUint(n, 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// othersInLocks reads /proc/locks's lines ("1: POSIX  ADVISORY  READ 4242
// fe:00:9979083 128 128", a waiter's with "->" after the number): whether
// a process but pid holds or waits for a lock on file, or pid holds none
// there (then the file was not matched, and nothing is known).
func othersInLocks(locks, file string, pid int) bool {
	own := strconv.Itoa(pid)
	ours := false
	for _, line := range strings.Split(locks, "\n") {
		fields := strings.Fields(line)
		for i := 1; i < len(fields); i++ {
			if fields[i] != file {
				continue
			}
			if fields[i-1] != own {
				return true
			}
			ours = true
		}
	}
	return !ours
}
