package pgwire

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// Listen starts s on addr in the background and returns the address it
// listens on and a function that stops it (and waits for its connections).
func (s *Server) Listen(ctx context.Context, addr string) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("postgres wire protocol listen on %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Serve(ctx, ln); err != nil && s.Log != nil {
			s.Log.Error("pgwire serve", "err", err)
		}
	}()
	return ln.Addr().String(), func() { cancel(); <-done }, nil
}

// LoadTLS reads a certificate and key (PEM files) for the server.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("pgwire TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
