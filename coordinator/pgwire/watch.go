package pgwire

import (
	"context"
	"io"
	"net"
)

// watchedReader reads a client connection ahead of the protocol loop, so
// that a client that goes away is noticed while a query runs (the loop
// reads nothing then): a read error or EOF cancels the connection's
// context, which cancels the running query and so its job. Reads are
// handed over in chunks through a small queue; a client pipelining more
// than that is back-pressured as by the socket itself.
type watchedReader struct {
	chunks chan []byte
	cur    []byte
	err    error // set before chunks is closed
}

// watchConn starts reading nc ahead; gone is called once when nc fails or
// ends.
func watchConn(ctx context.Context, nc net.Conn, gone func()) *watchedReader {
	w := &watchedReader{chunks: make(chan []byte, 16)}
	go func() {
		defer close(w.chunks)
		defer gone()
		for {
			buf := make([]byte, 8192)
			n, err := nc.Read(buf)
			if n > 0 {
				select {
				case w.chunks <- buf[:n]:
				case <-ctx.Done():
					w.err = ctx.Err()
					return
				}
			}
			if err != nil {
				w.err = err
				return
			}
		}
	}()
	return w
}

func (w *watchedReader) Read(p []byte) (int, error) {
	if len(w.cur) == 0 {
		c, ok := <-w.chunks
		if !ok {
			if w.err == nil {
				return 0, io.EOF
			}
			return 0, w.err
		}
		w.cur = c
	}
	n := copy(p, w.cur)
	w.cur = w.cur[n:]
	return n, nil
}
