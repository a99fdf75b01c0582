package exec

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// kind is the physical layout of an engine-typed Arrow array.
type kind uint8

const (
	kNull    kind = iota // arrow Null
	kBool                // arrow Boolean (bitmap)
	kInt64               // arrow Int64 and Decimal64 (int64 values)
	kFloat64             // arrow Float64
	kDate                // arrow Date32 (int32 values)
	kString              // arrow String (int32 offsets)
	kDec128              // arrow Decimal128 (16-byte values), decimals above 18 digits
	kNested              // arrow List, Map or Struct of engine-typed children
)

func (k kind) String() string {
	return [...]string{"null", "bool", "int64", "float64", "date32", "string", "decimal128", "nested"}[k]
}

// kindOf maps an Arrow type to its engine layout.
func kindOf(t arrow.DataType) (kind, error) {
	switch t.ID() {
	case arrow.NULL:
		return kNull, nil
	case arrow.BOOL:
		return kBool, nil
	case arrow.INT64, arrow.DECIMAL64, arrow.TIMESTAMP:
		return kInt64, nil
	case arrow.DECIMAL128:
		return kDec128, nil
	case arrow.FLOAT64:
		return kFloat64, nil
	case arrow.DATE32:
		return kDate, nil
	case arrow.STRING:
		return kString, nil
	case arrow.LIST, arrow.MAP, arrow.STRUCT:
		return kNested, nil
	}
	return 0, fmt.Errorf("unsupported arrow type %s (not an engine type)", t)
}

// layoutOf is the kind of a's type (kNull for types that are not engine
// types; callers compare it with the kind they expect).
func layoutOf(a arrow.Array) kind {
	k, err := kindOf(a.DataType())
	if err != nil {
		return kNull
	}
	return k
}

// kindOfType is the layout of engine type t.
func kindOfType(t plan.DataType) kind {
	switch t.ID {
	case plan.Bool:
		return kBool
	case plan.Decimal:
		if t.Wide() {
			return kDec128
		}
		return kInt64
	case plan.Int64, plan.Timestamp:
		return kInt64
	case plan.Float64:
		return kFloat64
	case plan.Date:
		return kDate
	case plan.String:
		return kString
	case plan.List, plan.Map, plan.Struct:
		return kNested
	}
	return kNull
}

// ---- raw access -------------------------------------------------------------

// values returns the fixed-width values of a (Int64/Decimal64 as int64,
// Float64, Date32 as int32), adjusted for the array offset.
func values[T int64 | float64 | int32 | int8 | int16 | uint8 | uint16 | uint32 | float32 | uint64 | decimal128.Num](a arrow.Array) []T {
	return kernel.Values[T](a)
}

// strOffsets returns the n+1 offsets and the whole data buffer of a String
// array (offsets index into data directly).
func strOffsets(a arrow.Array) ([]int32, []byte) { return kernel.Offsets[int32](a) }

// bitsOf returns the value bitmap of a Boolean array and its bit offset.
func bitsOf(a arrow.Array) ([]byte, int) { return kernel.Bits(a) }

// validityOf returns a's validity bitmap and bit offset, or nil when a has no
// nulls.
func validityOf(a arrow.Array) ([]byte, int) { return kernel.Validity(a) }

func bit(b []byte, i int) bool { return b[uint(i)>>3]>>(uint(i)&7)&1 != 0 }

func setBit(b []byte, i int) { b[uint(i)>>3] |= 1 << (uint(i) & 7) }

func clearBit(b []byte, i int) { b[uint(i)>>3] &^= 1 << (uint(i) & 7) }

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// isValid reports whether row i of an array with validity (bm, off) is set;
// bm == nil means no nulls.
func isValid(bm []byte, off, i int) bool { return bm == nil || bit(bm, off+i) }

// ---- output buffers ---------------------------------------------------------

func newBuf(mem memory.Allocator, nbytes int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(nbytes)
	return b
}

// newFixed allocates a buffer of n values of T.
func newFixed[T int64 | float64 | int32 | decimal128.Num](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var z T
	b := newBuf(mem, n*int(unsafe.Sizeof(z)))
	if n == 0 {
		return b, nil
	}
	return b, arrow.GetData[T](b.Bytes())[:n]
}

// newBitmap allocates a zeroed bitmap of n bits.
func newBitmap(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	nb := int(bitutil.BytesForBits(int64(n)))
	b := newBuf(mem, nb)
	bs := b.Bytes()[:nb]
	clear(bs)
	return b, bs
}

// newOnes allocates a bitmap of n set bits.
func newOnes(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	b, bs := newBitmap(mem, n)
	for i := range bs {
		bs[i] = 0xff
	}
	return b, bs
}

