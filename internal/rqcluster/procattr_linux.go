package rqcluster

import "syscall"

// sysProcAttr puts a node in its own process group and has the kernel kill
// it when the thread that started it exits (see spawn), so that nodes do not
// outlive a test binary that was killed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
