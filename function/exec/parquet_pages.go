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
// by arrow-go's reader, chosen per chunk (ownDecodable). bytesDecoder
// does the same for BYTE_ARRAY leaves: the dictionary's byte arrays are
// sliced once per chunk and a dictionary-encoded value is a slice header
// copied from it, where arrow-go's decoder went through its generic
// GetBatchWithDict and a spaced copy per batch.

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
	case parquet.Types.Int32, parquet.Types.Int64, parquet.Types.Float, parquet.Types.Double, parquet.Types.ByteArray:
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
	pages() file.PageReader
}

// closeOwn is done with the column's page decoder, if it has one, and
// drops the dictionary array made of its chunk. A decoder over a page
// reader of ours is kept as the column's spare, for the next chunk
// (reusePageDecoder, reuseBytesDecoder); any other is closed.
func (c *lateCol) closeOwn() {
	if c.chunkArr != nil && c.chunkOf == c.own {
		c.chunkArr.Release()
		c.chunkArr, c.chunkOf = nil, nil
	}
	if c.own == nil {
		return
	}
	if c.ownPR {
		c.closeSpare()
		c.spare = c.own
	} else {
		c.own.close()
	}
	c.own, c.ownPR = nil, false
}

// closeSpare closes the column's spare decoder and its page reader.
func (c *lateCol) closeSpare() {
	if c.spare != nil {
		c.spare.close()
		c.spare = nil
	}
}

// takeSpare returns the column's spare decoder and its page reader (nil
// when it has none), no longer the column's.
func (c *lateCol) takeSpare() (pageReaderOwner, file.PageReader) {
	d := c.spare
	c.spare = nil
	if d == nil {
		return nil, nil
	}
	return d, d.pages()
}

// reusePageDecoder is spare, reset onto pr, when it decodes the same
// type; else a new decoder over pr.
func reusePageDecoder[T fixedPhys](spare pageReaderOwner, pr file.PageReader, maxDef int16) *pageDecoder[T] {
	if d, ok := spare.(*pageDecoder[T]); ok {
		d.pageCursor = pageCursor{pr: pr, maxDef: maxDef, idxBuf: d.idxBuf}
		d.dict = d.dict[:0]
		return d
	}
	return newPageDecoder[T](pr, maxDef)
}

// reuseBytesDecoder is reusePageDecoder for byte arrays. Not for
// lkDictStr columns: their batch keeps each chunk's decoder (lateCol.
// dicts) and tells chunks apart by it (chunkOf).
func reuseBytesDecoder(spare pageReaderOwner, pr file.PageReader, maxDef int16) *bytesDecoder {
	if d, ok := spare.(*bytesDecoder); ok {
		d.pageCursor = pageCursor{pr: pr, maxDef: maxDef, idxBuf: d.idxBuf}
		d.dict, d.dictData = d.dict[:0], d.dictData[:0]
		return d
	}
	return newBytesDecoder(pr, maxDef)
}

// errPageCorrupt is a page the decoder cannot make sense of.
var errPageCorrupt = errors.New("corrupt page")

// pageCursor walks one column chunk's data pages: the definition
// levels and either the dictionary indices or the plain values of the
// current page. The dictionary page goes to the decoder's dict function.
type pageCursor struct {
	pr      file.PageReader
	maxDef  int16
	hasDict bool

	// the current data page
	left   int // levels (rows) of it not yet read
	defs   rleDecoder
	isDict bool
	idx    rleDecoder
	plain  []byte // plain values not yet read
	idxBuf []int32
}

// next moves to the next data page, handing a dictionary page on the way
// to dict.
func (p *pageCursor) next(dict func(n int, data []byte) error) error {
	for {
		if !p.pr.Next() {
			if err := p.pr.Err(); err != nil {
				return err
			}
			return errors.New("column chunk ended early")
		}
		switch pg := p.pr.Page().(type) {
		case *file.DictionaryPage:
			n := int(pg.NumValues())
			if n < 0 {
				return fmt.Errorf("dictionary page of %d values: %w", n, errPageCorrupt)
			}
			if err := dict(n, pg.Data()); err != nil {
				return err
			}
			p.hasDict = true
		case *file.DataPageV1:
			data := pg.Data()
			p.left = int(pg.NumValues())
			if p.maxDef > 0 {
				if len(data) < 4 {
					return fmt.Errorf("data page without its levels: %w", errPageCorrupt)
				}
				n := int(binary.LittleEndian.Uint32(data))
				if n < 0 || 4+n > len(data) {
					return fmt.Errorf("definition levels of %d bytes in a page of %d: %w", n, len(data), errPageCorrupt)
				}
				p.defs.reset(data[4:4+n], bits.Len16(uint16(p.maxDef)))
				data = data[4+n:]
			}
			return p.values(parquet.Encoding(pg.Encoding()), data)
		case *file.DataPageV2:
			data := pg.Data()
			p.left = int(pg.NumValues())
			nd, nr := int(pg.DefinitionLevelByteLen()), int(pg.RepetitionLevelByteLen())
			if nr != 0 || nd < 0 || nd > len(data) {
				return fmt.Errorf("levels of %d and %d bytes in a page of %d: %w", nr, nd, len(data), errPageCorrupt)
			}
			if p.maxDef > 0 {
				p.defs.reset(data[:nd], bits.Len16(uint16(p.maxDef)))
			}
			return p.values(parquet.Encoding(pg.Encoding()), data[nd:])
		}
	}
}

