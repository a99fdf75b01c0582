package exec

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/sluicedb/sluice/planner/plan"
)

// Late materialization (DuckDB's and DataFusion's filter-first Parquet
// reads). A scan with a pruning filter reads the columns the filter names
// through the record reader, evaluates the filter on each batch, and then
// decodes the other columns it can (lateKindOf) straight from arrow-go's
// column chunk readers for the surviving rows only: runs of dropped rows
// are skipped (a run that covers the rest of a page skips the page's
// values without decoding them), runs of kept rows are decoded into the
// engine layout directly. Columns the fast path does not cover (nested,
// timestamps, INT96, fixed-length byte arrays, casts) are read by the
// record reader with the filter columns and gathered.
//
// Dropping rows in the scan is safe because the pruning filter's
// conjuncts are also evaluated by the Filter node above the scan (the
// planner and runtime-filter put them in both places), and pruning a row
// group whose rows all fail them is already what the scan does: a row
// group may hold a single row. A batch whose filter fails to evaluate is
// passed on whole, for the Filter above to report.
//
// Whether the two passes pay is decided per scan from the rows kept in
// the first batches (Databricks' adaptive lazy materialization): past
// lateProbeRows rows, a filter keeping more than Options.LateKeepRatio of
// them turns the scan back into one pass, decoding every row of every
// column and leaving the filtering to the Filter above.

// LateMode selects late materialization in Parquet scans.
type LateMode int

const (
	// LateAuto decodes late while the filter drops enough rows.
	LateAuto LateMode = iota
	// LateOff never decodes late: the record reader reads every column.
	LateOff
	// LateAlways decodes late whatever the filter keeps (tests).
	LateAlways
)

// lateProbeRows is how many rows the adaptive switch watches before it
// decides.
const lateProbeRows = 16 << 10

// lateKind says how a column's physical values become the engine's layout.
type lateKind int

const (
	lkBool     lateKind = iota + 1
	lkInt32             // INT32 (signed int8..int32) -> int64
	lkUint32            // INT32 (unsigned 8..32) -> int64
	lkDate              // INT32 date -> date32
	lkDec32             // INT32 decimal -> decimal64
	lkInt64             // INT64 integer, or decimal64
	lkFloat32           // FLOAT -> float64
	lkFloat64           // DOUBLE
	lkByteText          // BYTE_ARRAY (string or binary) -> string
	// lkDictStr is a dictionary-only BYTE_ARRAY string column an
	// aggregation asked for as a dictionary (EmitDictionaries): int32
	// indices into the chunk's dictionary as an engine String array.
	lkDictStr
)

// lateKindOf reports how the fast path decodes column c into engine type
// t; 0 when it does not (the record reader reads it). A leaf under structs
// (a struct field column, plan.Scan.Paths) decodes as a top-level one: with
// nothing repeated on the way it has one level per row, a value where the
// level is the leaf's greatest (the struct and the field present), NULL
// under it.
func lateKindOf(c *schema.Column, t plan.DataType) lateKind {
	if c == nil || c.MaxRepetitionLevel() != 0 {
		return 0
	}
	lt := c.LogicalType()
	none := lt == nil
	if !none {
		_, none = lt.(schema.NoLogicalType)
	}
	switch c.PhysicalType() {
	case parquet.Types.Boolean:
		if none && t.ID == plan.Bool {
			return lkBool
		}
	case parquet.Types.Int32:
		switch l := lt.(type) {
		case schema.IntLogicalType:
			if t.ID == plan.Int64 && l.BitWidth() <= 32 {
				if l.IsSigned() {
					return lkInt32
				}
				return lkUint32
			}
		case schema.DateLogicalType:
			if t.ID == plan.Date {
				return lkDate
			}
		case schema.DecimalLogicalType:
			if t.ID == plan.Decimal && t.Precision == int(l.Precision()) && t.Scale == int(l.Scale()) && t.Precision <= plan.MaxDecimal64Precision {
				return lkDec32
			}
		}
		if none && t.ID == plan.Int64 {
			return lkInt32
		}
	case parquet.Types.Int64:
		switch l := lt.(type) {
		case schema.IntLogicalType:
			if t.ID == plan.Int64 && l.BitWidth() == 64 && l.IsSigned() {
				return lkInt64
			}
		case schema.DecimalLogicalType:
			if t.ID == plan.Decimal && t.Precision == int(l.Precision()) && t.Scale == int(l.Scale()) && t.Precision <= plan.MaxDecimal64Precision {
				return lkInt64
			}
		}
		if none && t.ID == plan.Int64 {
			return lkInt64
		}
	case parquet.Types.Float:
		if none && t.ID == plan.Float64 {
			return lkFloat32
		}
	case parquet.Types.Double:
		if none && t.ID == plan.Float64 {
			return lkFloat64
		}
	case parquet.Types.ByteArray:
		if t.ID != plan.String {
			return 0
		}
		if _, ok := lt.(schema.StringLogicalType); ok || none {
			return lkByteText
		}
	}
	return 0
}

// lateCol decodes one output column of a scan from its column chunk
// readers, row group after row group.
type lateCol struct {
	out    int // output column
	leaf   int
	kind   lateKind
	typ    arrow.DataType // the engine's Arrow type
	maxDef int16
	rd     file.ColumnChunkReader
	own    pageReaderOwner // instead of rd: the chunk's pages decoded by pageDecoder (parquet_pages.go)
	ownPR  bool            // own's page reader is one of ours (chunkPageReader), reusable
	spare  pageReaderOwner // a finished chunk's decoder, reused for the next (closeOwn)
	rgi    int             // index in the scan's row groups of the one rd reads (-1: none yet)
	rgLeft int64           // rows of it left
	// closed: the chunk of row group rgi is not opened yet, and skipped
	// rows of it to pass over when it is (lateReadCol opens a chunk only
	// for rows it decodes: a chunk whose rows are all dropped is never
	// read).
	closed  bool
	skipped int64

	// scratch, reused across runs
	defs []int16
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	bls  []bool
	ba   []parquet.ByteArray

	// the batch being built
	n        int // rows filled
	cap      int
	valid    []byte // nil: no NULL so far
	validBuf *memory.Buffer
	buf      *memory.Buffer
	o64      []int64
	o32      []int32
	of64     []float64
	obits    []byte
	str      *strBuilder

	// lkDictStr: the batch's dictionary, the entries of every chunk the
	// batch reads, one after the other (a batch may span row groups)
	dicts    []*bytesDecoder // the chunks, in order
	dictBase int32           // index of the last chunk's first entry
	chunkArr arrow.Array     // the last chunk's dictionary, kept while batches read only it
	chunkOf  *bytesDecoder
}

