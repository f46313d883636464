package offlinekube

import "syscall"

// sysProcAttr puts each component in a process group of its own (Stop signals the group) and has
// the kernel kill it when the process that started it dies, so a test binary killed by a timeout
// or a signal leaves no API server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
