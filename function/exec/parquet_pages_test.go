package exec

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRLEDecoder decodes hand-built RLE/bit-packed hybrid runs (Parquet's
// encodings spec) and checks that corrupt runs are errors.
func TestRLEDecoder(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		width   int
		n       int
		want    []int32
		corrupt bool
	}{
		{name: "RLE run", data: []byte{5 << 1, 7}, width: 3, n: 5, want: []int32{7, 7, 7, 7, 7}},
		{name: "two-byte RLE value", data: []byte{2 << 1, 0x34, 0x12}, width: 13, n: 2, want: []int32{0x1234, 0x1234}},
		// one group of eight 3-bit values 0..7, LSB first: 0b10001000, 0b11000110, 0b11111010
		{name: "bit-packed group", data: []byte{1<<1 | 1, 0x88, 0xC6, 0xFA}, width: 3, n: 8, want: []int32{0, 1, 2, 3, 4, 5, 6, 7}},
		{name: "RLE then bit-packed", data: []byte{2 << 1, 1, 1<<1 | 1, 0xFF}, width: 1, n: 10, want: []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{name: "width 0", data: []byte{4 << 1}, width: 0, n: 4, want: []int32{0, 0, 0, 0}},
		{name: "header cut", data: []byte{0x80}, width: 3, n: 1, corrupt: true},
		{name: "RLE value cut", data: []byte{3 << 1}, width: 9, n: 1, corrupt: true},
		{name: "bit-packed run past the data", data: []byte{4<<1 | 1, 0xFF}, width: 8, n: 9, corrupt: true},
		{name: "huge group count", data: []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1}, width: 5, n: 1, corrupt: true},
		{name: "runs end early", data: []byte{2 << 1, 1}, width: 1, n: 3, corrupt: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r rleDecoder
			r.reset(tc.data, tc.width)
			got := make([]int32, tc.n)
			err := r.decode(got)
			if tc.corrupt {
				if !errors.Is(err, errPageCorrupt) {
					t.Fatalf("err = %v, want a corrupt page", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// FuzzRLEDecoder: arbitrary bytes decode or fail, never panic.
func FuzzRLEDecoder(f *testing.F) {
	f.Add([]byte{5 << 1, 7}, uint8(3), uint16(5))
	f.Add([]byte{1<<1 | 1, 0x88, 0xC6, 0xFA}, uint8(3), uint16(8))
	f.Fuzz(func(t *testing.T, data []byte, width uint8, n uint16) {
		var r rleDecoder
		r.reset(data, int(width%33))
		out := make([]int32, int(n%4096))
		_ = r.decode(out)
		r.reset(data, int(width%17))
		lv := make([]int16, int(n%4096))
		_ = r.levels(lv)
	})
}

// TestRLERunOf checks the no-NULL shortcut of definition levels: it
// consumes n levels only when they lie in one RLE run of the value, and
// otherwise leaves the decoder where it was (the values decode the same
// afterwards).
func TestRLERunOf(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		width   int
		n       int
		v       int32
		all     bool
		rest    []int32 // what decodes after the call
		corrupt bool
	}{
		{name: "inside the run", data: []byte{5 << 1, 1}, width: 1, n: 3, v: 1, all: true, rest: []int32{1, 1}},
		{name: "the whole run", data: []byte{5 << 1, 1, 2 << 1, 0}, width: 1, n: 5, v: 1, all: true, rest: []int32{0, 0}},
		{name: "longer than the run", data: []byte{2 << 1, 1, 2 << 1, 0}, width: 1, n: 3, v: 1, rest: []int32{1, 1, 0, 0}},
		{name: "another value", data: []byte{4 << 1, 0}, width: 1, n: 2, v: 1, rest: []int32{0, 0, 0, 0}},
		{name: "bit-packed", data: []byte{1<<1 | 1, 0xFF}, width: 1, n: 8, v: 1, rest: []int32{1, 1, 1, 1, 1, 1, 1, 1}},
		{name: "zero levels", data: nil, width: 1, n: 0, v: 1, all: true},
		{name: "header cut", data: []byte{0x80}, width: 1, n: 1, v: 1, corrupt: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r rleDecoder
			r.reset(tc.data, tc.width)
			all, err := r.runOf(tc.n, tc.v)
			if tc.corrupt {
				if !errors.Is(err, errPageCorrupt) {
					t.Fatalf("err = %v, want a corrupt page", err)
				}
				return
			}
			if err != nil || all != tc.all {
				t.Fatalf("runOf = %v, %v; want %v", all, err, tc.all)
			}
			got := make([]int32, len(tc.rest))
			if err := r.decode(got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.rest) {
				t.Fatalf("then decoded %v, want %v", got, tc.rest)
			}
		})
	}
}

// TestRLEUnpack checks the bit-packed decoder's fast paths (whole groups
// of eight with one load, one load a value, byte by byte near the end)
// against a bit-at-a-time reference, for every width, runs cut at every
// length and read in pieces that leave it mid-group.
func TestRLEUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref := func(p []byte, w, first, n int) []int32 {
		out := make([]int32, n)
		for k := range out {
			var v int32
			for b := 0; b < w; b++ {
				at := (first+k)*w + b
				if p[at>>3]>>(at&7)&1 == 1 {
					v |= 1 << b
				}
			}
			out[k] = v
		}
		return out
	}
	for w := 1; w <= 32; w++ {
		for _, groups := range []int{1, 2, 3, 7, 40} {
			p := make([]byte, groups*w)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			for _, pieces := range [][]int{{groups * 8}, {1, groups*8 - 1}, {3, 5, groups*8 - 8}, {9, groups*8 - 9}} {
				if pieces[len(pieces)-1] < 0 {
					continue
				}
				r := rleDecoder{width: w, rle: false, left: groups * 8, packed: p}
				first := 0
				for _, n := range pieces {
					got := make([]int32, n)
					if err := r.unpack(got); err != nil {
						t.Fatalf("w=%d groups=%d pieces=%v: %v", w, groups, pieces, err)
					}
					if want := ref(p, w, first, n); !slices.Equal(got, want) {
						t.Fatalf("w=%d groups=%d pieces=%v from %d: got %v, want %v", w, groups, pieces, first, got, want)
					}
					first += n
				}
			}
		}
	}
}
