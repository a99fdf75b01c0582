package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator/pgwire"
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

// TestPGServerFlags: the Postgres front end's flags: cleartext passwords
// need TLS or the explicit opt-in, the connection limits are passed on
// and must be positive, and logging in without TLS on a non-loopback
// address is warned about.
func TestPGServerFlags(t *testing.T) {
	cert, key := writeCert(t)
	cases := []struct {
		name string
		args []string
		err  string // "" when it must start
		warn string // in the log for a non-loopback address
	}{
		{"md5 default", nil, "", "md5 exchange can be captured"},
		{"cleartext without TLS", []string{"--pg-auth", "password"}, "sends passwords in cleartext", ""},
		{"cleartext opted in", []string{"--pg-auth", "password", "--pg-allow-cleartext-without-tls"}, "", "in cleartext without TLS"},
		{"cleartext with TLS", []string{"--pg-auth", "password", "--pg-tls-cert", cert, "--pg-tls-key", key}, "", "--pg-require-tls"},
		{"TLS required", []string{"--pg-tls-cert", cert, "--pg-tls-key", key, "--pg-require-tls"}, "", ""},
		{"limits", []string{"--pg-startup-timeout", "5s", "--pg-max-conns", "7"}, "", "md5"},
		{"no connections", []string{"--pg-max-conns", "0"}, "must be positive", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var srv *pgwire.Server
			var perr error
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			app := &cli.App{Flags: wireFlags(""), Action: func(cc *cli.Context) error {
				srv, perr = pgServer(cc, nil, log)
				if perr == nil {
					warnPlaintextLogin(log, srv, "0.0.0.0:5432")
				}
				return nil
			}}
			if err := app.Run(append([]string{"sluice", "--pg-password", "pw"}, c.args...)); err != nil {
				t.Fatal(err)
			}
			if c.err != "" {
				if perr == nil || !strings.Contains(perr.Error(), c.err) {
					t.Fatalf("got %v, want an error containing %q", perr, c.err)
				}
				return
			}
			if perr != nil {
				t.Fatal(perr)
			}
			if c.warn == "" && logs.Len() > 0 || c.warn != "" && !strings.Contains(logs.String(), c.warn) {
				t.Fatalf("log %q, want a warning containing %q", logs.String(), c.warn)
			}
			if c.name == "limits" && (srv.MaxConns != 7 || srv.StartupTimeout.String() != "5s") {
				t.Fatalf("limits not passed on: %d %v", srv.MaxConns, srv.StartupTimeout)
			}
		})
	}
}

// writeCert writes a self-signed certificate and its key as PEM files.
func writeCert(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}
