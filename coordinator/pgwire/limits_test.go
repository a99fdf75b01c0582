package pgwire

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// listen serves s on a loopback port until the test ends.
func listen(t *testing.T, s *Server) string {
	t.Helper()
	if s.Engine == nil {
		s.Engine = &fakeEngine{rows: 1}
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	addr, stop, err := s.Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// startup connects to addr and sends a startup message as user u.
func startup(t *testing.T, addr string) (*pgproto3.Frontend, net.Conn) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	return fe, nc
}

// until receives messages until one of type T, failing on an ErrorResponse
// unless T is one.
func until[T pgproto3.BackendMessage](t *testing.T, fe *pgproto3.Frontend) T {
	t.Helper()
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if m, ok := msg.(T); ok {
			return m
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			t.Fatalf("error %s: %s", e.Code, e.Message)
		}
	}
}

// fatalThenClosed receives a FATAL ErrorResponse with code and then the end
// of the connection.
func fatalThenClosed(t *testing.T, fe *pgproto3.Frontend, code string) *pgproto3.ErrorResponse {
	t.Helper()
	e := until[*pgproto3.ErrorResponse](t, fe)
	if e.Code != code || e.Severity != "FATAL" {
		t.Fatalf("got %s %s %q, want FATAL %s", e.Severity, e.Code, e.Message, code)
	}
	if msg, err := fe.Receive(); err == nil {
		t.Fatalf("the connection stays open after the error: %T", msg)
	}
	return e
}

// claim sends the header of a message of type typ claiming n body bytes,
// and a few of them.
func claim(t *testing.T, nc net.Conn, typ byte, n uint32) {
	t.Helper()
	hdr := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], n+4)
	if _, err := nc.Write(append(hdr, "md5abc"...)); err != nil {
		t.Fatal(err)
	}
}

