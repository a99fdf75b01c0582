// Package minioserver starts and stops a real MinIO server process on a
// loopback port, for the local stack and for tests.
//
// The server runs in its own process group (so Stop also ends any children)
// and, on Linux, is killed by the kernel if the process that started it dies.
// Start waits until the server answers /minio/health/live; when it does not,
// no process is left behind and the error names the binary and the tail of
// the server's log.
package minioserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EnvBinary names the environment variable that points at the MinIO binary.
const EnvBinary = "SLUICE_MINIO_BIN"

// DefaultStartTimeout bounds how long Start waits for the server to
// become ready when Options.StartTimeout is zero. It is generous on
// purpose: on a loaded 2-core machine (load average 15) MinIO took tens
// of seconds to start, and a stack that gives up early fails every query.
const DefaultStartTimeout = 3 * time.Minute

// Options configure Start. Zero values get defaults.
type Options struct {
	// Bin is the MinIO binary; default FindBinary().
	Bin string
	// Dir is the data directory; default a new temporary directory that
	// Stop removes. A Dir given by the caller is never removed.
	Dir string
	// AccessKey and SecretKey are the root credentials; default random.
	AccessKey, SecretKey string
	// Env holds extra KEY=VALUE environment entries for the server.
	Env []string
	// StartTimeout bounds how long Start (and Restart) wait for the server
	// to become ready; default DefaultStartTimeout.
	StartTimeout time.Duration
}

// Server is a running MinIO server.
type Server struct {
	// Endpoint is host:port of the S3 API, on 127.0.0.1.
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
	// Dir is the data directory.
	Dir string
	// Bin is the binary that runs.
	Bin string
	// StartTimeout bounds each wait for the server to become ready.
	StartTimeout time.Duration
	// Startup is how long the last start took to become ready: a
	// measure of how loaded the machine is, for callers that size their
	// own deadlines by it.
	Startup time.Duration

	mu          sync.Mutex
	ownsDir     bool
	consoleAddr string
	env         []string
	cmd         *exec.Cmd
	done        chan struct{} // closed when cmd has been waited for
	log         *tailBuffer
	stopped     bool
	intended    *atomic.Bool // set by kill before it ends the current process
	died        chan error   // unexpected ends of the process (holds the latest)
}

// FindBinary returns the MinIO binary: $SLUICE_MINIO_BIN if set, else the
// first bin/minio found walking up from the working directory, else
// "minio" on $PATH.
func FindBinary() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("minio binary not found: $%s=%q is not an executable file", EnvBinary, p)
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; {
			p := filepath.Join(dir, "bin", "minio")
			if isExecutable(p) {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	return "", errors.New("minio binary not found: run `make bin/minio` (or set $" + EnvBinary + ")")
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// Start starts a MinIO server on a free loopback port and waits until it is
// live. On failure no process is left running and a temporary Dir is removed.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s := &Server{Bin: opts.Bin, Dir: opts.Dir, AccessKey: opts.AccessKey, SecretKey: opts.SecretKey, env: opts.Env,
		StartTimeout: opts.StartTimeout, died: make(chan error, 1)}
	if s.StartTimeout <= 0 {
		s.StartTimeout = DefaultStartTimeout
	}
	if s.Bin == "" {
		bin, err := FindBinary()
		if err != nil {
			return nil, err
		}
		s.Bin = bin
	}
	if abs, err := filepath.Abs(s.Bin); err == nil {
		s.Bin = abs
	}
	if s.AccessKey == "" {
		s.AccessKey = "sluice" + randHex(6)
	}
	if s.SecretKey == "" {
		s.SecretKey = randHex(20)
	}
	if len(s.AccessKey) < 3 || len(s.SecretKey) < 8 {
		return nil, errors.New("minioserver: access key needs >= 3 characters and secret key >= 8")
	}
	if s.Dir == "" {
		d, err := os.MkdirTemp("", "sluice-minio-")
		if err != nil {
			return nil, fmt.Errorf("minioserver: %w", err)
		}
		s.Dir, s.ownsDir = d, true
	} else if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("minioserver: %w", err)
	}

	// A port picked by listening on :0 and closing can be taken by someone
	// else before MinIO binds it; try a few times.
	var err error
	for try := 0; try < 3; try++ {
		var api, console int
		api, console, err = freePorts()
		if err != nil {
			break
		}
		s.Endpoint = net.JoinHostPort("127.0.0.1", strconv.Itoa(api))
		s.consoleAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(console))
		if err = s.launch(ctx); err == nil {
			return s, nil
		}
		if ctx.Err() != nil || !s.portConflict() {
			break
		}
	}
	if s.ownsDir {
		os.RemoveAll(s.Dir)
	}
	return nil, err
}

// Died receives how the process ended each time it ends without Stop, Kill
// or Restart having ended it: a crash, the kernel's OOM killer, a kill by
// someone else. The embedded stack watches it to say so and to start the
// server again. The channel holds the latest death only, so a caller that
// does not read it blocks nothing.
func (s *Server) Died() <-chan error { return s.died }

