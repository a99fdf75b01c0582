package objstore_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// payloadProxy forwards to MinIO, records the payload hash header of every
// PUT and, when corrupt is set, flips one byte in the middle of the body.
type payloadProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	hashes  []string
	trailer []string
	corrupt bool
}

func newPayloadProxy(t *testing.T) *payloadProxy {
	t.Helper()
	target, err := url.Parse("http://" + server.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &payloadProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			p.mu.Lock()
			p.hashes = append(p.hashes, r.Header.Get("X-Amz-Content-Sha256"))
			p.trailer = append(p.trailer, r.Header.Get("X-Amz-Trailer"))
			corrupt := p.corrupt
			p.mu.Unlock()
			if corrupt && r.ContentLength > 0 {
				body, _ := io.ReadAll(r.Body)
				body[len(body)/2] ^= 0xff
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *payloadProxy) last() (hash, trailer string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hashes[len(p.hashes)-1], p.trailer[len(p.trailer)-1]
}

// TestUnsignedPayload checks what an upload sends over http: by default no
// SHA-256 of the body (UNSIGNED-PAYLOAD with a CRC32C trailer the store
// verifies), with SignPayload the streaming SHA-256 signature; and that a
// body corrupted on the way is refused in both modes, never stored.
func TestUnsignedPayload(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("sluice payload "), 8<<10) // 120 KiB
	cases := []struct {
		name        string
		sign        bool
		wantHash    string
		wantTrailer string
	}{
		{"unsigned", false, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "x-amz-checksum-crc32c"},
		{"signed", true, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			direct := newBucket(t, objstore.S3Config{Bucket: "payload-" + c.name})
			p := newPayloadProxy(t)
			b := newBucket(t, objstore.S3Config{Bucket: "payload-" + c.name, Endpoint: p.srv.URL, SignPayload: c.sign,
				Retry: objstore.RetryPolicy{Attempts: 1}})
			for _, put := range []struct {
				name string
				f    func(key string) error
			}{
				{"Put", func(key string) error { return b.Put(ctx, key, data) }},
				{"PutReader", func(key string) error { return b.PutReader(ctx, key, bytes.NewReader(data), int64(len(data))) }},
			} {
				key := "obj-" + put.name
				if err := put.f(key); err != nil {
					t.Fatalf("%s: %v", put.name, err)
				}
				hash, trailer := p.last()
				if hash != c.wantHash || !strings.EqualFold(trailer, c.wantTrailer) {
					t.Errorf("%s sent X-Amz-Content-Sha256 %q, X-Amz-Trailer %q; want %q, %q", put.name, hash, trailer, c.wantHash, c.wantTrailer)
				}
				got, err := direct.Get(ctx, key)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s: stored %d bytes (%v), want the %d sent", put.name, len(got), err, len(data))
				}
			}
			p.mu.Lock()
			p.corrupt = true
			p.mu.Unlock()
			if err := b.Put(ctx, "corrupt", data); err == nil {
				t.Fatal("a body corrupted in transit was accepted")
			}
			if _, err := direct.Get(ctx, "corrupt"); err == nil {
				t.Fatal("a body corrupted in transit was stored")
			}
		})
	}
}
