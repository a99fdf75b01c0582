package objstore_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// TestSegments: a sequence of pieces of other readers reads as their
// concatenation, and Cut splits it at any byte (inside a piece or at its
// edge) without changing a byte.
func TestSegments(t *testing.T) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i*31 + i/7)
	}
	for _, c := range []struct {
		name   string
		pieces []int
		cuts   []int64
	}{
		{"one piece", []int{1000}, []int64{1, 499, 500}},
		{"at edges", []int{100, 200, 700}, []int64{100, 200, 700}},
		{"inside pieces", []int{100, 200, 700}, []int64{50, 300, 1, 649}},
		{"everything", []int{10, 990}, []int64{1000}},
		{"nothing cut", []int{10, 990}, []int64{0, 1000}},
		{"single bytes", []int{1, 1, 1, 997}, []int64{1, 1, 1, 1, 996}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s objstore.Segments
			off := 0
			for _, n := range c.pieces {
				// Each piece at an offset of a reader of its own.
				buf := append([]byte("xyz"), data[off:off+n]...)
				s.Add(io.NewSectionReader(bytes.NewReader(buf), 3, int64(n)), int64(n))
				off += n
			}
			if s.Size() != int64(len(data)) {
				t.Fatalf("Size %d, want %d", s.Size(), len(data))
			}
			all, err := io.ReadAll(s.Reader())
			if err != nil || !bytes.Equal(all, data) {
				t.Fatalf("ReadAll: %d bytes, %v", len(all), err)
			}
			// Ranged reads across pieces, and past the end.
			p := make([]byte, 123)
			for o := int64(0); o < int64(len(data)); o += 77 {
				n, err := s.ReadAt(p, o)
				want := data[o:min(o+123, int64(len(data)))]
				if n != len(want) || !bytes.Equal(p[:n], want) || (n < len(p)) != (err == io.EOF) {
					t.Fatalf("ReadAt(%d) = %d, %v", o, n, err)
				}
			}
			var got []byte
			for _, n := range c.cuts {
				head := s.Cut(n)
				if head.Size() != n {
					t.Fatalf("Cut(%d): %d bytes", n, head.Size())
				}
				b, err := io.ReadAll(head.Reader())
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, b...)
			}
			rest, err := io.ReadAll(s.Reader())
			if err != nil {
				t.Fatal(err)
			}
			if got = append(got, rest...); !bytes.Equal(got, data) {
				t.Fatalf("cut pieces put together differ from the data (%d bytes)", len(got))
			}
		})
	}
}