// begin starts a batch of rows rows: its string bytes from mem, its
// fixed-width values and indices from fixed.
func (c *lateCol) begin(mem, fixed memory.Allocator, rows int) {
	c.n, c.cap, c.valid, c.validBuf = 0, rows, nil, nil
	switch c.kind {
	case lkBool:
		c.buf, c.obits = newBitmap(fixed, rows)
	case lkInt32, lkUint32, lkDec32, lkInt64:
		c.buf, c.o64 = newFixed[int64](fixed, rows)
	case lkDate:
		c.buf, c.o32 = newFixed[int32](fixed, rows)
	case lkDictStr:
		c.buf, c.o32 = newFixed[int32](fixed, rows)
		clear(c.o32) // a NULL row's index stays 0
		c.dicts, c.dictBase = c.dicts[:0], 0
	case lkFloat32, lkFloat64:
		c.buf, c.of64 = newFixed[float64](fixed, rows)
	case lkByteText: // string bytes are never recycled (recycler)
		c.str = newStrBuilder(mem, rows, rows*8)
	}
}

// finish returns the batch's array.
func (c *lateCol) finish(mem memory.Allocator) (arrow.Array, error) {
	if c.n != c.cap {
		c.release()
		return nil, fmt.Errorf("decoded %d rows of %d", c.n, c.cap)
	}
	if c.kind == lkByteText {
		s := c.str
		c.str = nil
		return s.finish(c.takeValid())
	}
	if c.kind == lkDictStr {
		return c.finishDict(mem)
	}
	b := c.buf
	c.buf = nil
	return makeArray(c.typ, c.n, c.takeValid(), b), nil
}

// finishDict returns an lkDictStr batch: its indices over the dictionary
// of the chunks it read (the last chunk's alone, made once and kept,
// when it read only that one).
func (c *lateCol) finishDict(mem memory.Allocator) (arrow.Array, error) {
	var dict arrow.Array
	switch {
	case len(c.dicts) == 1 && c.chunkOf == c.dicts[0] && c.chunkArr != nil:
		dict = c.chunkArr
		dict.Retain()
	default:
		n, size := 0, 0
		for _, d := range c.dicts {
			n += len(d.dict)
			for _, v := range d.dict {
				size += len(v)
			}
		}
		b := newStrBuilder(mem, n, size)
		for _, d := range c.dicts {
			for _, v := range d.dict {
				b.append(v)
			}
		}
		var err error
		if dict, err = b.finish(nil); err != nil {
			c.release()
			return nil, err
		}
		if len(c.dicts) == 1 {
			if c.chunkArr != nil {
				c.chunkArr.Release()
			}
			c.chunkArr, c.chunkOf = dict, c.dicts[0]
			dict.Retain()
		}
	}
	defer dict.Release()
	b := c.buf
	c.buf = nil
	idx := makeArray(arrow.PrimitiveTypes.Int32, c.n, c.takeValid(), b)
	defer idx.Release()
	c.dicts = c.dicts[:0]
	return array.NewDictionaryArray(engineDictType, idx, dict), nil
}

// readDict reads an lkDictStr column: its indices, each chunk's offset by
// the entries of the chunks before it in the batch.
func (c *lateCol) readDict(mem memory.Allocator, k int, pick []int32, defs []int16, d *bytesDecoder) error {
	rd := func(batch int64, vals []int32, defs, _ []int16) (int64, int, error) {
		n, nv, err := d.readIndices(batch, vals, defs)
		if err != nil {
			return 0, 0, err
		}
		if len(c.dicts) == 0 || c.dicts[len(c.dicts)-1] != d {
			if len(c.dicts) > 0 {
				c.dictBase += int32(len(c.dicts[len(c.dicts)-1].dict))
			}
			c.dicts = append(c.dicts, d)
		}
		if base := c.dictBase; base != 0 {
			for i := range vals[:nv] {
				vals[i] += base
			}
		}
		return n, nv, nil
	}
	return readRuns(c, mem, k, pick, &c.i32, defs, rd, func(at int, v []int32) { copy(c.o32[at:], v) },
		func(at, src int, v []int32) { c.o32[at] = v[src] })
}

func (c *lateCol) takeValid() *memory.Buffer {
	v := c.validBuf
	c.validBuf, c.valid = nil, nil
	return v
}

// release drops a batch left unfinished.
func (c *lateCol) release() {
	if c.buf != nil {
		c.buf.Release()
		c.buf = nil
	}
	if c.str != nil {
		c.str.release()
		c.str = nil
	}
	if c.validBuf != nil {
		c.validBuf.Release()
		c.validBuf, c.valid = nil, nil
	}
}

func (c *lateCol) setNull(mem memory.Allocator, i int) {
	if c.valid == nil {
		c.validBuf, c.valid = newOnes(mem, c.cap)
	}
	clearBit(c.valid, i)
}