// values starts the page's values.
func (p *pageCursor) values(enc parquet.Encoding, data []byte) error {
	switch enc {
	case parquet.Encodings.Plain:
		p.isDict, p.plain = false, data
	case parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
		if !p.hasDict {
			return fmt.Errorf("dictionary-encoded page without a dictionary: %w", errPageCorrupt)
		}
		if len(data) < 1 || data[0] > 32 {
			return fmt.Errorf("dictionary indices without their bit width: %w", errPageCorrupt)
		}
		p.isDict = true
		p.idx.reset(data[1:], int(data[0]))
	default:
		return fmt.Errorf("page encoding %v", enc)
	}
	return nil
}

// levels takes up to batch rows of the current page (the next one when
// it is done): their definition levels into defs when the column has
// them and some of the rows are NULL (nv < n; when every row is a value
// defs may be left unwritten). It returns the rows and how many of them
// are values.
func (p *pageCursor) levels(batch int, defs []int16, dict func(n int, data []byte) error) (n, nv int, err error) {
	if p.left == 0 {
		if err := p.next(dict); err != nil {
			return 0, 0, err
		}
	}
	n = min(batch, p.left)
	nv = n
	if p.maxDef > 0 {
		// The common case, a column declared nullable without a NULL
		// here: the n levels lie in one RLE run of maxDef. defs is
		// left unwritten (callers read it only when nv < n).
		all, err := p.defs.runOf(n, int32(p.maxDef))
		if err != nil {
			return 0, 0, err
		}
		if all {
			p.left -= n
			return n, n, nil
		}
		if len(defs) < n {
			return 0, 0, errors.New("no room for the definition levels")
		}
		if err := p.defs.levels(defs[:n]); err != nil {
			return 0, 0, err
		}
		nv = 0
		for _, l := range defs[:n] {
			if l == p.maxDef {
				nv++
			}
		}
	}
	p.left -= n
	return n, nv, nil
}

// indices decodes the next n dictionary indices and checks them against
// a dictionary of size entries.
func (p *pageCursor) indices(n, size int) ([]int32, error) {
	if cap(p.idxBuf) < n {
		p.idxBuf = make([]int32, n)
	}
	idx := p.idxBuf[:n]
	if err := p.indicesInto(idx, size); err != nil {
		return nil, err
	}
	return idx, nil
}

// indicesInto decodes the next len(out) dictionary indices into out and
// checks them against a dictionary of size entries.
func (p *pageCursor) indicesInto(out []int32, size int) error {
	if err := p.idx.decode(out); err != nil {
		return err
	}
	for _, j := range out {
		if uint32(j) >= uint32(size) {
			return fmt.Errorf("dictionary index %d of %d entries: %w", j, size, errPageCorrupt)
		}
	}
	return nil
}

// skip passes over the next k rows; a page wholly skipped is not
// decoded. read reads n rows of the current page.
func (p *pageCursor) skip(k int64, dict func(n int, data []byte) error, read func(n int) error) error {
	for k > 0 {
		if p.left == 0 {
			if err := p.next(dict); err != nil {
				return err
			}
		}
		if k >= int64(p.left) {
			k -= int64(p.left)
			p.left = 0
			continue
		}
		if err := read(int(k)); err != nil {
			return err
		}
		k = 0
	}
	return nil
}

// pageDecoder decodes one column chunk of physical type T.
type pageDecoder[T fixedPhys] struct {
	pageCursor
	dict    []T
	scratch []T
	lvls    []int16
}

