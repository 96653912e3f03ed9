//go:build unix && !linux

package rqcluster

import "syscall"

// sysProcAttr puts a node in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