// skip passes over the next k rows of the column chunk.
func (c *lateCol) skip(k int64) error {
	if c.own != nil {
		return c.own.skip(k)
	}
	var err error
	switch r := c.rd.(type) {
	case *file.BooleanColumnChunkReader:
		_, err = r.Skip(k)
	case *file.Int32ColumnChunkReader:
		_, err = r.Skip(k)
	case *file.Int64ColumnChunkReader:
		_, err = r.Skip(k)
	case *file.Float32ColumnChunkReader:
		_, err = r.Skip(k)
	case *file.Float64ColumnChunkReader:
		_, err = r.Skip(k)
	case *file.ByteArrayColumnChunkReader:
		_, err = r.Skip(k)
	default:
		err = fmt.Errorf("unexpected column reader %T", c.rd)
	}
	return err
}

// read decodes the next k rows of the column chunk and puts rows pick
// (offsets in the k rows, ascending; nil: all) into the batch.
func (c *lateCol) read(mem memory.Allocator, k int, pick []int32) error {
	if c.maxDef > 0 && cap(c.defs) < k {
		c.defs = make([]int16, k)
	}
	var defs []int16
	if c.maxDef > 0 {
		defs = c.defs[:k]
	}
	switch r := c.rd.(type) {
	case *file.BooleanColumnChunkReader:
		return readRuns(c, mem, k, pick, &c.bls, defs, r.ReadBatchInPage, func(at int, v []bool) {
			for i, x := range v {
				if x {
					setBit(c.obits, at+i)
				}
			}
		}, func(at, src int, v []bool) {
			if v[src] {
				setBit(c.obits, at)
			}
		})
	case *file.Int32ColumnChunkReader:
		return c.readInt32(mem, k, pick, defs, r.ReadBatchInPage)
	case *file.Int64ColumnChunkReader:
		return c.readInt64(mem, k, pick, defs, r.ReadBatchInPage)
	case *file.Float32ColumnChunkReader:
		return c.readFloat32(mem, k, pick, defs, r.ReadBatchInPage)
	case *file.Float64ColumnChunkReader:
		return c.readFloat64(mem, k, pick, defs, r.ReadBatchInPage)
	case *file.ByteArrayColumnChunkReader:
		// Values point into the page (or dictionary) buffer, which the
		// next page may overwrite: they are copied page by page.
		return readRuns(c, mem, k, pick, &c.ba, defs, r.ReadBatchInPage, func(_ int, v []parquet.ByteArray) {
			for _, x := range v {
				c.str.append(x)
			}
		}, func(_, src int, v []parquet.ByteArray) { c.str.append(v[src]) })
	}
	switch o := c.own.(type) {
	case *bytesDecoder:
		if c.kind == lkDictStr {
			return c.readDict(mem, k, pick, defs, o)
		}
		return readRuns(c, mem, k, pick, &c.ba, defs, o.read, func(_ int, v []parquet.ByteArray) {
			for _, x := range v {
				c.str.append(x)
			}
		}, func(_, src int, v []parquet.ByteArray) { c.str.append(v[src]) })
	case *pageDecoder[int32]:
		return c.readInt32(mem, k, pick, defs, o.read)
	case *pageDecoder[int64]:
		return c.readInt64(mem, k, pick, defs, o.read)
	case *pageDecoder[float32]:
		return c.readFloat32(mem, k, pick, defs, o.read)
	case *pageDecoder[float64]:
		return c.readFloat64(mem, k, pick, defs, o.read)
	}
	return fmt.Errorf("unexpected column reader %T", c.rd)
}

func (c *lateCol) readInt32(mem memory.Allocator, k int, pick []int32, defs []int16, rd readPage[int32]) error {
	switch c.kind {
	case lkDate:
		if pick == nil {
			return readDirect(c, mem, k, c.o32, defs, rd)
		}
		return readRuns(c, mem, k, pick, &c.i32, defs, rd, func(at int, v []int32) { copy(c.o32[at:], v) },
			func(at, src int, v []int32) { c.o32[at] = v[src] })
	case lkUint32:
		return readRuns(c, mem, k, pick, &c.i32, defs, rd, func(at int, v []int32) {
			o := c.o64[at : at+len(v)]
			for i, x := range v {
				o[i] = int64(uint32(x))
			}
		}, func(at, src int, v []int32) { c.o64[at] = int64(uint32(v[src])) })
	default:
		return readRuns(c, mem, k, pick, &c.i32, defs, rd, func(at int, v []int32) {
			o := c.o64[at : at+len(v)]
			for i, x := range v {
				o[i] = int64(x)
			}
		}, func(at, src int, v []int32) { c.o64[at] = int64(v[src]) })
	}
}

func (c *lateCol) readInt64(mem memory.Allocator, k int, pick []int32, defs []int16, rd readPage[int64]) error {
	if pick == nil {
		// Decode straight into the batch.
		return readDirect(c, mem, k, c.o64, defs, rd)
	}
	return readRuns(c, mem, k, pick, &c.i64, defs, rd, func(at int, v []int64) { copy(c.o64[at:], v) },
		func(at, src int, v []int64) { c.o64[at] = v[src] })
}

func (c *lateCol) readFloat32(mem memory.Allocator, k int, pick []int32, defs []int16, rd readPage[float32]) error {
	return readRuns(c, mem, k, pick, &c.f32, defs, rd, func(at int, v []float32) {
		o := c.of64[at : at+len(v)]
		for i, x := range v {
			o[i] = float64(x)
		}
	}, func(at, src int, v []float32) { c.of64[at] = float64(v[src]) })
}

func (c *lateCol) readFloat64(mem memory.Allocator, k int, pick []int32, defs []int16, rd readPage[float64]) error {
	if pick == nil {
		return readDirect(c, mem, k, c.of64, defs, rd)
	}
	return readRuns(c, mem, k, pick, &c.f64, defs, rd, func(at int, v []float64) { copy(c.of64[at:], v) },
		func(at, src int, v []float64) { c.of64[at] = v[src] })
}

// readPage is a typed reader's ReadBatchInPage.
type readPage[T any] func(batch int64, values []T, defLvls, repLvls []int16) (int64, int, error)

