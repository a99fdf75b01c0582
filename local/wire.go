package local

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"time"

	"github.com/sluicedb/sluice/coordinator/flightsql"
	"github.com/sluicedb/sluice/coordinator/pgwire"
)

// PGOptions configure the stack's Postgres wire protocol server.
type PGOptions struct {
	Addr string // default a free loopback port
	// User and Password are the login; an empty Password gets a random one.
	User, Password string
	// Auth is the password method (pgwire.AuthMD5, the default, or
	// pgwire.AuthCleartext).
	Auth string
	// TLS, when set, is offered to clients (RequireTLS: demanded).
	TLS        *tls.Config
	RequireTLS bool
	// The connection limits and the cleartext opt-in of pgwire.Server (0,
	// false: its defaults).
	AllowCleartextWithoutTLS bool
	StartupTimeout           time.Duration
	MaxConns                 int
	Version                  string
}

// StartPG serves the Postgres wire protocol in front of the stack's
// coordinator (stopped by Close) and returns its address and login.
func (s *Stack) StartPG(ctx context.Context, o PGOptions) (PGOptions, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.User == "" {
		o.User = "sluice"
	}
	if o.Password == "" {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		o.Password = hex.EncodeToString(b)
	}
	srv := &pgwire.Server{Engine: s.Coordinator.Queries(), User: o.User, Password: o.Password, Auth: o.Auth,
		TLS: o.TLS, RequireTLS: o.RequireTLS, AllowCleartextWithoutTLS: o.AllowCleartextWithoutTLS,
		StartupTimeout: o.StartupTimeout, MaxConns: o.MaxConns, Version: o.Version, Log: s.opts.Log}
	addr, stop, err := srv.Listen(ctx, o.Addr)
	if err != nil {
		return o, err
	}
	o.Addr = addr
	s.stops = append(s.stops, stop)
	return o, nil
}

// FlightOptions configure the stack's Flight SQL server.
type FlightOptions struct {
	Addr string // default a free loopback port
	// Token, when set, is required as "authorization: Bearer TOKEN".
	Token string
	// TLS, when set, serves the port with TLS.
	TLS     *tls.Config
	Version string
}

// StartFlight serves Arrow Flight SQL in front of the stack's coordinator
// (stopped by Close) and returns its address.
func (s *Stack) StartFlight(o FlightOptions) (string, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	srv := &flightsql.Server{Engine: s.Coordinator.Queries(), Token: o.Token, TLS: o.TLS, Version: o.Version, Log: s.opts.Log}
	got, stop, err := srv.Listen(o.Addr)
	if err != nil {
		return "", err
	}
	s.stops = append(s.stops, stop)
	return got, nil
}