// makeArray assembles an array from buffers it takes ownership of. valid may
// be nil (no nulls).
func makeArray(t arrow.DataType, n int, valid *memory.Buffer, bufs ...*memory.Buffer) arrow.Array {
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	all := make([]*memory.Buffer, 0, 1+len(bufs))
	all = append(all, valid)
	all = append(all, bufs...)
	d := array.NewData(t, n, all, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	for _, b := range all {
		if b != nil {
			b.Release()
		}
	}
	return a
}

// makeNulls returns an all-NULL array of type t.
func makeNulls(mem memory.Allocator, t arrow.DataType, n int) arrow.Array {
	if t.ID() == arrow.NULL {
		return array.NewNull(n)
	}
	return array.MakeArrayOfNull(mem, t, n)
}

// copyValidity returns a fresh (offset 0) copy of a's validity for n rows,
// or nil when a has no nulls.
func copyValidity(mem memory.Allocator, a arrow.Array) *memory.Buffer {
	if a.DataType().ID() == arrow.NULL {
		b, _ := newBitmap(mem, a.Len())
		return b
	}
	bm, off := validityOf(a)
	if bm == nil {
		return nil
	}
	if off == 0 {
		b := a.Data().Buffers()[0]
		b.Retain()
		return b
	}
	b, bs := newBitmap(mem, a.Len())
	bitutil.CopyBitmap(bm, off, a.Len(), bs, 0)
	return b
}

// andValidity returns the AND of the validity of arrays (each of length n):
// nil when none has nulls. A Null-typed array makes every row invalid.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) *memory.Buffer {
	var out *memory.Buffer
	var outBits []byte
	for _, a := range arrs {
		if a == nil {
			continue
		}
		if a.DataType().ID() == arrow.NULL {
			if out != nil {
				out.Release()
			}
			b, _ := newBitmap(mem, n)
			return b
		}
		bm, off := validityOf(a)
		if bm == nil {
			continue
		}
		if out == nil {
			out, outBits = newBitmap(mem, n)
			bitutil.CopyBitmap(bm, off, n, outBits, 0)
			continue
		}
		bitutil.BitmapAnd(outBits, bm, 0, int64(off), outBits, 0, int64(n))
	}
	return out
}

// ---- string output ----------------------------------------------------------

// strBuilder builds a String array by appending values in row order.
type strBuilder struct {
	mem     memory.Allocator
	offBuf  *memory.Buffer
	offs    []int32
	dataBuf *memory.Buffer
	data    []byte
	used    int
	n       int
	tooBig  bool
}

func newStrBuilder(mem memory.Allocator, rows, dataHint int) *strBuilder {
	s := &strBuilder{mem: mem}
	s.offBuf, s.offs = newFixed[int32](mem, rows+1)
	s.offs[0] = 0
	s.dataBuf = memory.NewResizableBuffer(mem)
	if dataHint < 64 {
		dataHint = 64
	}
	s.dataBuf.Resize(dataHint)
	s.data = s.dataBuf.Bytes()
	return s
}

func (s *strBuilder) grow(extra int) {
	need := s.used + extra
	if need <= len(s.data) {
		return
	}
	if need > math.MaxInt32 {
		s.tooBig = true
	}
	c := 2 * len(s.data)
	if c < need {
		c = need
	}
	s.dataBuf.Resize(c)
	s.data = s.dataBuf.Bytes()
}

func (s *strBuilder) append(b []byte) {
	if s.used+len(b) > len(s.data) {
		s.grow(len(b))
	}
	copy(s.data[s.used:], b)
	s.used += len(b)
	s.n++
	s.offs[s.n] = int32(s.used)
}

func (s *strBuilder) appendString(str string) {
	if s.used+len(str) > len(s.data) {
		s.grow(len(str))
	}
	copy(s.data[s.used:], str)
	s.used += len(str)
	s.n++
	s.offs[s.n] = int32(s.used)
}

// appendEmpty appends an empty value (used for NULL rows).
func (s *strBuilder) appendEmpty() {
	s.n++
	s.offs[s.n] = int32(s.used)
}

// finish returns the array; valid (owned) may be nil.
func (s *strBuilder) finish(valid *memory.Buffer) (arrow.Array, error) {
	if s.tooBig {
		s.offBuf.Release()
		s.dataBuf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, fmt.Errorf("string column exceeds 2 GiB in one batch")
	}
	s.dataBuf.Resize(s.used)
	return makeArray(arrow.BinaryTypes.String, s.n, valid, s.offBuf, s.dataBuf), nil
}

func (s *strBuilder) release() {
	s.offBuf.Release()
	s.dataBuf.Release()
}

// ---- scalars ----------------------------------------------------------------

