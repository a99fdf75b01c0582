package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// A page decoder for the late path's fixed-width columns.
//
// arrow-go's column chunk readers decode a dictionary page lazily: every
// batch checks its largest index and appends the dictionary entries up to
// it, one growing slice at a time, and the indices go through a generic
// RLE decoder and a per-batch validity check. On TPC-H's lineitem that
// was most of the scan's CPU for a dictionary-encoded BIGINT column (about
// 45 ns a row). pageDecoder reads the chunk's pages through arrow-go's
// page reader (which reads, decompresses and checks them) and decodes
// them itself: the dictionary once per chunk into a []T, the
// RLE/bit-packed hybrid of the definition levels and the indices
// (Parquet's encodings spec) straight into the caller's buffers, and plain
// values as a copy of the page's bytes. It covers INT32, INT64, FLOAT and
// DOUBLE leaves with no repetition and at most one definition level, in
// PLAIN and dictionary encodings; a chunk with any other encoding is read
// by arrow-go's reader, chosen per chunk (ownDecodable).

// fixedPhys are the physical types pageDecoder decodes.
type fixedPhys interface {
	int32 | int64 | float32 | float64
}

// ownDecodable reports whether pageDecoder decodes column chunk cc of a
// leaf with maxDef definition levels and maxRep repetition levels.
func ownDecodable(cc *metadata.ColumnChunkMetaData, maxDef, maxRep int16) bool {
	if maxRep != 0 || maxDef > 1 {
		return false
	}
	switch cc.Type() {
	case parquet.Types.Int32, parquet.Types.Int64, parquet.Types.Float, parquet.Types.Double:
	default:
		return false
	}
	for _, e := range cc.Encodings() {
		switch e {
		case parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
		default:
			return false // BIT_PACKED levels, delta or byte-stream-split values
		}
	}
	return true
}

// pageReaderOwner is a lateCol's pageDecoder of any type.
type pageReaderOwner interface {
	skip(k int64) error
	close()
}

// closeOwn closes the column's page decoder, if it has one.
func (c *lateCol) closeOwn() {
	if c.own != nil {
		c.own.close()
		c.own = nil
	}
}

// errPageCorrupt is a page the decoder cannot make sense of.
var errPageCorrupt = errors.New("corrupt page")

// pageDecoder decodes one column chunk of physical type T.
type pageDecoder[T fixedPhys] struct {
	pr     file.PageReader
	maxDef int16

	dict []T

	// the current data page
	left    int // levels (rows) of it not yet read
	defs    rleDecoder
	isDict  bool
	idx     rleDecoder
	plain   []byte // plain values not yet read
	idxBuf  []int32
	scratch []T
	lvls    []int16
}

func newPageDecoder[T fixedPhys](pr file.PageReader, maxDef int16) *pageDecoder[T] {
	return &pageDecoder[T]{pr: pr, maxDef: maxDef}
}

func (d *pageDecoder[T]) close() { d.pr.Close() }

// nextPage moves to the next data page, reading a dictionary page on
// the way.
func (d *pageDecoder[T]) nextPage() error {
	for {
		if !d.pr.Next() {
			if err := d.pr.Err(); err != nil {
				return err
			}
			return errors.New("column chunk ended early")
		}
		switch p := d.pr.Page().(type) {
		case *file.DictionaryPage:
			n := int(p.NumValues())
			data := p.Data()
			size := int(unsafe.Sizeof(T(0)))
			if n < 0 || len(data) < n*size {
				return fmt.Errorf("dictionary page of %d values in %d bytes: %w", n, len(data), errPageCorrupt)
			}
			d.dict = make([]T, n)
			copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d.dict))), n*size), data)
		case *file.DataPageV1:
			data := p.Data()
			d.left = int(p.NumValues())
			if d.maxDef > 0 {
				if len(data) < 4 {
					return fmt.Errorf("data page without its levels: %w", errPageCorrupt)
				}
				n := int(binary.LittleEndian.Uint32(data))
				if n < 0 || 4+n > len(data) {
					return fmt.Errorf("definition levels of %d bytes in a page of %d: %w", n, len(data), errPageCorrupt)
				}
				d.defs.reset(data[4:4+n], bits.Len16(uint16(d.maxDef)))
				data = data[4+n:]
			}
			if err := d.values(parquet.Encoding(p.Encoding()), data); err != nil {
				return err
			}
			return nil
		case *file.DataPageV2:
			data := p.Data()
			d.left = int(p.NumValues())
			nd, nr := int(p.DefinitionLevelByteLen()), int(p.RepetitionLevelByteLen())
			if nr != 0 || nd < 0 || nd > len(data) {
				return fmt.Errorf("levels of %d and %d bytes in a page of %d: %w", nr, nd, len(data), errPageCorrupt)
			}
			if d.maxDef > 0 {
				d.defs.reset(data[:nd], bits.Len16(uint16(d.maxDef)))
			}
			if err := d.values(parquet.Encoding(p.Encoding()), data[nd:]); err != nil {
				return err
			}
			return nil
		}
	}
}