// readDirect decodes k rows straight into dst at the batch's position,
// without a scratch copy. For an optional column (defs not nil) a page's
// non-NULL values arrive packed at the front of the rows read; when some
// rows are NULL the values are moved to their rows from the back (each
// value moves to a row at or after where it landed, so walking backwards
// never overwrites a value not yet moved) and the NULL rows are zeroed
// and marked.
func readDirect[T any](c *lateCol, mem memory.Allocator, k int, dst []T, defs []int16, rd readPage[T]) error {
	for done := 0; done < k; {
		var d []int16
		if defs != nil {
			d = defs[:k-done]
		}
		out := dst[c.n : c.n+k-done]
		lv, nv, err := rd(int64(k-done), out, d, nil)
		if err != nil {
			return err
		}
		if lv == 0 {
			return fmt.Errorf("column chunk ended %d rows early", k-done)
		}
		if d != nil && int64(nv) != lv {
			var zero T
			src := nv - 1
			for r := int(lv) - 1; r >= 0; r-- {
				if d[r] == c.maxDef {
					out[r] = out[src]
					src--
				} else {
					out[r] = zero
					c.setNull(mem, c.n+r)
				}
			}
		}
		done += int(lv)
		c.n += int(lv)
	}
	return nil
}

// readRuns decodes k rows page by page into scratch and puts rows pick
// (nil: all) into the batch: all of a page's values at once when every
// row is taken and none is NULL (all), else one by one (one, src indexing
// the page's non-NULL values).
func readRuns[T any](c *lateCol, mem memory.Allocator, k int, pick []int32, scratch *[]T, defs []int16, rd readPage[T],
	all func(at int, v []T), one func(at, src int, v []T)) error {
	if cap(*scratch) < k {
		*scratch = make([]T, k)
	}
	vals := (*scratch)[:k]
	pi := 0
	for done := 0; done < k; {
		var d []int16
		if defs != nil {
			d = defs[:k-done]
		}
		lv, nv, err := rd(int64(k-done), vals, d, nil)
		if err != nil {
			return err
		}
		if lv == 0 {
			return fmt.Errorf("column chunk ended %d rows early", k-done)
		}
		switch {
		case pick == nil && int64(nv) == lv:
			all(c.n, vals[:nv])
			c.n += nv
		case pick == nil:
			src := 0
			for _, l := range d[:lv] {
				if l == c.maxDef {
					one(c.n, src, vals)
					src++
				} else {
					c.setNull(mem, c.n)
					if c.kind == lkByteText {
						c.str.appendEmpty()
					}
				}
				c.n++
			}
		case int64(nv) == lv: // no NULL: the picked rows are values
			for ; pi < len(pick) && int(pick[pi]) < done+int(lv); pi++ {
				one(c.n, int(pick[pi])-done, vals)
				c.n++
			}
		default:
			src := 0
			for r, l := range d[:lv] {
				if pi < len(pick) && int(pick[pi]) == done+r {
					pi++
					if l == c.maxDef {
						one(c.n, src, vals)
					} else {
						c.setNull(mem, c.n)
						if c.kind == lkByteText {
							c.str.appendEmpty()
						}
					}
					c.n++
				}
				if l == c.maxDef {
					src++
				}
			}
		}
		done += int(lv)
	}
	return nil
}

// lateState is a scan's late materialization (nil: the scan reads every
// column through the record reader).
type lateState struct {
	cols  []*lateCol // the columns the fast path decodes, filter columns first
	byOut []int      // output column -> index in cols (-1: not decoded late)
	nfast int        // cols[:nfast] are filter columns
	// early are the filter columns the record reader reads.
	early []int
	dconj []*dictConj // conjuncts over one column, tried on its dictionary
	conj  []*lateConj

	auto       bool // the adaptive switch may end the late decoding
	ratio      float64
	onePass    bool
	seen, kept int64

	decoded, skipped int64 // rows whose other columns were decoded, skipped
	dictEvals        int   // dictionaries a conjunct was evaluated on
	ownChunks        int   // column chunks read by pageDecoder rather than arrow-go's column readers
	reusedReaders    int   // of them, read by a page reader reset from an earlier chunk of the column
	unopened         int   // column chunks never opened: every row of them was dropped

	left int64 // rows still to read, when no column is read by the record reader
	pick []int32
	gap  int // lateGap

	// fixed allocates the batches' fixed-width columns, recycling the
	// buffers of released batches (recycle.go).
	fixed *recycler
}

// lateConj is a conjunct of the filter, over its own columns.
type lateConj struct {
	cols   []int // output columns, in the order of expr's batch
	expr   *plan.Expr
	bloom  *bloomProbe // instead of expr: a runtime filter's Bloom filter on cols[0]
	schema *arrow.Schema
	dict   *dictConj // its dictionary form, when over one column
	done   bool      // evaluated on the batch at hand
	cache  ExprCache
}

// dictConj is a conjunct over one output column: on a column read as a
// dictionary it is evaluated once per dictionary entry, and the rows'
// indices are looked up.
type dictConj struct {
	out  int
	expr *plan.Expr // over a batch of the one column
	c    *lateConj
	dict arrow.ArrayData
	keep []bool // per dictionary entry, then one for NULL
}

func (d *dictConj) release() {
	if d.dict != nil {
		d.dict.Release()
		d.dict = nil
	}
}