// broadcast materializes a literal as an array of n rows of type t.
func broadcast(mem memory.Allocator, t plan.DataType, v plan.Value, n int) (arrow.Array, error) {
	at := t.Arrow()
	if v.Null || t.ID == plan.Null {
		return makeNulls(mem, at, n), nil
	}
	switch t.ID {
	case plan.Bool:
		var b *memory.Buffer
		if v.B {
			b, _ = newOnes(mem, n)
		} else {
			b, _ = newBitmap(mem, n)
		}
		return makeArray(at, n, nil, b), nil
	case plan.Int64, plan.Decimal, plan.Timestamp:
		if t.Wide() {
			b, vals := newFixed[decimal128.Num](mem, n)
			d := v.Dec128()
			for i := range vals {
				vals[i] = d
			}
			return makeArray(at, n, nil, b), nil
		}
		b, vals := newFixed[int64](mem, n)
		for i := range vals {
			vals[i] = v.I
		}
		return makeArray(at, n, nil, b), nil
	case plan.Float64:
		b, vals := newFixed[float64](mem, n)
		for i := range vals {
			vals[i] = v.F
		}
		return makeArray(at, n, nil, b), nil
	case plan.Date:
		b, vals := newFixed[int32](mem, n)
		for i := range vals {
			vals[i] = int32(v.I)
		}
		return makeArray(at, n, nil, b), nil
	case plan.String:
		sb := newStrBuilder(mem, n, n*len(v.S))
		for i := 0; i < n; i++ {
			sb.appendString(v.S)
		}
		return sb.finish(nil)
	}
	return nil, fmt.Errorf("cannot broadcast literal of type %s", t)
}

// scalarAt reads row i of a as a literal Value.
func scalarAt(a arrow.Array, i int) plan.Value {
	if a.IsNull(i) {
		return plan.Value{Null: true}
	}
	switch a.DataType().ID() {
	case arrow.BOOL:
		bs, off := bitsOf(a)
		return plan.Value{B: bit(bs, off+i)}
	case arrow.INT64, arrow.DECIMAL64, arrow.TIMESTAMP:
		return plan.Value{I: values[int64](a)[i]}
	case arrow.DECIMAL128:
		return plan.Dec128Value(values[decimal128.Num](a)[i])
	case arrow.FLOAT64:
		return plan.Value{F: values[float64](a)[i]}
	case arrow.DATE32:
		return plan.Value{I: int64(values[int32](a)[i])}
	case arrow.STRING:
		offs, data := strOffsets(a)
		return plan.Value{S: string(data[offs[i]:offs[i+1]])}
	}
	return plan.Value{Null: true}
}

// conform returns a with Arrow type t: a itself (retained) when the types
// are equal, a re-labelled view for decimals of equal scale, an all-NULL
// array for Null-typed input. Otherwise it fails.
func conform(mem memory.Allocator, a arrow.Array, t arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), t) {
		a.Retain()
		return a, nil
	}
	if a.DataType().ID() == arrow.NULL {
		return makeNulls(mem, t, a.Len()), nil
	}
	if at, ok := a.DataType().(*arrow.Decimal64Type); ok {
		if bt, ok := t.(*arrow.Decimal64Type); ok && at.Scale == bt.Scale {
			return relabel(a, t), nil
		}
	}
	if at, ok := a.DataType().(*arrow.Decimal128Type); ok {
		if bt, ok := t.(*arrow.Decimal128Type); ok && at.Scale == bt.Scale {
			return relabel(a, t), nil
		}
	}
	if a.DataType().ID() == arrow.BINARY && t.ID() == arrow.STRING {
		return relabel(a, t), nil
	}
	return nil, fmt.Errorf("column of type %s where %s is expected", a.DataType(), t)
}

// relabel returns a zero-copy view of a with another (layout-compatible) type.
func relabel(a arrow.Array, t arrow.DataType) arrow.Array {
	d := a.Data()
	nd := array.NewData(t, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
	out := array.MakeFromData(nd)
	nd.Release()
	return out
}

// conformRecord builds a record of schema from cols (taking ownership of
// cols), conforming each column's type to the schema.
func conformRecord(mem memory.Allocator, schema *arrow.Schema, cols []arrow.Array, n int) (arrow.RecordBatch, error) {
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	// A mismatch here is a bug in a kernel or the plan, never transient.
	if len(cols) != schema.NumFields() {
		return nil, plan.Errorf(plan.CodeInternal, "%d columns for a schema of %d fields", len(cols), schema.NumFields())
	}
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		if c.Len() != n {
			releaseAll(out)
			return nil, plan.Errorf(plan.CodeInternal, "column %q has %d rows, want %d", schema.Field(i).Name, c.Len(), n)
		}
		cc, err := conform(mem, c, schema.Field(i).Type)
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("column %q: %w", schema.Field(i).Name, err)
		}
		out[i] = cc
	}
	rec := array.NewRecordBatch(schema, out, int64(n))
	releaseAll(out)
	return rec, nil
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// bytesOf is the size of the buffers behind a record (for memory accounting).
func bytesOf(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += arrayBytes(c)
	}
	return n
}

func arrayBytes(a arrow.Array) int64 {
	var n int64
	for _, b := range a.Data().Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range a.Data().Children() {
		arr := array.MakeFromData(c)
		n += arrayBytes(arr)
		arr.Release()
	}
	return n
}