// values starts the page's values.
func (d *pageDecoder[T]) values(enc parquet.Encoding, data []byte) error {
	switch enc {
	case parquet.Encodings.Plain:
		d.isDict, d.plain = false, data
	case parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
		if d.dict == nil {
			return fmt.Errorf("dictionary-encoded page without a dictionary: %w", errPageCorrupt)
		}
		if len(data) < 1 || data[0] > 32 {
			return fmt.Errorf("dictionary indices without their bit width: %w", errPageCorrupt)
		}
		d.isDict = true
		d.idx.reset(data[1:], int(data[0]))
	default:
		return fmt.Errorf("page encoding %v", enc)
	}
	return nil
}

// read decodes up to batch rows of the current page (the next one when
// it is done) as file's ReadBatchInPage does: the definition levels into
// defs (when the column has them) and the non-NULL values into vals.
func (d *pageDecoder[T]) read(batch int64, vals []T, defs []int16, _ []int16) (int64, int, error) {
	if d.left == 0 {
		if err := d.nextPage(); err != nil {
			return 0, 0, err
		}
	}
	n := min(int(batch), d.left, len(vals))
	nv := n
	if d.maxDef > 0 {
		if len(defs) < n {
			return 0, 0, errors.New("no room for the definition levels")
		}
		if err := d.defs.levels(defs[:n]); err != nil {
			return 0, 0, err
		}
		nv = 0
		for _, l := range defs[:n] {
			if l == d.maxDef {
				nv++
			}
		}
	}
	if err := d.decode(vals[:nv]); err != nil {
		return 0, 0, err
	}
	d.left -= n
	return int64(n), nv, nil
}

// decode decodes the next len(out) values of the page.
func (d *pageDecoder[T]) decode(out []T) error {
	if len(out) == 0 {
		return nil
	}
	if !d.isDict {
		size := int(unsafe.Sizeof(T(0)))
		need := len(out) * size
		if need > len(d.plain) {
			return fmt.Errorf("%d plain values in %d bytes: %w", len(out), len(d.plain), errPageCorrupt)
		}
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), need), d.plain)
		d.plain = d.plain[need:]
		return nil
	}
	if cap(d.idxBuf) < len(out) {
		d.idxBuf = make([]int32, len(out))
	}
	idx := d.idxBuf[:len(out)]
	if err := d.idx.decode(idx); err != nil {
		return err
	}
	dict := d.dict
	for i, j := range idx {
		if uint32(j) >= uint32(len(dict)) {
			return fmt.Errorf("dictionary index %d of %d entries: %w", j, len(dict), errPageCorrupt)
		}
		out[i] = dict[j]
	}
	return nil
}

// skip passes over the next k rows; a page wholly skipped is not
// decoded.
func (d *pageDecoder[T]) skip(k int64) error {
	for k > 0 {
		if d.left == 0 {
			if err := d.nextPage(); err != nil {
				return err
			}
		}
		if k >= int64(d.left) {
			k -= int64(d.left)
			d.left = 0
			continue
		}
		n := int(k)
		if cap(d.scratch) < n {
			d.scratch = make([]T, n)
			d.lvls = make([]int16, n)
		}
		if _, _, err := d.read(int64(n), d.scratch[:n], d.lvls[:n], nil); err != nil {
			return err
		}
		k -= int64(n)
	}
	return nil
}

