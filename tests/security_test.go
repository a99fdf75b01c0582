package tests

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local/redisserver"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// writeTLS writes a CA and a server certificate for 127.0.0.1 signed by
// it, as PEM files.
func writeTLS(t *testing.T) *redisserver.TLSFiles {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	files := &redisserver.TLSFiles{Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server.key"), CA: filepath.Join(dir, "ca.pem")}
	for path, block := range map[string]*pem.Block{
		files.Cert: {Type: "CERTIFICATE", Bytes: der},
		files.Key:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
		files.CA:   {Type: "CERTIFICATE", Bytes: caDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// recordingFunction is an HTTP function endpoint (the real handler, in
// this process) that keeps every TaskSpec it is sent.
type recordingFunction struct {
	mu    sync.Mutex
	specs [][]byte
	h     http.Handler
}

func (f *recordingFunction) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/invoke" {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.specs = append(f.specs, b)
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	f.h.ServeHTTP(w, r)
}

// TestSecurity runs a coordinator process against a redis-server that
// requires AUTH over TLS only (rediss://user:password@...), with HTTP
// functions and an API bearer token; then checks that no credential (the
// Redis password, the S3 secret and access keys) appears in a TaskSpec, a
// plan fragment, the job's Redis state or the coordinator's debug logs.
func TestSecurity(t *testing.T) {
	const redisPassword = "redis-pw-7c1e5a0f"
	tlsFiles := writeTLS(t)
	r := newRig(t, rigOptions{redisPassword: redisPassword, redisTLS: tlsFiles})
	if !strings.HasPrefix(r.redis.URL, "rediss://:"+redisPassword+"@") {
		t.Fatalf("redis URL %s", r.redis.URL)
	}
	ctx := context.Background()
	b, err := objstore.Open(ctx, objstore.Config{S3: r.s3Config(r.minio.Endpoint)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingFunction{h: function.HTTPHandler(function.NewRuntime(b, nil, nil))}
	fn := httptest.NewServer(rec)
	defer fn.Close()
	const token = "api-token-93b1"
	co := r.startCoordinator(t, "--log-level", "debug", "--token", token, "--function-url", fn.URL)

	// The API wants the token, but on /healthz.
	anon := coordinator.NewClient(co.URL, "")
	if _, err := anon.Jobs(ctx); err == nil || !strings.Contains(err.Error(), "bearer token") {
		t.Fatalf("API without the token: %v", err)
	}
	if _, err := httpGet(co.URL + "/metrics"); err == nil {
		t.Fatal("/metrics answered without the token")
	}
	if _, err := httpGet(co.URL + "/healthz"); err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	cl := coordinator.NewClient(co.URL, token)
	if _, err := cl.Status(ctx, "..%2f..%2fetc"); err == nil || !strings.Contains(err.Error(), "only [A-Za-z0-9_-]") {
		t.Fatalf("a job id with a path in it: %v", err)
	}
	q, want := queryByName(t, r.db, "q05")
	job := submit(t, cl, q.sql)
	compareRows(t, fetch(t, cl, job), want, q.ordered)

	secrets := map[string]string{"redis password": redisPassword, "S3 secret key": r.minio.SecretKey, "S3 access key": r.minio.AccessKey}
	check := func(what, text string) {
		t.Helper()
		for name, s := range secrets {
			if strings.Contains(text, s) {
				t.Fatalf("the %s appears in %s", name, what)
			}
		}
	}
	rec.mu.Lock()
	if len(rec.specs) == 0 {
		t.Fatal("no TaskSpec recorded")
	}
	for _, s := range rec.specs {
		check("a TaskSpec", string(s))
	}
	rec.mu.Unlock()
	plans, err := b.List(ctx, "jobs/"+job+"/plans/")
	if err != nil || len(plans) == 0 {
		t.Fatalf("plan fragments: %v %v", plans, err)
	}
	for _, p := range plans {
		data, _ := b.Get(ctx, p.Key)
		check("plan fragment "+p.Key, string(data))
	}
	check("the job's Redis state", r.jobKeys(job))
	co.kill()
	logs, _ := os.ReadFile(co.log)
	if !bytes.Contains(logs, []byte(`"job":"`+job+`"`)) {
		t.Fatal("no log line about the job written")
	}
	check("the coordinator's logs", string(logs))

	// A wrong password fails clearly, without printing the password.
	bad := strings.Replace(r.redis.URL, redisPassword, "wrong-pw-55", 1)
	out, errOut, code := runCLI(t, sluiceBin(t), t.TempDir(), append(r.env, "SLUICE_REDIS_URL="+bad), "coordinator", "serve", "--addr", "127.0.0.1:0")
	if code == 0 || strings.Contains(out+errOut, "wrong-pw-55") || !strings.Contains(strings.ToLower(errOut), "pass") {
		t.Fatalf("coordinator with a wrong Redis password: exit %d\n%s%s", code, out, errOut)
	}
}
