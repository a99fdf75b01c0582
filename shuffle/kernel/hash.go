// Package kernel holds the column kernels the shuffle and the executor
// share, written once: the per-type column hash walk (Fold), which is also
// the partitioning hash, a storage format pinned by TestHashGolden; the
// typed take/gather (Take, TakeNullable, TakeMulti, Builder); and the raw
// buffer access both use (Values, Offsets, Bits, Validity).
package kernel

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/zeebo/xxh3"
)

// The partitioning hash. It decides which partition of a shuffle a row goes
// to, so two processes (and two versions of sluice) that hash equal keys
// must get equal hashes: the definition below is part of the on-storage
// format and must not change (TestHashGolden pins it).
//
// For a row, with columns c1..ck:
//
//	h = HashSeed
//	for each column c: h = combine(h, value(c))
//	partition = h % count
//
// where combine(h, v) = mix(h ^ (v + 0x9E3779B97F4A7C15 + (h << 6) + (h >> 2)))
// and mix is MurmurHash3's 64-bit finalizer (fmix64). value(x) is:
//
//   - NULL (any type): NullHash
//   - integers (int8..int64, uint8..uint64 as their 64-bit two's complement),
//     Date32 (days, widened to int64), Decimal64 (the unscaled int64), Bool
//     (0 or 1): mix(uint64(x)). So equal values of the engine's Int64, Date
//     and Decimal types (same scale) hash alike.
//   - Timestamp (any unit; the int64 count of its unit): as an integer.
//   - Decimal128 (the unscaled two's complement 128-bit value, hi and lo
//     64-bit words): mix(lo) when the value fits an int64 (hi is lo's sign
//     extension), so it hashes as the same Decimal64 would; otherwise
//     mix(lo ^ mix(uint64(hi))).
//   - Float64 and Float32 (widened): mix(IEEE-754 bits), with -0 as +0 and
//     every NaN as the canonical quiet NaN 0x7FF8000000000000.
//   - String, LargeString, Binary: XXH3-64 of the bytes, seed 0.
//   - Dictionary of String, LargeString or Binary: the value of the entry
//     a row's index points at, so a dictionary-encoded column hashes as its
//     plain form (each entry is hashed once when the dictionary is no
//     longer than the column).
//   - List, Map, Struct: XXH3-64 of the value's key encoding (AppendKey),
//     seed 0. Equal nested values (NULLs inside equal) hash alike.
const (
	HashSeed uint64 = 0x5A17CE5EED5A17CE
	NullHash uint64 = 0x6A09E667F3BCC908
)

const golden = 0x9E3779B97F4A7C15

// Mix is MurmurHash3's fmix64 finalizer.
func Mix(x uint64) uint64 { return mix(x) }

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func combine(h, v uint64) uint64 {
	return mix(h ^ (v + golden + (h << 6) + (h >> 2)))
}

// Fold folds the values of column c into out (len(out) == c.Len()): for
// every row out[i] = combine(out[i], value(c[i])) as defined above. Folding
// the key columns of a row in order into HashSeed gives its partitioning
// hash; the executor folds into its own seed so its hash tables are not
// correlated with the partition a row came from. It returns an error for a
// type it cannot hash.
func Fold(c arrow.Array, out []uint64) error { return hashColumn(c, out) }

// Supported reports whether Fold can hash columns of type t.
func Supported(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DATE32, arrow.TIMESTAMP,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.NULL:
		return true
	case arrow.LIST, arrow.MAP, arrow.STRUCT:
		for _, c := range childTypes(t) {
			if !Supported(c) {
				return false
			}
		}
		return true
	}
	return false
}

type intValues interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// hashInts folds integer values; nulls get NullHash.
func hashInts[T intValues](a arrow.Array, vals []T, out []uint64) {
	if a.NullN() == 0 {
		for i, v := range vals {
			out[i] = combine(out[i], mix(uint64(int64(v))))
		}
		return
	}
	for i, v := range vals {
		if a.IsNull(i) {
			out[i] = combine(out[i], NullHash)
		} else {
			out[i] = combine(out[i], mix(uint64(int64(v))))
		}
	}
}

// floatBits returns the bits hashed for a float: -0 as +0, NaNs canonical.
func floatBits(f float64) uint64 {
	if f == 0 {
		return 0 // -0 == +0
	}
	if math.IsNaN(f) {
		return 0x7FF8000000000000
	}
	return math.Float64bits(f)
}

