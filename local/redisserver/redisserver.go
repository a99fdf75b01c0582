// Package redisserver starts a real redis-server process on a free loopback
// port, for tests and fault injection (restart mid-job).
package redisserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	opts Options
}

// Options configure StartWith.
type Options struct {
	// Persistent turns the append-only file on (fsync on every write), so
	// that Restart keeps the data.
	Persistent bool
	// Password requires AUTH (requirepass); URL then carries it.
	Password string
	// TLS, when set, serves TLS only (URL is rediss://): PEM files of the
	// server certificate and key, and of the CA that signed it (clients
	// are not asked for certificates).
	TLS *TLSFiles
}

// TLSFiles are PEM files.
type TLSFiles struct{ Cert, Key, CA string }

// Start runs redis-server without persistence on a free loopback port.
func Start(ctx context.Context) (*Server, error) { return StartWith(ctx, Options{}) }

// StartWith runs redis-server with opts on a free loopback port.
func StartWith(ctx context.Context, opts Options) (*Server, error) {
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
	s := &Server{dir: dir, port: port, Addr: "127.0.0.1:" + strconv.Itoa(port), opts: opts}
	scheme := "redis://"
	if opts.TLS != nil {
		scheme = "rediss://"
	}
	s.URL = scheme + s.Addr
	if opts.Password != "" {
		s.URL = scheme + ":" + opts.Password + "@" + s.Addr
	}
	if err := s.start(ctx, bin); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, bin string) error {
	aof := "no"
	if s.opts.Persistent {
		aof = "yes"
	}
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", aof, "--appendfsync", "always", "--dir", s.dir, "--protected-mode", "no"}
	if s.opts.Password != "" {
		args = append(args, "--requirepass", s.opts.Password)
	}
	if t := s.opts.TLS; t != nil {
		args[1] = "0" // no plain port
		args = append(args, "--tls-port", strconv.Itoa(s.port), "--tls-cert-file", t.Cert, "--tls-key-file", t.Key,
			"--tls-ca-cert-file", t.CA, "--tls-auth-clients", "no")
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	ro := &redis.Options{Addr: s.Addr, Password: s.opts.Password}
	if t := s.opts.TLS; t != nil {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			s.kill()
			return err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		ro.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	}
	rdb := redis.NewClient(ro)
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
// is lost, as with a crashed Redis without persistence, unless the server
// is Persistent).
func (s *Server) Restart(ctx context.Context) error {
	s.kill()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return ErrNotInstalled
	}
	return s.start(ctx, bin)
}

// Kill stops the server as a crash would, keeping its folder: it stays
// down until Restart (an outage).
func (s *Server) Kill() { s.kill() }

// Stop kills the server and removes its folder. It is safe to call twice.
func (s *Server) Stop() {
	s.kill()
	os.RemoveAll(s.dir)
}