// planLate decides which output columns are decoded late and prepares
// the filter; nil when the scan reads everything at once.
func (s *ParquetScan) planLate() *lateState {
	f := s.n.Scan.Filter
	if s.opts.Late == LateOff || s.deleted != nil {
		return nil
	}
	nout := len(s.colRead)
	var blooms []*bloomProbe
	for _, p := range s.blooms {
		b, err := newBloomProbe(p)
		if err != nil || b.col < 0 || b.col >= nout {
			continue // the Filter above tests it (and reports a bad one)
		}
		blooms = append(blooms, b)
	}
	ok := true
	colsOf := func(e *plan.Expr) []int {
		var out []int
		var walk func(e *plan.Expr)
		walk = func(e *plan.Expr) {
			if e.Op == plan.OpColumn {
				if e.Col < 0 || e.Col >= nout {
					ok = false
				} else if !slices.Contains(out, e.Col) {
					out = append(out, e.Col)
				}
			}
			for _, a := range e.Args {
				walk(a)
			}
		}
		walk(e)
		return out
	}
	l := &lateState{byOut: make([]int, nout), auto: s.opts.Late == LateAuto, ratio: s.opts.LateKeepRatio,
		fixed: newRecycler(s.opts.Mem, s.opts.PoisonFreed, recycleLimit)}
	if l.ratio <= 0 {
		l.ratio = 0.7
	}
	if l.gap = s.opts.lateGap; l.gap <= 0 {
		l.gap = lateGap
	}
	if f == nil && blooms == nil {
		// No filter: one pass from the start, the fast path decoding
		// the columns it covers straight into the engine's layout (and
		// the dictionaries an aggregation asked for as lkDictStr,
		// checked below).
		l.onePass = true
	}
	var fcols []int // filter columns in the order the conjuncts name them
	for _, c := range conjuncts(f) {
		cols := colsOf(c)
		if !ok {
			return nil
		}
		pos := make([]int, nout)
		for i := range pos {
			pos[i] = -1
		}
		var fields []arrow.Field
		for k, j := range cols {
			pos[j] = k
			fields = append(fields, s.schema.Field(j))
			if !slices.Contains(fcols, j) {
				fcols = append(fcols, j)
			}
		}
		e, _ := remapColumns(c, pos)
		lc := &lateConj{cols: cols, expr: e, schema: arrow.NewSchema(fields, nil)}
		if len(cols) == 1 && s.colRead[cols[0]] != nil {
			lc.dict = &dictConj{out: cols[0], expr: e, c: lc}
			l.dconj = append(l.dconj, lc.dict)
		}
		l.conj = append(l.conj, lc)
	}
	for _, b := range blooms {
		l.conj = append(l.conj, &lateConj{cols: []int{b.col}, bloom: b})
		if !slices.Contains(fcols, b.col) {
			fcols = append(fcols, b.col)
		}
	}
	uses := map[int]int{}
	for _, ls := range s.colRead {
		for _, lf := range ls {
			uses[lf]++
		}
	}
	fast := func(i int) lateKind {
		ls := s.colRead[i]
		if len(ls) != 1 || s.outT[i].IsNested() || uses[ls[0]] > 1 {
			return 0
		}
		return lateKindOf(s.md.Schema.Column(ls[0]), s.outT[i])
	}
	if s.dictOut != nil && !s.lateDicts(fast) {
		if l.onePass {
			return nil // the record reader hands the dictionaries over
		}
		// With a filter the record reader is the slower reader: TPC-H
		// Q1 at SF 1 (a filter keeping 98.6% of rows, two string keys)
		// scanned in 1.93 s through it against 1.35 s on the late path,
		// while grouping by index saved 25 ms. So the strings come
		// plain (the aggregation checks each batch's types).
		s.dictOut = nil
	}
	add := func(i int, k lateKind) {
		if k == lkByteText && s.dictOut != nil && s.dictOut[i] {
			k = lkDictStr
		}
		c := s.md.Schema.Column(s.colRead[i][0])
		l.byOut[i] = len(l.cols)
		l.cols = append(l.cols, &lateCol{out: i, leaf: s.colRead[i][0], kind: k, typ: s.outT[i].Arrow(), maxDef: c.MaxDefinitionLevel(), rgi: -1})
	}
	for i := range l.byOut {
		l.byOut[i] = -1
	}
	// Filter columns: decoded by the fast path one after the other, each
	// for the rows the conjuncts before it kept; dictionary strings are
	// read as dictionaries, for their conjuncts to run on the dictionary.
	for _, i := range fcols {
		if s.colRead[i] == nil {
			l.early = append(l.early, i) // all NULL
			continue
		}
		k := fast(i)
		if k == 0 || k == lkByteText && dictionaryOnly(s.md, s.rowGroups, s.colRead[i][0]) {
			l.early = append(l.early, i)
			continue
		}
		add(i, k)
	}
	l.nfast = len(l.cols)
	for i := range s.colRead {
		if slices.Contains(fcols, i) {
			continue
		}
		if k := fast(i); k != 0 {
			add(i, k)
		}
	}
	if len(l.cols) == 0 {
		return nil
	}
	return l
}

// LateRows reports the rows whose late columns were decoded and the rows
// they were skipped for (late_rows_decoded, late_rows_skipped).
func (s *ParquetScan) LateRows() (decoded, skipped int64) {
	if s.late == nil {
		return 0, 0
	}
	return s.late.decoded, s.late.skipped
}

