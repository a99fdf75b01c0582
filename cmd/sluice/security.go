package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redact"
)

// loopback reports whether a listen address is reachable only from this
// host (127.0.0.0/8, ::1, localhost). An empty host is every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// requireAuth refuses to listen on a non-loopback address without
// authentication, unless --insecure-no-auth says so.
func requireAuth(c *cli.Context, log *slog.Logger, addr, what, how string, authenticated bool) error {
	if authenticated || loopback(addr) {
		return nil
	}
	if !c.Bool("insecure-no-auth") {
		return fmt.Errorf("refusing to serve the %s on %s, a non-loopback address, without authentication: %s, or pass --insecure-no-auth", what, addr, how)
	}
	log.Warn("serving without authentication on a non-loopback address (--insecure-no-auth)", "what", what, "addr", addr)
	return nil
}

func insecureFlag() cli.Flag {
	return &cli.BoolFlag{Name: "insecure-no-auth", Usage: "allow listening on a non-loopback address without authentication (trusted networks only)"}
}

// functionSecret is the shared secret of coordinator and HTTP functions,
// from the environment only (a flag would show in ps).
func functionSecret() []byte {
	return []byte(os.Getenv(function.SecretEnv))
}

// redisError turns an error about a Redis URL into one without its
// password, even when the URL does not parse.
func redisError(url string, err error) error {
	return redact.Err(err, redact.URLPassword(url))
}

// redactingLogger wraps log so that every message and attribute is
// redacted.
func redactingLogger(log *slog.Logger) *slog.Logger { return slog.New(redact.Handler(log.Handler())) }