func newPageDecoder[T fixedPhys](pr file.PageReader, maxDef int16) *pageDecoder[T] {
	return &pageDecoder[T]{pageCursor: pageCursor{pr: pr, maxDef: maxDef}}
}

func (d *pageDecoder[T]) close()                 { d.pr.Close() }
func (d *pageDecoder[T]) pages() file.PageReader { return d.pr }

// setDict decodes a PLAIN dictionary page of n values.
func (d *pageDecoder[T]) setDict(n int, data []byte) error {
	size := int(unsafe.Sizeof(T(0)))
	if len(data) < n*size {
		return fmt.Errorf("dictionary page of %d values in %d bytes: %w", n, len(data), errPageCorrupt)
	}
	if cap(d.dict) < n {
		d.dict = make([]T, n)
	}
	d.dict = d.dict[:n]
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d.dict))), n*size), data)
	return nil
}

// read decodes up to batch rows of the current page (the next one when
// it is done) as file's ReadBatchInPage does: the definition levels into
// defs (when the column has them) and the non-NULL values into vals.
func (d *pageDecoder[T]) read(batch int64, vals []T, defs []int16, _ []int16) (int64, int, error) {
	n, nv, err := d.levels(min(int(batch), len(vals)), defs, d.setDict)
	if err != nil {
		return 0, 0, err
	}
	if err := d.decode(vals[:nv]); err != nil {
		return 0, 0, err
	}
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
	idx, err := d.indices(len(out), len(d.dict))
	if err != nil {
		return err
	}
	dict := d.dict
	for i, j := range idx {
		out[i] = dict[j]
	}
	return nil
}

// skip passes over the next k rows.
func (d *pageDecoder[T]) skip(k int64) error {
	return d.pageCursor.skip(k, d.setDict, func(n int) error {
		if cap(d.scratch) < n {
			d.scratch = make([]T, n)
			d.lvls = make([]int16, n)
		}
		_, _, err := d.read(int64(n), d.scratch[:n], d.lvls[:n], nil)
		return err
	})
}

// bytesDecoder decodes one BYTE_ARRAY column chunk. Its values point
// into the dictionary, which it owns for the chunk, or into the current
// page, which the next page overwrites (as arrow-go's do): the caller
// copies them before it reads on.
type bytesDecoder struct {
	pageCursor
	dictData []byte
	dict     []parquet.ByteArray
	scratch  []parquet.ByteArray
	lvls     []int16
}

func newBytesDecoder(pr file.PageReader, maxDef int16) *bytesDecoder {
	return &bytesDecoder{pageCursor: pageCursor{pr: pr, maxDef: maxDef}}
}

func (d *bytesDecoder) close()                 { d.pr.Close() }
func (d *bytesDecoder) pages() file.PageReader { return d.pr }

// setDict decodes a PLAIN dictionary page of n byte arrays, copying its
// bytes (the page reader reuses its buffer for the next page).
func (d *bytesDecoder) setDict(n int, data []byte) error {
	if n > len(data)/4 {
		return fmt.Errorf("dictionary page of %d values in %d bytes: %w", n, len(data), errPageCorrupt)
	}
	d.dictData = append(d.dictData[:0], data...)
	if cap(d.dict) < n {
		d.dict = make([]parquet.ByteArray, n)
	}
	d.dict = d.dict[:n]
	rest, err := plainByteArrays(d.dict, d.dictData)
	_ = rest
	return err
}

// plainByteArrays decodes len(out) PLAIN byte arrays (a 4-byte
// little-endian length, then the bytes) from data and returns what
// follows them.
func plainByteArrays(out []parquet.ByteArray, data []byte) ([]byte, error) {
	for i := range out {
		if len(data) < 4 {
			return nil, fmt.Errorf("byte array %d of %d cut short: %w", i, len(out), errPageCorrupt)
		}
		l := binary.LittleEndian.Uint32(data)
		if uint64(l) > uint64(len(data)-4) {
			return nil, fmt.Errorf("byte array of %d bytes in %d: %w", l, len(data)-4, errPageCorrupt)
		}
		out[i] = data[4 : 4+l : 4+l]
		data = data[4+l:]
	}
	return data, nil
}

// read is pageDecoder's read for byte arrays.
func (d *bytesDecoder) read(batch int64, vals []parquet.ByteArray, defs []int16, _ []int16) (int64, int, error) {
	n, nv, err := d.levels(min(int(batch), len(vals)), defs, d.setDict)
	if err != nil {
		return 0, 0, err
	}
	out := vals[:nv]
	if !d.isDict {
		if d.plain, err = plainByteArrays(out, d.plain); err != nil {
			return 0, 0, err
		}
		return int64(n), nv, nil
	}
	idx, err := d.indices(nv, len(d.dict))
	if err != nil {
		return 0, 0, err
	}
	dict := d.dict
	for i, j := range idx {
		out[i] = dict[j]
	}
	return int64(n), nv, nil
}