// nextLate is Next of a scan that decodes late.
func (s *ParquetScan) nextLate(ctx context.Context) (arrow.RecordBatch, error) {
	l := s.late
	for {
		var rec arrow.RecordBatch
		var nrows int
		if s.rr != nil {
			if !s.rr.Next() {
				s.done = true
				if err := s.rr.Err(); err != nil {
					return nil, s.readErr(ctx, err)
				}
				return nil, io.EOF
			}
			rec = s.rr.RecordBatch()
			nrows = int(rec.NumRows())
		} else {
			if l.left == 0 {
				s.done = true
				return nil, io.EOF
			}
			nrows = int(min(l.left, int64(s.opts.BatchRows)))
			l.left -= int64(nrows)
		}
		if nrows == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := s.lateBatch(rec, nrows)
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

func releaseMap(m map[int]arrow.Array) {
	for _, a := range m {
		a.Release()
	}
}

// lateBatch filters and assembles the next nrows rows (rec: the record
// reader's columns of them, nil when it reads none); nil when the filter
// keeps none.
func (s *ParquetScan) lateBatch(rec arrow.RecordBatch, nrows int) (arrow.RecordBatch, error) {
	l := s.late
	mem := s.opts.Mem
	avail := map[int]arrow.Array{} // filter columns, for the rows sel
	defer func() { releaseMap(avail) }()
	var sel []int32 // nil: every row
	if !l.onePass {
		var err error
		if sel, err = s.lateFilter(rec, nrows, avail); err != nil {
			return nil, err
		}
		kept := nrows
		if sel != nil {
			kept = len(sel)
		}
		l.seen += int64(nrows)
		l.kept += int64(kept)
		l.decoded += int64(kept)
		l.skipped += int64(nrows - kept)
		if l.auto && l.seen >= lateProbeRows && float64(l.kept) > l.ratio*float64(l.seen) {
			l.onePass = true // the filter keeps nearly everything
		}
		if kept == 0 {
			for _, c := range l.cols[l.nfast:] {
				if err := s.lateReadCol(c, nil, nrows, false); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}
	} else {
		l.decoded += int64(nrows)
	}
	outN := nrows
	if sel != nil {
		outN = len(sel)
	}
	cols := make([]arrow.Array, len(s.readCol))
	fail := func(i int, err error) (arrow.RecordBatch, error) {
		releaseAll(cols)
		return nil, fmt.Errorf("exec: parquet scan of %s: column %q: %w", s.table, s.n.Scan.Columns[i], err)
	}
	for i, rc := range s.readCol {
		var err error
		switch {
		case avail[i] != nil:
			cols[i] = avail[i]
			cols[i].Retain()
		case l.byOut[i] >= 0:
			cols[i], err = s.lateDecode(l.cols[l.byOut[i]], sel, nrows)
		case rc < 0:
			cols[i] = array.MakeArrayOfNull(mem, s.schema.Field(i).Type, outN)
		default:
			cols[i], err = s.earlyCol(rec, i, sel)
		}
		if err != nil {
			return fail(i, err)
		}
	}
	schema := s.schema
	if s.dictOut != nil {
		s.isDict = slices.Grow(s.isDict[:0], len(cols))[:len(cols)]
		for i := range cols {
			s.isDict[i] = l.byOut[i] >= 0 && l.cols[l.byOut[i]].kind == lkDictStr
		}
		schema = s.batchSchema(s.isDict)
	}
	out, err := conformRecord(mem, schema, cols, outN)
	if err != nil {
		return nil, fmt.Errorf("exec: parquet scan of %s: %w", s.table, err)
	}
	return out, nil
}

// lateDecode decodes column c's next nrows rows, rows sel (nil: all).
func (s *ParquetScan) lateDecode(c *lateCol, sel []int32, nrows int) (arrow.Array, error) {
	n := nrows
	if sel != nil {
		n = len(sel)
	}
	c.begin(s.opts.Mem, s.late.fixed, n)
	if err := s.lateReadCol(c, sel, nrows, true); err != nil {
		c.release()
		return nil, err
	}
	return c.finish(s.opts.Mem)
}

// earlyCol converts output column i of a record reader batch to the
// engine's type, rows sel only (nil: all).
func (s *ParquetScan) earlyCol(rec arrow.RecordBatch, i int, sel []int32) (arrow.Array, error) {
	rc := s.readCol[i]
	in := rec.Column(rc)
	if s.paths != nil && s.paths[i] != nil {
		f, err := extractPath(s.opts.Mem, in, s.paths[i])
		if err != nil {
			return nil, err
		}
		in = f
		defer f.Release()
	}
	if s.rawDecimal != nil && s.rawDecimal[rc] != nil {
		in = relabel(in, s.rawDecimal[rc])
		defer in.Release()
	}
	if d, ok := in.(*array.Dictionary); ok && sel != nil {
		return dictGather(s.opts.Mem, d, sel, s.outT[i])
	}
	c, err := s.toEngineCol(i, in)
	if err != nil || sel == nil {
		return c, err
	}
	defer c.Release()
	return take(s.opts.Mem, c, sel)
}

// dictGather converts rows sel of a dictionary array: the dictionary
// once, then the kept rows gathered from it.
func dictGather(mem memory.Allocator, d *array.Dictionary, sel []int32, t plan.DataType) (arrow.Array, error) {
	vals, err := toEngine(mem, d.Dictionary(), t)
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	nvals := vals.Len()
	idx := make([]int32, len(sel))
	for k, r := range sel {
		if d.IsNull(int(r)) {
			idx[k] = -1
			continue
		}
		j := d.GetValueIndex(int(r))
		if j < 0 || j >= nvals {
			return nil, fmt.Errorf("dictionary index %d out of range (%d values)", j, nvals)
		}
		idx[k] = int32(j)
	}
	return takeNullable(mem, vals, idx)
}

// lateFilter evaluates the scan's filter on the next nrows rows, cheapest
// first: conjuncts over a dictionary column on its dictionary, then the
// others as soon as their columns are at hand, the filter columns the
// fast path decodes being decoded one after the other for the rows the
// conjuncts so far kept. It returns the kept rows (nil: all) and leaves
// in avail the filter columns for those rows. A conjunct that fails to
// evaluate keeps the rows (the Filter above reports the error).
func (s *ParquetScan) lateFilter(rec arrow.RecordBatch, nrows int, avail map[int]arrow.Array) ([]int32, error) {
	l := s.late
	mem := s.opts.Mem
	for _, c := range l.conj {
		c.done = false
	}
	var sel []int32
	for _, dc := range l.dconj {
		keep, ok := dc.keepOf(s, rec, nrows)
		if !ok {
			continue
		}
		dc.c.done = true
		d := rec.Column(s.readCol[dc.out]).(*array.Dictionary)
		null := int32(len(keep) - 1)
		idxOf := func(r int) int32 {
			if d.IsNull(r) {
				return null
			}
			return int32(d.GetValueIndex(r))
		}
		next := make([]int32, 0, nrows)
		if sel == nil {
			for r := 0; r < nrows; r++ {
				if keep[idxOf(r)] {
					next = append(next, int32(r))
				}
			}
		} else {
			for _, r := range sel {
				if keep[idxOf(int(r))] {
					next = append(next, r)
				}
			}
		}
		sel = next
	}
	rows := func() int {
		if sel == nil {
			return nrows
		}
		return len(sel)
	}
	// narrow keeps rows keep (positions among the rows sel) of avail.
	narrow := func(keep []int32) error {
		for j, a := range avail {
			t, err := take(mem, a, keep)
			if err != nil {
				return err
			}
			a.Release()
			avail[j] = t
		}
		next := make([]int32, len(keep))
		for k, r := range keep {
			if sel == nil {
				next[k] = r
			} else {
				next[k] = sel[r]
			}
		}
		sel = next
		return nil
	}
	// evalReady evaluates the conjuncts whose columns are all at hand.
	evalReady := func() error {
		for _, c := range l.conj {
			if c.done || rows() == 0 || slices.ContainsFunc(c.cols, func(j int) bool { return avail[j] == nil }) {
				continue
			}
			c.done = true
			if c.bloom != nil {
				all := make([]int32, rows())
				for i := range all {
					all[i] = int32(i)
				}
				keep, err := c.bloom.keepArray(avail[c.cols[0]], all)
				if err != nil || len(keep) == rows() {
					continue // keep the rows: the Filter above decides
				}
				if err := narrow(keep); err != nil {
					return err
				}
				continue
			}
			arrs := make([]arrow.Array, len(c.cols))
			for k, j := range c.cols {
				arrs[k] = avail[j]
			}
			b := array.NewRecordBatch(c.schema, arrs, int64(rows()))
			mask, err := EvalCached(c.expr, b, mem, &c.cache)
			b.Release()
			if err != nil {
				continue // keep the rows: the Filter above decides
			}
			keep, err := selectRows(mask, make([]int32, 0, rows()))
			mask.Release()
			if err != nil || len(keep) == rows() {
				continue
			}
			if err := narrow(keep); err != nil {
				return err
			}
		}
		return nil
	}
	for _, i := range l.early {
		if rows() == 0 {
			break
		}
		var a arrow.Array
		var err error
		if s.readCol[i] < 0 {
			a = array.MakeArrayOfNull(mem, s.schema.Field(i).Type, rows())
		} else if a, err = s.earlyCol(rec, i, sel); err != nil {
			return nil, fmt.Errorf("exec: parquet scan of %s: column %q: %w", s.table, s.n.Scan.Columns[i], err)
		}
		avail[i] = a
	}
	if err := evalReady(); err != nil {
		return nil, err
	}
	for _, c := range l.cols[:l.nfast] {
		if rows() == 0 {
			if err := s.lateReadCol(c, nil, nrows, false); err != nil {
				return nil, err
			}
			continue
		}
		a, err := s.lateDecode(c, sel, nrows)
		if err != nil {
			return nil, err
		}
		avail[c.out] = a
		if err := evalReady(); err != nil {
			return nil, err
		}
	}
	return sel, nil
}

// keepOf returns, when the conjunct's column is a dictionary in rec, the
// conjunct's truth per dictionary entry (and last for NULL); ok is false
// when it is not, or the dictionary is larger than the batch, or the
// conjunct fails on an entry.
func (dc *dictConj) keepOf(s *ParquetScan, rec arrow.RecordBatch, nrows int) ([]bool, bool) {
	if rec == nil {
		return nil, false
	}
	rc := s.readCol[dc.out]
	if rc < 0 {
		return nil, false
	}
	d, ok := rec.Column(rc).(*array.Dictionary)
	if !ok {
		return nil, false
	}
	dict := d.Dictionary()
	if dc.dict == dict.Data() {
		return dc.keep, true
	}
	if dict.Len() > nrows {
		return nil, false
	}
	vals, err := toEngine(s.opts.Mem, dict, s.outT[dc.out])
	if err != nil {
		return nil, false
	}
	idx := make([]int32, vals.Len()+1)
	for i := range idx {
		idx[i] = int32(i)
	}
	idx[len(idx)-1] = -1
	withNull, err := takeNullable(s.opts.Mem, vals, idx)
	vals.Release()
	if err != nil {
		return nil, false
	}
	one := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{s.schema.Field(dc.out)}, nil), []arrow.Array{withNull}, int64(len(idx)))
	withNull.Release()
	defer one.Release()
	mask, err := Eval(dc.expr, one, s.opts.Mem)
	if err != nil {
		return nil, false
	}
	defer mask.Release()
	rows, err := selectRows(mask, nil)
	if err != nil {
		return nil, false
	}
	keep := make([]bool, len(idx))
	for _, r := range rows {
		keep[r] = true
	}
	s.late.dictEvals++
	dc.release()
	dc.dict = dict.Data()
	dc.dict.Retain()
	dc.keep = keep
	return keep, true
}

// lateGap is the shortest run of dropped rows the late columns skip;
// shorter ones are decoded and dropped, which costs less than a call
// into the column reader per run (arrow-go allocates a 4 KiB index
// buffer per call on dictionary pages).
const lateGap = 512

// lateReadCol decodes (decode) or skips column c's next nrows rows,
// keeping rows sel (nil: all); with decode false every row is skipped.
func (s *ParquetScan) lateReadCol(c *lateCol, sel []int32, nrows int, decode bool) error {
	l := s.late
	si := 0
	for pos := 0; pos < nrows; {
		if c.rgLeft == 0 {
			if err := s.lateNextRowGroup(c); err != nil {
				return err
			}
		}
		end := pos + int(min(int64(nrows-pos), c.rgLeft))
		c.rgLeft -= int64(end - pos)
		for pos < end {
			// The next span: rows to skip, or rows to read with the
			// kept ones among them (pick, offsets in the span).
			var k int
			var pick []int32
			read := decode
			switch {
			case !decode, sel == nil:
				k = end - pos
			case si < len(sel) && int(sel[si]) < end && int(sel[si])-pos < l.gap:
				// Read up to the last kept row before a long gap.
				first := si
				last := int(sel[si])
				for si+1 < len(sel) && int(sel[si+1]) < end && int(sel[si+1])-last < l.gap {
					si++
					last = int(sel[si])
				}
				si++
				k = last + 1 - pos
				if si-first != k {
					pick = l.pick[:0]
					for _, r := range sel[first:si] {
						pick = append(pick, int32(int(r)-pos))
					}
					l.pick = pick
				}
			default:
				read = false
				next := end
				if si < len(sel) && int(sel[si]) < end {
					next = int(sel[si])
				}
				k = next - pos
			}
			var err error
			switch {
			case !read && c.closed:
				c.skipped += int64(k)
			case read && c.closed:
				if err = s.lateOpen(c); err != nil {
					return err
				}
				if c.skipped > 0 {
					err = c.skip(c.skipped)
					c.skipped = 0
				}
				if err == nil {
					err = c.read(s.opts.Mem, k, pick)
				}
			case read:
				err = c.read(s.opts.Mem, k, pick)
			default:
				err = c.skip(int64(k))
			}
			if err != nil {
				return s.lateErr(c, err)
			}
			pos += k
		}
	}
	return nil
}

// lateDicts reports whether the late path's page decoder can make the
// dictionaries asked for (EmitDictionaries): every such column a flat
// string, dictionary-only and ownDecodable in every chunk.
func (s *ParquetScan) lateDicts(fast func(int) lateKind) bool {
	if s.opts.arrowPages {
		return false
	}
	for i, want := range s.dictOut {
		if !want {
			continue
		}
		if fast(i) != lkByteText || !dictionaryOnly(s.md, s.rowGroups, s.colRead[i][0]) {
			return false
		}
		leaf := s.colRead[i][0]
		col := s.md.Schema.Column(leaf)
		for _, rg := range s.rowGroups {
			cc, err := s.md.RowGroup(rg).ColumnChunk(leaf)
			if err != nil || !ownDecodable(cc, col.MaxDefinitionLevel(), col.MaxRepetitionLevel()) {
				return false
			}
		}
	}
	return true
}

// lateNextRowGroup moves column c to its next row group, whose chunk it
// opens only when a row of it is decoded (lateOpen).
func (s *ParquetScan) lateNextRowGroup(c *lateCol) error {
	c.rgi++
	if c.rgi >= len(s.rowGroups) {
		return fmt.Errorf("exec: parquet scan of %s: read past the row groups", s.table)
	}
	if c.closed && s.late != nil {
		s.late.unopened++
	}
	c.closeOwn()
	c.rd = nil
	c.rgLeft = s.md.RowGroup(s.rowGroups[c.rgi]).NumRows()
	c.closed, c.skipped = true, 0
	return nil
}

// lateOpen opens column c's reader on the chunk of its row group.
func (s *ParquetScan) lateOpen(c *lateCol) error {
	c.closed = false
	rg := s.pf.RowGroup(s.rowGroups[c.rgi])
	spare, sparePR := c.takeSpare()
	if c.kind == lkDictStr {
		// planLate checked every chunk: dictionary-only, ownDecodable.
		// Only the spare's page reader is reused: the batch may still
		// hold the decoder (c.dicts).
		pr, own, err := s.chunkPageReader(rg, c.leaf, sparePR)
		if err != nil {
			return s.lateErr(c, err)
		}
		c.own, c.ownPR = newBytesDecoder(pr, c.maxDef), own
		s.countOwn(sparePR != nil && own)
		return nil
	}
	if !s.opts.arrowPages {
		col := s.md.Schema.Column(c.leaf)
		cc, err := rg.MetaData().ColumnChunk(c.leaf)
		if err == nil && c.kind != lkBool && ownDecodable(cc, col.MaxDefinitionLevel(), col.MaxRepetitionLevel()) {
			pr, own, err := s.chunkPageReader(rg, c.leaf, sparePR)
			if err != nil {
				return s.lateErr(c, err)
			}
			switch cc.Type() {
			case parquet.Types.ByteArray:
				c.own = reuseBytesDecoder(spare, pr, c.maxDef)
			case parquet.Types.Int32:
				c.own = reusePageDecoder[int32](spare, pr, c.maxDef)
			case parquet.Types.Int64:
				c.own = reusePageDecoder[int64](spare, pr, c.maxDef)
			case parquet.Types.Float:
				c.own = reusePageDecoder[float32](spare, pr, c.maxDef)
			default:
				c.own = reusePageDecoder[float64](spare, pr, c.maxDef)
			}
			c.ownPR = own
			s.countOwn(sparePR != nil && own)
			return nil
		}
	}
	if spare != nil {
		c.spare = spare // kept for a later chunk this reader may decode
	}
	rd, err := s.chunkColumnReader(rg, c.leaf)
	if err != nil {
		return s.lateErr(c, err)
	}
	c.rd = rd
	return nil
}

// countOwn counts a chunk opened for pageDecoder, and whether its page
// reader was reused.
func (s *ParquetScan) countOwn(reused bool) {
	if s.late == nil {
		return
	}
	s.late.ownChunks++
	if reused {
		s.late.reusedReaders++
	}
}

// lateErr classes a failure of a late column: the storage's when a read
// failed, else a corrupt file.
func (s *ParquetScan) lateErr(c *lateCol, err error) error {
	if s.src.ioErr.Load() {
		return fmt.Errorf("exec: parquet scan of %s: column %s: %w", s.table, s.md.Schema.Column(c.leaf).Path(), err)
	}
	return plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("exec: parquet scan of %s: %w: corrupt page in column %s: %v", s.table, ErrCorruptFile,
		s.md.Schema.Column(c.leaf).Path(), err))
}
