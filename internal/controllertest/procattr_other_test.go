//go:build !linux

package controllertest

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
