// Package redisserver starts a real redis-server process on a free loopback
// port, for tests and fault injection (restart mid-job).
package redisserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotInstalled is returned when no redis-server binary is on PATH.
var ErrNotInstalled = errors.New("redis-server not found on PATH (apt-get install redis-server)")

// Server is a running redis-server.
type Server struct {
	Addr string
	URL  string
	dir  string
	port int
	cmd  *exec.Cmd
}

// Start runs redis-server without persistence on a free loopback port.
func Start(ctx context.Context) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	dir, err := os.MkdirTemp("", "sluice-redis-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{dir: dir, port: port, Addr: "127.0.0.1:" + strconv.Itoa(port)}
	s.URL = "redis://" + s.Addr
	if err := s.start(ctx, bin); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, bin string) error {
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--protected-mode", "no")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if rdb.Ping(ctx).Err() == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	return fmt.Errorf("redis-server on %s did not answer within 10s", s.Addr)
}

func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart kills the server and starts it again on the same port (its data
// is lost, as with a crashed Redis without persistence).
func (s *Server) Restart(ctx context.Context) error {
	s.kill()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return ErrNotInstalled
	}
	return s.start(ctx, bin)
}

// Stop kills the server and removes its folder. It is safe to call twice.
func (s *Server) Stop() {
	s.kill()
	os.RemoveAll(s.dir)
}