func hashColumn(c arrow.Array, out []uint64) error {
	switch a := c.(type) {
	case *array.Int64:
		hashInts(a, a.Int64Values(), out)
	case *array.Int32:
		hashInts(a, a.Int32Values(), out)
	case *array.Int16:
		hashInts(a, a.Int16Values(), out)
	case *array.Int8:
		hashInts(a, a.Int8Values(), out)
	case *array.Uint64:
		hashInts(a, a.Uint64Values(), out)
	case *array.Uint32:
		hashInts(a, a.Uint32Values(), out)
	case *array.Uint16:
		hashInts(a, a.Uint16Values(), out)
	case *array.Uint8:
		hashInts(a, a.Uint8Values(), out)
	case *array.Date32:
		hashInts(a, a.Date32Values(), out)
	case *array.Decimal64:
		hashInts(a, a.Values(), out)
	case *array.Timestamp:
		hashInts(a, a.TimestampValues(), out)
	case *array.Decimal128:
		for i, v := range a.Values() {
			if a.IsNull(i) {
				out[i] = combine(out[i], NullHash)
				continue
			}
			lo, hi := v.LowBits(), v.HighBits()
			if hi == int64(lo)>>63 {
				out[i] = combine(out[i], mix(lo))
			} else {
				out[i] = combine(out[i], mix(lo^mix(uint64(hi))))
			}
		}
	case *array.Float64:
		vals := a.Float64Values()
		for i, v := range vals {
			if a.IsNull(i) {
				out[i] = combine(out[i], NullHash)
			} else {
				out[i] = combine(out[i], mix(floatBits(v)))
			}
		}
	case *array.Float32:
		vals := a.Float32Values()
		for i, v := range vals {
			if a.IsNull(i) {
				out[i] = combine(out[i], NullHash)
			} else {
				out[i] = combine(out[i], mix(floatBits(float64(v))))
			}
		}
	case *array.Boolean:
		for i := range out {
			switch {
			case a.IsNull(i):
				out[i] = combine(out[i], NullHash)
			case a.Value(i):
				out[i] = combine(out[i], mix(1))
			default:
				out[i] = combine(out[i], mix(0))
			}
		}
	case *array.String:
		hasNulls := a.NullN() > 0
		for i := range out {
			if hasNulls && a.IsNull(i) {
				out[i] = combine(out[i], NullHash)
			} else {
				out[i] = combine(out[i], xxh3.HashString(a.Value(i)))
			}
		}
	case *array.LargeString:
		hasNulls := a.NullN() > 0
		for i := range out {
			if hasNulls && a.IsNull(i) {
				out[i] = combine(out[i], NullHash)
			} else {
				out[i] = combine(out[i], xxh3.HashString(a.Value(i)))
			}
		}
	case *array.Binary:
		hasNulls := a.NullN() > 0
		for i := range out {
			if hasNulls && a.IsNull(i) {
				out[i] = combine(out[i], NullHash)
			} else {
				out[i] = combine(out[i], xxh3.Hash(a.Value(i)))
			}
		}
	case *array.Null:
		for i := range out {
			out[i] = combine(out[i], NullHash)
		}
	case *array.Dictionary:
		return hashDictionary(a, out)
	case *array.List, *array.Map, *array.Struct:
		var buf []byte
		var err error
		for i := range out {
			if a.IsNull(i) {
				out[i] = combine(out[i], NullHash)
				continue
			}
			if buf, err = AppendKey(buf[:0], a, i); err != nil {
				return err
			}
			out[i] = combine(out[i], xxh3.Hash(buf))
		}
	default:
		return fmt.Errorf("cannot hash type %s", c.DataType())
	}
	return nil
}

// hashDictionary folds a dictionary-encoded String, LargeString or Binary
// column: value(row) is the hash of the entry its index points at (NULL
// index or NULL entry: NullHash), exactly as for the plain column.
func hashDictionary(a *array.Dictionary, out []uint64) error {
	dict := a.Dictionary()
	var entry func(e int) uint64
	switch d := dict.(type) {
	case *array.String:
		entry = func(e int) uint64 { return xxh3.HashString(d.Value(e)) }
	case *array.LargeString:
		entry = func(e int) uint64 { return xxh3.HashString(d.Value(e)) }
	case *array.Binary:
		entry = func(e int) uint64 { return xxh3.Hash(d.Value(e)) }
	default:
		return fmt.Errorf("cannot hash type %s", a.DataType())
	}
	idx, ok := a.Indices().(*array.Int32)
	if !ok {
		return fmt.Errorf("cannot hash type %s (indices not int32)", a.DataType())
	}
	ix := idx.Int32Values()
	nd := dict.Len()
	value := func(e int32) uint64 {
		if dict.IsNull(int(e)) {
			return NullHash
		}
		return entry(int(e))
	}
	hasNulls := a.NullN() > 0
	if nd > len(out) {
		// A dictionary longer than the column: hash the rows' entries.
		for i := range out {
			e := ix[i]
			switch {
			case hasNulls && a.IsNull(i):
				out[i] = combine(out[i], NullHash)
			case e < 0 || int(e) >= nd:
				return fmt.Errorf("dictionary index %d out of range (%d values)", e, nd)
			default:
				out[i] = combine(out[i], value(e))
			}
		}
		return nil
	}
	vh := make([]uint64, nd)
	for e := range vh {
		vh[e] = value(int32(e))
	}
	for i := range out {
		e := ix[i]
		switch {
		case hasNulls && a.IsNull(i):
			out[i] = combine(out[i], NullHash)
		case e < 0 || int(e) >= nd:
			return fmt.Errorf("dictionary index %d out of range (%d values)", e, nd)
		default:
			out[i] = combine(out[i], vh[e])
		}
	}
	return nil
}