// TestMessageSizeBeforeLogin: a client that has not logged in cannot make
// the server reserve what it claims (issue 30: eight connections claiming
// 2 GiB each): a password message over 10,000 bytes ends the connection
// with 54000 before its body is read.
func TestMessageSizeBeforeLogin(t *testing.T) {
	addr := listen(t, &Server{User: "u", Password: "pw"})
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 8 {
		fe, nc := startup(t, addr)
		until[*pgproto3.AuthenticationMD5Password](t, fe)
		claim(t, nc, 'p', 1<<31-16)
		e := fatalThenClosed(t, fe, "54000")
		if !strings.Contains(e.Message, "SL090") || !strings.Contains(e.Message, "limit of 10000 bytes") {
			t.Fatalf("message %q", e.Message)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("the server allocated %d MiB for the claims", grew>>20)
	}
	// A real login still works.
	fe, nc := startup(t, addr)
	m := until[*pgproto3.AuthenticationMD5Password](t, fe)
	fe.Send(&pgproto3.PasswordMessage{Password: md5Password("u", "pw", m.Salt)})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	until[*pgproto3.ReadyForQuery](t, fe)
	nc.Close()
}

// TestMessageSizeAfterLogin: after login a message may be twice
// MaxSQLBytes plus 64 KiB; a larger one ends the connection with 54000
// without being read.
func TestMessageSizeAfterLogin(t *testing.T) {
	addr := listen(t, &Server{MaxSQLBytes: 1000})
	fe, nc := startup(t, addr)
	until[*pgproto3.ReadyForQuery](t, fe)
	fe.Send(&pgproto3.Query{String: "select 1 -- " + strings.Repeat("x", 2000)})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	until[*pgproto3.ReadyForQuery](t, fe) // under the message limit: the engine's to judge
	claim(t, nc, 'Q', 100<<20)
	e := until[*pgproto3.ErrorResponse](t, fe)
	if e.Code != "54000" || e.Severity != "FATAL" {
		t.Fatalf("got %s %s %q, want FATAL 54000", e.Severity, e.Code, e.Message)
	}
	// The server reads and drops the rest of the message (so that a
	// client still sending it sees the error, not a reset) until the
	// client stops.
	if err := nc.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if msg, err := fe.Receive(); err == nil {
		t.Fatalf("the connection stays open after the error: %T", msg)
	}
	if want := fmt.Sprintf("limit of %d bytes", 2*1000+64<<10); !strings.Contains(e.Message, want) {
		t.Fatalf("message %q does not say %q", e.Message, want)
	}
}

// TestStartupTimeout: a client that connects and says nothing, or starts
// and never sends its password, is dropped after StartupTimeout.
func TestStartupTimeout(t *testing.T) {
	addr := listen(t, &Server{User: "u", Password: "pw", StartupTimeout: 300 * time.Millisecond})
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	fe, nc := startup(t, addr)
	until[*pgproto3.AuthenticationMD5Password](t, fe)
	start := time.Now()
	for _, c := range []net.Conn{silent, nc} {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Fatalf("read: %v (the server did not close the connection)", err)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("dropped after %v", el)
	}
}

// TestMaxConns: connections over MaxConns, logged in or not, are told
// 53300 and closed; once one ends, a new one is served.
func TestMaxConns(t *testing.T) {
	addr := listen(t, &Server{MaxConns: 2})
	a, _ := startup(t, addr)
	until[*pgproto3.ReadyForQuery](t, a)
	silent, err := net.Dial("tcp", addr) // not logged in: counts too
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server has accepted it
	over, _ := startup(t, addr)
	e := fatalThenClosed(t, over, "53300")
	if !strings.Contains(e.Message, "too many clients") {
		t.Fatalf("message %q", e.Message)
	}
	silent.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fe, nc := startup(t, addr)
		msg, err := fe.Receive()
		if err == nil {
			if _, ok := msg.(*pgproto3.ErrorResponse); !ok {
				break
			}
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// flakyListener fails its first Accept calls as a process out of file
// descriptors does.
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptRetries: temporary accept errors (EMFILE) do not end the
// accept loop (issue 30: at the descriptor limit pgwire stopped accepting
// for good); it backs off and serves the next client.
func TestAcceptRetries(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: ln}
	fl.fails.Store(6)
	s := &Server{Engine: &fakeEngine{rows: 1}, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, fl) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	fe, _ := startup(t, ln.Addr().String())
	until[*pgproto3.ReadyForQuery](t, fe)
	// A permanent error still ends it.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	ln2.Close()
	if err := (&Server{Engine: &fakeEngine{}}).Serve(context.Background(), &brokenListener{ln2}); err == nil {
		t.Fatal("a permanent accept error did not end Serve")
	}
}

type brokenListener struct{ net.Listener }

func (brokenListener) Accept() (net.Conn, error) { return nil, errors.New("broken") }

const fdChildEnv = "PGWIRE_FD_LIMIT_CHILD"

// TestAcceptAtDescriptorLimit runs a server in a child process limited to
// 64 file descriptors, opens more connections than that, closes them, and
// logs in: the server is still accepting.
func TestAcceptAtDescriptorLimit(t *testing.T) {
	if os.Getenv(fdChildEnv) != "" {
		s := &Server{Engine: &fakeEngine{rows: 1}, MaxConns: 1000, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
		addr, stop, err := s.Listen(context.Background(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		fmt.Println("ADDR", addr)
		_, _ = io.Copy(io.Discard, os.Stdin) // until the parent is done
		return
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set the descriptor limit with")
	}
	cmd := exec.Command(sh, "-c", `ulimit -n 64 && exec "$0" -test.run '^TestAcceptAtDescriptorLimit$' -test.count=1`, os.Args[0])
	cmd.Env = append(os.Environ(), fdChildEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &syncBuffer{} // written by exec's copying goroutine while the test reads it
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	addr := ""
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatalf("the child did not start:\n%s", stderr.String())
	}
	var conns []net.Conn
	for range 100 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		conns = append(conns, nc)
	}
	time.Sleep(500 * time.Millisecond) // the child runs out of descriptors
	for _, nc := range conns {
		nc.Close()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = nc.SetDeadline(time.Now().Add(3 * time.Second))
			fe := pgproto3.NewFrontend(nc, nc)
			fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u"}})
			_ = fe.Flush()
			ok := false
			for {
				msg, err := fe.Receive()
				if err != nil {
					break
				}
				if _, ok = msg.(*pgproto3.ReadyForQuery); ok {
					break
				}
			}
			nc.Close()
			if ok {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server stopped accepting at the descriptor limit:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "too many open files") {
		t.Logf("the child never hit the descriptor limit (%d connections):\n%s", len(conns), stderr.String())
	}
}

// TestCleartextNeedsTLS: cleartext password auth is refused on a
// connection without TLS unless AllowCleartextWithoutTLS; over TLS it works.
func TestCleartextNeedsTLS(t *testing.T) {
	cases := []struct {
		name  string
		allow bool
		tls   bool
		want  string // "ok" or the SQLSTATE
	}{
		{"plain refused", false, false, "28000"},
		{"plain allowed", true, false, "ok"},
		{"tls", false, true, "ok"},
	}
	cfg := selfSignedTLS(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr := listen(t, &Server{User: "u", Password: "pw", Auth: AuthCleartext, TLS: cfg, AllowCleartextWithoutTLS: c.allow})
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			if c.tls {
				fe := pgproto3.NewFrontend(nc, nc)
				fe.Send(&pgproto3.SSLRequest{})
				_ = fe.Flush()
				b := make([]byte, 1)
				if _, err := io.ReadFull(nc, b); err != nil || b[0] != 'S' {
					t.Fatalf("SSL answer %q %v", b, err)
				}
				tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true})
				if err := tc.Handshake(); err != nil {
					t.Fatal(err)
				}
				nc = tc
			}
			fe := pgproto3.NewFrontend(nc, nc)
			fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u"}})
			_ = fe.Flush()
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				if m.Code != c.want {
					t.Fatalf("got %s %s, want %s", m.Code, m.Message, c.want)
				}
			case *pgproto3.AuthenticationCleartextPassword:
				if c.want != "ok" {
					t.Fatalf("asked for a cleartext password, want %s", c.want)
				}
				fe.Send(&pgproto3.PasswordMessage{Password: "pw"})
				_ = fe.Flush()
				until[*pgproto3.ReadyForQuery](t, fe)
			default:
				t.Fatalf("got %T", msg)
			}
		})
	}
}

// selfSignedTLS is a server TLS config with a throwaway certificate.
func selfSignedTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// syncBuffer is a strings.Builder safe for one writer and readers on
// other goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
