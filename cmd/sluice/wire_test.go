package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// TestFlightTLS: --flight-tls-cert and --flight-tls-key go together, load
// a PEM pair, and none is plain gRPC.
func TestFlightTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		args    []string
		wantTLS bool
		wantErr string
	}{
		{"none", nil, false, ""},
		{"both", []string{"--flight-tls-cert", cert, "--flight-tls-key", keyFile}, true, ""},
		{"cert only", []string{"--flight-tls-cert", cert}, false, "go together"},
		{"key as cert", []string{"--flight-tls-cert", keyFile, "--flight-tls-key", keyFile}, false, "flight sql TLS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			for _, f := range wireFlags("") {
				if err := f.Apply(fs); err != nil {
					t.Fatal(err)
				}
			}
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			conf, err := flightTLS(cli.NewContext(cli.NewApp(), fs, nil))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("%v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || (conf != nil) != c.wantTLS {
				t.Fatalf("conf %v, err %v", conf, err)
			}
			if want := map[bool]string{true: "grpc+tls", false: "grpc"}[c.wantTLS]; flightScheme(conf) != want {
				t.Fatalf("scheme %s, want %s", flightScheme(conf), want)
			}
		})
	}
}
