package tests

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// s3FaultProxy sits between S3 clients and MinIO and injects the failures
// of a real object store: 503 SlowDown answers, connections reset without
// an answer, and latency. Requests are forwarded unchanged (the Host
// header too, so SigV4 signatures stay valid).
type s3FaultProxy struct {
	URL      string // http://127.0.0.1:port
	Endpoint string // 127.0.0.1:port

	// Rates, per request, changeable while running.
	slowDown atomic.Uint64 // float64 bits
	reset    atomic.Uint64
	latency  atomic.Uint64
	maxDelay atomic.Int64 // ns

	mu      sync.Mutex
	hang    chan struct{} // while set, requests wait until it is closed (a hung store)
	rng     *rand.Rand
	counts  map[string]*atomic.Int64
	srv     *http.Server
	forward *httputil.ReverseProxy
}

func newS3FaultProxy(t testing.TB, target string, seed uint64) *s3FaultProxy {
	t.Helper()
	u, err := url.Parse("http://" + target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &s3FaultProxy{Endpoint: ln.Addr().String(), rng: rand.New(rand.NewPCG(seed, seed+1)),
		counts: map[string]*atomic.Int64{"slowdown": {}, "reset": {}, "latency": {}, "forwarded": {}}}
	p.URL = "http://" + p.Endpoint
	p.forward = httputil.NewSingleHostReverseProxy(u)
	p.forward.Transport = &http.Transport{MaxIdleConnsPerHost: 64, ResponseHeaderTimeout: time.Minute}
	p.forward.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		// MinIO down (restarting): what a load balancer would answer.
		w.WriteHeader(http.StatusBadGateway)
	}
	p.srv = &http.Server{Handler: p}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

// set changes the fault rates.
func (p *s3FaultProxy) set(slowDown, reset, latency float64, maxDelay time.Duration) {
	p.slowDown.Store(f64bits(slowDown))
	p.reset.Store(f64bits(reset))
	p.latency.Store(f64bits(latency))
	p.maxDelay.Store(int64(maxDelay))
}

func (p *s3FaultProxy) String() string {
	return fmt.Sprintf("forwarded=%d slowdown=%d reset=%d latency=%d", p.counts["forwarded"].Load(),
		p.counts["slowdown"].Load(), p.counts["reset"].Load(), p.counts["latency"].Load())
}

func (p *s3FaultProxy) count(k string) int64 { return p.counts[k].Load() }

// hangAll makes the store hang, as a host that accepts connections and
// never answers: every request waits, unanswered, until resume.
func (p *s3FaultProxy) hangAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hang == nil {
		p.hang = make(chan struct{})
	}
}

// resume ends hangAll: the waiting requests go on.
func (p *s3FaultProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hang != nil {
		close(p.hang)
		p.hang = nil
	}
}

func (p *s3FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	a, b, c := p.rng.Float64(), p.rng.Float64(), p.rng.Float64()
	hang := p.hang
	p.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
			return
		}
	}
	if c < f64(p.latency.Load()) {
		p.counts["latency"].Add(1)
		time.Sleep(time.Duration(b * float64(p.maxDelay.Load())))
	}
	switch {
	case a < f64(p.slowDown.Load()):
		p.counts["slowdown"].Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><Resource>%s</Resource><RequestId>fault</RequestId></Error>`, r.URL.Path)
		return
	case a < f64(p.slowDown.Load())+f64(p.reset.Load()):
		p.counts["reset"].Add(1)
		// Reset the connection: no answer at all (RST with linger 0).
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				conn.Close()
				return
			}
		}
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	p.counts["forwarded"].Add(1)
	p.forward.ServeHTTP(w, r)
}

func f64bits(f float64) uint64 { return math.Float64bits(f) }
func f64(b uint64) float64     { return math.Float64frombits(b) }
