//go:build linux

package minioserver

import "syscall"

// sysProcAttr puts the server in its own process group and asks the kernel
// to kill it if the process that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