// rleDecoder decodes Parquet's RLE/bit-packed hybrid encoding of
// unsigned values of a fixed bit width (definition levels, dictionary
// indices).
type rleDecoder struct {
	data  []byte
	width int
	// the current run
	rle    bool
	left   int    // values left in it
	value  int32  // an RLE run's value
	packed []byte // a bit-packed run's bytes
	bit    int    // next bit in packed
}

func (r *rleDecoder) reset(data []byte, width int) {
	*r = rleDecoder{data: data, width: width}
}

// nextRun reads the next run's header.
func (r *rleDecoder) nextRun() error {
	h, n := binary.Uvarint(r.data)
	if n <= 0 {
		return fmt.Errorf("RLE run header: %w", errPageCorrupt)
	}
	r.data = r.data[n:]
	if h&1 == 0 {
		if h>>1 > math.MaxInt32 {
			return fmt.Errorf("RLE run of %d values: %w", h>>1, errPageCorrupt)
		}
		r.rle, r.left = true, int(h>>1)
		nb := (r.width + 7) / 8
		if len(r.data) < nb {
			return fmt.Errorf("RLE run value: %w", errPageCorrupt)
		}
		var v uint32
		for i := nb - 1; i >= 0; i-- {
			v = v<<8 | uint32(r.data[i])
		}
		r.value = int32(v)
		r.data = r.data[nb:]
		return nil
	}
	if h>>1 > math.MaxInt32/8 || r.width > 0 && h>>1 > uint64(len(r.data))+1 {
		// more groups than the bytes left could hold (each takes width
		// bytes; the product below could overflow)
		return fmt.Errorf("bit-packed run of %d groups in %d bytes: %w", h>>1, len(r.data), errPageCorrupt)
	}
	groups := int(h >> 1)
	nb := groups * r.width // 8 values of width bits per group
	if groups <= 0 || nb > len(r.data) {
		// The last run may be cut short: a writer pads only the values
		// it declares, which the page's value count bounds.
		nb = len(r.data)
	}
	r.rle, r.left, r.packed, r.bit = false, groups*8, r.data[:nb], 0
	r.data = r.data[nb:]
	return nil
}

// decode fills out with the next len(out) values.
func (r *rleDecoder) decode(out []int32) error {
	for i := 0; i < len(out); {
		if r.left == 0 {
			if err := r.nextRun(); err != nil {
				return err
			}
			continue
		}
		n := min(r.left, len(out)-i)
		if r.rle {
			v := r.value
			for k := range out[i : i+n] {
				out[i+k] = v
			}
		} else if err := r.unpack(out[i : i+n]); err != nil {
			return err
		}
		r.left -= n
		i += n
	}
	return nil
}

// levels fills out with the next len(out) definition levels.
func (r *rleDecoder) levels(out []int16) error {
	for i := 0; i < len(out); {
		if r.left == 0 {
			if err := r.nextRun(); err != nil {
				return err
			}
			continue
		}
		n := min(r.left, len(out)-i)
		if r.rle {
			v := int16(r.value)
			for k := range out[i : i+n] {
				out[i+k] = v
			}
		} else {
			var tmp [64]int32
			for done := 0; done < n; {
				m := min(n-done, len(tmp))
				if err := r.unpack(tmp[:m]); err != nil {
					return err
				}
				for k, v := range tmp[:m] {
					out[i+done+k] = int16(v)
				}
				done += m
			}
		}
		r.left -= n
		i += n
	}
	return nil
}

// unpack reads len(out) values of a bit-packed run, LSB first.
func (r *rleDecoder) unpack(out []int32) error {
	w := r.width
	if w == 0 {
		clear(out)
		return nil
	}
	end := r.bit + len(out)*w
	if (end+7)/8 > len(r.packed) {
		return fmt.Errorf("bit-packed run of %d bytes: %w", len(r.packed), errPageCorrupt)
	}
	mask := uint64(1)<<w - 1
	p, bit := r.packed, r.bit
	for k := range out {
		byteAt := bit >> 3
		var word uint64
		if byteAt+8 <= len(p) {
			word = binary.LittleEndian.Uint64(p[byteAt:])
		} else {
			for j := len(p) - 1; j >= byteAt; j-- {
				word = word<<8 | uint64(p[j])
			}
		}
		out[k] = int32(word >> (bit & 7) & mask)
		bit += w
	}
	r.bit = bit
	return nil
}
