package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/flightsql"
	"github.com/sluicedb/sluice/coordinator/pgwire"
	"github.com/sluicedb/sluice/local"
)

// wireFlags are the Postgres wire protocol and Flight SQL front ends of
// `coordinator serve` and `local start`; their limits are knobs
// (knobs.go). pgDefault is the default
// --pg-addr ("" leaves the server off).
func wireFlags(pgDefault string) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "pg-addr", Value: pgDefault, EnvVars: []string{"SLUICE_PG_ADDR"}, Usage: "serve the Postgres wire protocol (psql, JDBC, BI tools) on this address (\"\": off)"},
		&cli.StringFlag{Name: "pg-user", Value: "sluice", EnvVars: []string{"SLUICE_PG_USER"}, Usage: "the user Postgres clients log in as"},
		&cli.StringFlag{Name: "pg-password", EnvVars: []string{"SLUICE_PG_PASSWORD"}, Usage: "their password (local start: random when unset; required on a non-loopback --pg-addr)"},
		&cli.StringFlag{Name: "pg-auth", Value: pgwire.AuthMD5, Usage: "password method: md5 or password (cleartext; use with TLS)"},
		&cli.StringFlag{Name: "pg-tls-cert", EnvVars: []string{"SLUICE_PG_TLS_CERT"}, Usage: "TLS certificate (PEM) for Postgres clients"},
		&cli.StringFlag{Name: "pg-tls-key", EnvVars: []string{"SLUICE_PG_TLS_KEY"}, Usage: "its key (PEM)"},
		&cli.BoolFlag{Name: "pg-require-tls", Usage: "refuse Postgres clients that do not use TLS"},
		&cli.BoolFlag{Name: "pg-allow-cleartext-without-tls", Usage: "with --pg-auth password, take passwords in cleartext over connections without TLS too (anyone on the path can read them)"},
		&cli.StringFlag{Name: "flight-addr", EnvVars: []string{"SLUICE_FLIGHT_ADDR"}, Usage: "serve Arrow Flight SQL on this address (\"\": off); it takes the API's --token"},
		&cli.StringFlag{Name: "flight-tls-cert", EnvVars: []string{"SLUICE_FLIGHT_TLS_CERT"}, Usage: "TLS certificate (PEM) for the Flight SQL port (grpc+tls://)"},
		&cli.StringFlag{Name: "flight-tls-key", EnvVars: []string{"SLUICE_FLIGHT_TLS_KEY"}, Usage: "its key (PEM)"},
	}, knobFlags(onFrontEnds, false)...) // the connection limits
}

// pgServer builds the Postgres wire protocol server the flags describe.
func pgServer(c *cli.Context, q *coordinator.Queries, log *slog.Logger) (*pgwire.Server, error) {
	auth := c.String("pg-auth")
	if auth != pgwire.AuthMD5 && auth != pgwire.AuthCleartext {
		return nil, fmt.Errorf("--pg-auth %q: want md5 or password", auth)
	}
	lim := defaultSettings()
	applyKnobs(c, onFrontEnds, &lim)
	srv := &pgwire.Server{Engine: q, User: c.String("pg-user"), Password: c.String("pg-password"), Auth: auth,
		RequireTLS: c.Bool("pg-require-tls"), AllowCleartextWithoutTLS: c.Bool("pg-allow-cleartext-without-tls"),
		StartupTimeout: lim.PGStartupTimeout, MaxConns: lim.PGMaxConns, Version: version(), Log: log}
	if srv.StartupTimeout <= 0 || srv.MaxConns <= 0 {
		return nil, errors.New("--pg-startup-timeout and --pg-max-conns must be positive")
	}
	cert, key := c.String("pg-tls-cert"), c.String("pg-tls-key")
	if (cert == "") != (key == "") {
		return nil, errors.New("--pg-tls-cert and --pg-tls-key go together")
	}
	if cert != "" {
		var err error
		if srv.TLS, err = pgwire.LoadTLS(cert, key); err != nil {
			return nil, err
		}
	} else if srv.RequireTLS {
		return nil, errors.New("--pg-require-tls needs --pg-tls-cert and --pg-tls-key")
	}
	if auth == pgwire.AuthCleartext && srv.TLS == nil && !srv.AllowCleartextWithoutTLS {
		return nil, errors.New("--pg-auth password sends passwords in cleartext: serve TLS (--pg-tls-cert, --pg-tls-key), use --pg-auth md5, or pass --pg-allow-cleartext-without-tls")
	}
	return srv, nil
}

