//go:build unix

package minioserver

import "syscall"

// terminate signals the process group of pid: SIGTERM, or SIGKILL if hard.
func terminate(pid int, hard bool) {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	// A negative pid addresses the process group (the server was started
	// with Setpgid, so its group id is its pid).
	_ = syscall.Kill(-pid, sig)
}
