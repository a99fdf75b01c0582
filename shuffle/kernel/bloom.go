package kernel

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
)

// Bloom is a split-block Bloom filter in the layout of Parquet's SBBF:
// blocks of eight 32-bit words (256 bits); a key picks one block from the
// high 32 bits of its hash and sets one bit in each of the block's words
// from the low 32 bits times eight odd salts. Keys are hashed as one
// column by Fold from HashSeed (HashKeys), so equal values of the Int64,
// Date and Decimal64 layouts hash alike on the side that builds the filter
// and the side that probes it. A filter has no false negatives; its false
// positive rate is about 1% at 10 bits per key.
type Bloom []uint32

var bloomSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// NewBloom returns an empty filter of size bytes (a power of two, at least
// one block of 32 bytes).
func NewBloom(size int) (Bloom, error) {
	if size < 32 || size&(size-1) != 0 {
		return nil, fmt.Errorf("bloom filter of %d bytes: want a power of two of at least 32", size)
	}
	return make(Bloom, size/4), nil
}

// BloomFromBytes reads a filter written by Bytes.
func BloomFromBytes(b []byte) (Bloom, error) {
	f, err := NewBloom(len(b))
	if err != nil {
		return nil, err
	}
	for i := range f {
		f[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return f, nil
}

// Bytes is the filter's little-endian words.
func (f Bloom) Bytes() []byte {
	out := make([]byte, 4*len(f))
	for i, w := range f {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

func (f Bloom) block(h uint64) int {
	return int(((h>>32)*uint64(len(f)/8))>>32) * 8
}

// Insert adds the key of hash h.
func (f Bloom) Insert(h uint64) {
	b, key := f.block(h), uint32(h)
	for i, s := range bloomSalt {
		f[b+i] |= 1 << ((key * s) >> 27)
	}
}

// MayContain reports whether the key of hash h may have been inserted
// (false: it certainly was not). The eight words are tested without a
// branch each: a filter shrunk to half its bits set fails the first test
// for about half the absent keys, a branch no predictor guesses, while
// the block's eight words share a cache line.
func (f Bloom) MayContain(h uint64) bool {
	b, key := f.block(h), uint32(h)
	w := f[b : b+8 : b+8]
	var miss uint32
	for i, s := range bloomSalt {
		miss |= ^w[i] & (1 << ((key * s) >> 27))
	}
	return miss == 0
}

// Or adds every key of o (a filter of the same size) to f.
func (f Bloom) Or(o Bloom) error {
	if len(o) != len(f) {
		return fmt.Errorf("merge bloom filters of %d and %d bytes", 4*len(f), 4*len(o))
	}
	for i, w := range o {
		f[i] |= w
	}
	return nil
}

// Fold halves the filter: block i of the result is the OR of blocks 2i
// and 2i+1, which is where the smaller filter's block choice
// ((h>>32)*blocks)>>32 puts every key of both, so no key is lost. A
// filter of one block is returned as is.
func (f Bloom) Fold() Bloom {
	if len(f) <= 8 {
		return f
	}
	out := make(Bloom, len(f)/2)
	for i := 0; i < len(out); i += 8 {
		for w := 0; w < 8; w++ {
			out[i+w] = f[2*i+w] | f[2*i+8+w]
		}
	}
	return out
}

// Shrink folds the filter while the folded one would have at most
// maxFill of its bits set: a filter sized to its keys, not to the
// largest build it could have held, stays in the probe's cache. Eight
// bits per key set about 55% of the bits at 10 bits per key.
func (f Bloom) Shrink(maxFill float64) Bloom {
	for len(f) > 8 {
		g := f.Fold()
		if g.Fill() > maxFill {
			break
		}
		f = g
	}
	return f
}

// Fill is the fraction of the filter's bits that are set.
func (f Bloom) Fill() float64 {
	n := 0
	for _, w := range f {
		n += bits.OnesCount32(w)
	}
	return float64(n) / float64(32*len(f))
}

// HashKeys sets h[i] to the filter hash of row i of a (h has a's length).
func HashKeys(a arrow.Array, h []uint64) error {
	for i := range h {
		h[i] = HashSeed
	}
	return Fold(a, h)
}