// flightTLS loads the Flight SQL port's TLS configuration the flags name
// (nil: plain gRPC).
func flightTLS(c *cli.Context) (*tls.Config, error) {
	cert, key := c.String("flight-tls-cert"), c.String("flight-tls-key")
	if (cert == "") != (key == "") {
		return nil, errors.New("--flight-tls-cert and --flight-tls-key go together")
	}
	if cert == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("flight sql TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// flightScheme is the Flight SQL URI scheme for a port with or without TLS.
func flightScheme(conf *tls.Config) string {
	if conf != nil {
		return "grpc+tls"
	}
	return "grpc"
}

// warnPlaintextLogin warns when Postgres clients may log in over a
// connection without TLS on a non-loopback address.
func warnPlaintextLogin(log *slog.Logger, srv *pgwire.Server, addr string) {
	if srv.Password == "" || srv.RequireTLS || loopback(addr) {
		return
	}
	switch {
	case srv.Auth == pgwire.AuthCleartext && srv.AllowCleartextWithoutTLS:
		log.Warn("Postgres clients may send their password in cleartext without TLS (--pg-allow-cleartext-without-tls)", "addr", addr)
	case srv.TLS == nil:
		log.Warn("Postgres clients log in without TLS: the md5 exchange can be captured and the password guessed offline; set --pg-tls-cert, --pg-tls-key and --pg-require-tls", "addr", addr)
	default:
		log.Warn("Postgres clients may log in without TLS: set --pg-require-tls", "addr", addr)
	}
}

// startWire starts the front ends the flags ask for and returns a function
// that stops them.
func startWire(c *cli.Context, q *coordinator.Queries, token string, log *slog.Logger) (func(), error) {
	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	if addr := c.String("pg-addr"); addr != "" {
		if err := requireAuth(c, log, addr, "Postgres wire protocol", "set --pg-password (or SLUICE_PG_PASSWORD)", c.String("pg-password") != ""); err != nil {
			return nil, err
		}
		srv, err := pgServer(c, q, log)
		if err != nil {
			return nil, err
		}
		warnPlaintextLogin(log, srv, addr)
		got, s, err := srv.Listen(c.Context, addr)
		if err != nil {
			return nil, err
		}
		stops = append(stops, s)
		fmt.Printf("postgres wire protocol on %s (user %s)\n", got, srv.User)
	}
	if addr := c.String("flight-addr"); addr != "" {
		if err := requireAuth(c, log, addr, "Flight SQL service", "set --token (or SLUICE_TOKEN)", token != ""); err != nil {
			stop()
			return nil, err
		}
		conf, err := flightTLS(c)
		if err != nil {
			stop()
			return nil, err
		}
		srv := &flightsql.Server{Engine: q, Token: token, TLS: conf, Version: version(), Log: log}
		got, s, err := srv.Listen(addr)
		if err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, s)
		fmt.Printf("flight sql on %s://%s\n", flightScheme(conf), got)
	}
	return stop, nil
}

// startLocalWire starts the front ends of `local start` on the stack and
// prints how to connect.
func startLocalWire(c *cli.Context, st *local.Stack) error {
	if addr := c.String("pg-addr"); addr != "" {
		srv, err := pgServer(c, nil, nil) // checks the flags
		if err != nil {
			return err
		}
		pg, err := st.StartPG(c.Context, local.PGOptions{Addr: addr, User: c.String("pg-user"), Password: c.String("pg-password"),
			Auth: srv.Auth, TLS: srv.TLS, RequireTLS: srv.RequireTLS, AllowCleartextWithoutTLS: srv.AllowCleartextWithoutTLS,
			StartupTimeout: srv.StartupTimeout, MaxConns: srv.MaxConns, Version: version()})
		if err != nil {
			return err
		}
		host, port, _ := net.SplitHostPort(pg.Addr)
		sslmode := "disable"
		if srv.TLS != nil {
			sslmode = "require"
		}
		fmt.Printf("postgres:    %s (user %s)\n", pg.Addr, pg.User)
		fmt.Printf("\n# connect with psql:\n")
		fmt.Printf("PGPASSWORD=%s psql \"host=%s port=%s user=%s dbname=sluice sslmode=%s\"\n", pg.Password, host, port, pg.User, sslmode)
		fmt.Printf("export SLUICE_PG_USER=%s SLUICE_PG_PASSWORD=%s\n", pg.User, pg.Password)
	}
	if addr := c.String("flight-addr"); addr != "" {
		if !loopback(addr) {
			return fmt.Errorf("local start serves Flight SQL without a token: --flight-addr %s must be a loopback address", addr)
		}
		conf, err := flightTLS(c)
		if err != nil {
			return err
		}
		got, err := st.StartFlight(local.FlightOptions{Addr: addr, TLS: conf, Version: version()})
		if err != nil {
			return err
		}
		fmt.Printf("flight sql:  %s://%s\n", flightScheme(conf), got)
	}
	return nil
}
