package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Measured is what a finished process cost.
type Measured struct {
	Seconds    float64 // wall time, start to exit
	PeakRSSKiB int64   // high-water resident set size
	CPUSeconds float64 // user and system time
	MaxWAL     int64   // largest size of the database's -wal file seen meanwhile
	// FileBefore and FileAfter are the database's size on disk (dbSize)
	// before the process starts and after it exits.
	FileBefore, FileAfter int64
}

// measure runs cmd to completion, sampling its peak RSS and the size of
// db's -wal file, and takes db's size before it starts and after it exits
// (outside the timed span). With db "" (a sweep of a cluster) only the
// time and the peak RSS are taken.
//
// The peak RSS comes from /proc/PID/status (VmHWM) and from getrusage.
// getrusage alone is not enough: Go starts children with vfork semantics, so
// Linux counts the parent's own high-water RSS as the child's when it
// execs, and every child would look at least as large as this process.
// Its value is used only when it exceeds this process's high-water mark;
// the sampled VmHWM (every 20 ms) covers smaller children.
func measure(cmd *exec.Cmd, db string) (Measured, error) {
	size := dbSize
	if db == "" {
		size = func(string) (int64, error) { return 0, nil }
	}
	before, err := size(db)
	if err != nil {
		return Measured{}, err
	}
	parent := vmHWM("self")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Measured{}, err
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	stop := make(chan struct{})
	peaks := make(chan [2]int64)
	go func() {
		var rss, wal int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			rss = max(rss, vmHWM(pid))
			if fi, err := os.Stat(db + "-wal"); err == nil && db != "" {
				wal = max(wal, fi.Size())
			}
			select {
			case <-stop:
				peaks <- [2]int64{rss, wal}
				return
			case <-tick.C:
			}
		}
	}()
	err = cmd.Wait()
	m := Measured{Seconds: time.Since(start).Seconds(), FileBefore: before}
	close(stop)
	p := <-peaks
	m.PeakRSSKiB, m.MaxWAL = p[0], p[1]
	m.CPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > parent {
		m.PeakRSSKiB = max(m.PeakRSSKiB, ru.Maxrss) // KiB on Linux
	}
	after, sizeErr := size(db)
	m.FileAfter = after
	if err == nil {
		err = sizeErr
	}
	return m, err
}

// dbSize is what the database at path takes on disk, in bytes: the main
// file plus its -wal file when one is there, since rows not yet
// checkpointed are still part of it. The -shm index is left out: SQLite
// rebuilds it and it holds no rows.
func dbSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	n := fi.Size()
	if wal, err := os.Stat(path + "-wal"); err == nil {
		n += wal.Size()
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	return n, nil
}

// cpuSeconds reads a process's user and system time so far (0 when
// unknown), in the kernel's clock ticks of 1/100 s.
func cpuSeconds(pid string) float64 {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses and
	// may hold spaces: state is the first, utime the 12th, stime the 13th.
	_, rest, ok := bytes.Cut(data, []byte(") "))
	f := bytes.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(string(f[11]), 10, 64)
	stime, _ := strconv.ParseInt(string(f[12]), 10, 64)
	return float64(utime+stime) / 100
}

// vmHWM reads a process's high-water RSS in KiB (0 when unknown).
func vmHWM(pid string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:")); ok {
			f := bytes.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return n
			}
		}
	}
	return 0
}