// readIndices is read for a dictionary-only chunk: the values' indices
// into d.dict (checked) instead of the values.
func (d *bytesDecoder) readIndices(batch int64, vals []int32, defs []int16) (int64, int, error) {
	n, nv, err := d.levels(min(int(batch), len(vals)), defs, d.setDict)
	if err != nil {
		return 0, 0, err
	}
	if nv > 0 && !d.isDict {
		return 0, 0, fmt.Errorf("a plain page in a chunk read as a dictionary: %w", errPageCorrupt)
	}
	if err := d.indicesInto(vals[:nv], len(d.dict)); err != nil {
		return 0, 0, err
	}
	return int64(n), nv, nil
}

// skip passes over the next k rows.
func (d *bytesDecoder) skip(k int64) error {
	return d.pageCursor.skip(k, d.setDict, func(n int) error {
		if cap(d.scratch) < n {
			d.scratch = make([]parquet.ByteArray, n)
			d.lvls = make([]int16, n)
		}
		_, _, err := d.read(int64(n), d.scratch[:n], d.lvls[:n], nil)
		return err
	})
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

// runOf consumes the next n values when they lie in one RLE run of value
// v, and reports whether it did; otherwise it consumes nothing.
func (r *rleDecoder) runOf(n int, v int32) (bool, error) {
	if n == 0 {
		return true, nil
	}
	if r.left == 0 {
		if err := r.nextRun(); err != nil {
			return false, err
		}
	}
	if !r.rle || r.left < n || r.value != v {
		return false, nil
	}
	r.left -= n
	return true, nil
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
	k := 0
	if w <= 8 && bit&7 == 0 {
		// Whole groups of eight values (w bytes each) with one 8-byte
		// load a group while eight bytes remain.
		for ; k+8 <= len(out) && bit>>3+8 <= len(p); k += 8 {
			word := binary.LittleEndian.Uint64(p[bit>>3:])
			o := out[k : k+8 : k+8]
			o[0] = int32(word & mask)
			o[1] = int32(word >> w & mask)
			o[2] = int32(word >> (2 * w) & mask)
			o[3] = int32(word >> (3 * w) & mask)
			o[4] = int32(word >> (4 * w) & mask)
			o[5] = int32(word >> (5 * w) & mask)
			o[6] = int32(word >> (6 * w) & mask)
			o[7] = int32(word >> (7 * w) & mask)
			bit += 8 * w
		}
	} else if w <= 16 && bit&7 == 0 {
		// Whole groups with two loads: four values from the group's
		// first byte and four from bit 4w, that is from byte 4w/8 at a
		// bit offset of 0 or 4 (4w+4 <= 64 for w <= 15; w = 16 starts
		// at offset 0).
		h, hs := (4*w)>>3, uint((4*w)&7)
		for ; k+8 <= len(out) && bit>>3+h+8 <= len(p); k += 8 {
			at := bit >> 3
			lo := binary.LittleEndian.Uint64(p[at:])
			hi := binary.LittleEndian.Uint64(p[at+h:]) >> hs
			o := out[k : k+8 : k+8]
			o[0] = int32(lo & mask)
			o[1] = int32(lo >> w & mask)
			o[2] = int32(lo >> (2 * w) & mask)
			o[3] = int32(lo >> (3 * w) & mask)
			o[4] = int32(hi & mask)
			o[5] = int32(hi >> w & mask)
			o[6] = int32(hi >> (2 * w) & mask)
			o[7] = int32(hi >> (3 * w) & mask)
			bit += 8 * w
		}
	}
	// One 8-byte load a value while eight bytes remain past it (w <= 32
	// bits from any bit offset fit in 64), then byte by byte.
	for ; k < len(out) && bit>>3+8 <= len(p); k++ {
		out[k] = int32(binary.LittleEndian.Uint64(p[bit>>3:]) >> (bit & 7) & mask)
		bit += w
	}
	for ; k < len(out); k++ {
		byteAt := bit >> 3
		var word uint64
		for j := min(len(p), byteAt+8) - 1; j >= byteAt; j-- {
			word = word<<8 | uint64(p[j])
		}
		out[k] = int32(word >> (bit & 7) & mask)
		bit += w
	}
	r.bit = bit
	return nil
}
