//go:build unix && !linux

package offlinekube

import "syscall"

// sysProcAttr puts each component in a process group of its own, which Stop signals.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
