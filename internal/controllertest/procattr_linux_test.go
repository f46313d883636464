package controllertest

import "syscall"

// sysProcAttr has the kernel kill a controller when the test binary that started it dies (a
// timeout, a signal), as internal/offlinekube does for the control plane.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