// PID is the process id of the running server, 0 when none runs.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// URL returns the http URL of the S3 API.
func (s *Server) URL() string { return "http://" + s.Endpoint }

// Logs returns the tail of the server's combined stdout and stderr.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// Stop kills the server, waits for it and removes a temporary Dir. It is
// idempotent.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	s.kill()
	if s.ownsDir {
		if err := os.RemoveAll(s.Dir); err != nil {
			return fmt.Errorf("minioserver: removing %s: %w", s.Dir, err)
		}
	}
	return nil
}

// Restart stops the process and starts it again on the same port and data
// directory, waiting until it is live again.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("minioserver: Restart after Stop")
	}
	s.kill()
	// The old socket may linger briefly; retry binding the same port.
	var err error
	for try := 0; try < 5; try++ {
		if err = s.launch(ctx); err == nil {
			return nil
		}
		if ctx.Err() != nil || !s.portConflict() {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// Kill stops the process without removing anything, as a crash would; the
// server stays down until Restart. For fault-injection tests.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kill()
}

// launch starts the process and waits for it to be live; on failure the
// process is killed. Called with mu held (or before s is shared).
func (s *Server) launch(ctx context.Context) error {
	s.log = newTailBuffer(64 << 10)
	cmd := exec.Command(s.Bin, "server",
		"--address", s.Endpoint, "--console-address", s.consoleAddr, s.Dir)
	cmd.Env = append(filterEnv(os.Environ()),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		"MINIO_CALLHOME_ENABLE=off",
	)
	cmd.Env = append(cmd.Env, s.env...)
	cmd.Stdout = s.log
	cmd.Stderr = s.log
	cmd.SysProcAttr = sysProcAttr()
	if err := startFromSpawner(cmd); err != nil {
		return fmt.Errorf("minioserver: starting %s: %w", s.Bin, err)
	}
	s.cmd = cmd
	done := make(chan struct{})
	s.done = done
	var waitErr error
	log := s.log
	intended, live := new(atomic.Bool), new(atomic.Bool)
	s.intended = intended
	go func() {
		waitErr = cmd.Wait()
		// Say in the log how the process ended (a crash, a kill by
		// someone else, or our own Stop).
		fmt.Fprintf(log, "\n[minioserver] process %d ended: %v\n", cmd.Process.Pid, waitErr)
		close(done)
		if intended.Load() || !live.Load() {
			return // ended on purpose, or before it was live (launch says so)
		}
		cause := waitErr
		if cause == nil {
			cause = errors.New("exit status 0")
		}
		select {
		case <-s.died: // keep only the latest death
		default:
		}
		select {
		case s.died <- fmt.Errorf("minio process %d ended unexpectedly: %w", cmd.Process.Pid, cause):
		default:
		}
	}()

	// Ready, not just live: MinIO answers /minio/health/live before its
	// object layer takes requests, and a bucket request then times out.
	began := time.Now()
	deadline := began.Add(s.StartTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://" + s.Endpoint + "/minio/health/ready"
	for {
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("minioserver: %s exited before becoming live (%v); log tail:\n%s", s.Bin, waitErr, s.log.String())
		case <-ctx.Done():
			s.kill()
			return fmt.Errorf("minioserver: waiting for %s: %w", s.Bin, ctx.Err())
		default:
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				live.Store(true)
				s.Startup = time.Since(began)
				return nil
			}
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("minioserver: %s not ready at %s after %v; log tail:\n%s", s.Bin, url, s.StartTimeout, s.log.String())
		}
		select {
		case <-done:
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill terminates the process group (TERM, then KILL after a grace period)
// and waits for the process. Called with mu held.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	s.intended.Store(true)
	terminate(s.cmd.Process.Pid, false)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		terminate(s.cmd.Process.Pid, true)
		<-s.done
	}
	// Children of the group (none expected) get a final KILL too.
	terminate(s.cmd.Process.Pid, true)
	s.cmd = nil
}

func (s *Server) portConflict() bool {
	l := strings.ToLower(s.log.String())
	return strings.Contains(l, "address already in use") || strings.Contains(l, "port") && strings.Contains(l, "in use")
}

// The kernel's parent-death signal (Pdeathsig) fires when the *thread*
// that started the child exits, not the process; Go may end a thread whose
// goroutine locked it. So servers are started from one goroutine that
// locks its thread and never returns.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func startFromSpawner(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd, done}
	return <-done
}

func freePorts() (int, int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < 2; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, fmt.Errorf("minioserver: no free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports[0], ports[1], nil
}

// filterEnv drops MINIO_* settings of the calling environment so that they
// cannot change the server's behaviour unnoticed.
func filterEnv(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, "MINIO_") {
			out = append(out, e)
		}
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	// Keep the message readable: the last 40 lines at most.
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
