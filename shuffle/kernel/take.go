package kernel

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The typed take/gather: rows of arrays copied by index into new arrays,
// written once per physical layout (bits, fixed-width values of 1 to 16
// bytes, 32- or 64-bit offsets and bytes). The executor's take (filters,
// sorts, joins, spills) and the shuffle writer's partitioning both use it.
//
// It works on raw buffers, not on arrow's builders: a gather of fixed-width
// values is a plain typed loop. Negative indexes (in the *Nullable forms and
// TakeMulti) yield NULL. Sources may be sliced (non-zero offset); results
// have offset 0.

// layout is the physical layout of a column type.
type layout uint8

const (
	lNull    layout = iota // no buffers
	lBool                  // value bitmap
	lFixed1                // fixed-width values of 1, 2, 4, 8 or 16 bytes
	lFixed2                //
	lFixed4                //
	lFixed8                //
	lFixed16               //
	lVar32                 // int32 offsets and bytes (String, Binary)
	lVar64                 // int64 offsets and bytes (LargeString)
	lList                  // int32 offsets and a child builder (nested.go)
	lMap                   // a list of key/value structs
	lStruct                // a child builder per field
)

// layoutOf returns the layout of columns of type t.
func layoutOf(t arrow.DataType) (layout, bool) {
	switch t.ID() {
	case arrow.NULL:
		return lNull, true
	case arrow.BOOL:
		return lBool, true
	case arrow.STRING, arrow.BINARY:
		return lVar32, true
	case arrow.LARGE_STRING:
		return lVar64, true
	case arrow.INT8, arrow.UINT8:
		return lFixed1, true
	case arrow.INT16, arrow.UINT16:
		return lFixed2, true
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		return lFixed4, true
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIMESTAMP, arrow.DECIMAL64:
		return lFixed8, true
	case arrow.DECIMAL128:
		return lFixed16, true
	}
	return nestedLayout(t)
}

// width is the value width in bytes of a fixed layout (offset width for
// variable layouts).
func (l layout) width() int {
	switch l {
	case lFixed1:
		return 1
	case lFixed2:
		return 2
	case lFixed4, lVar32, lList, lMap:
		return 4
	case lFixed8, lVar64:
		return 8
	case lFixed16:
		return 16
	}
	return 0
}

// TakeSupported reports whether Take and Builder handle columns of type t.
func TakeSupported(t arrow.DataType) bool {
	l, ok := layoutOf(t)
	return ok && (!l.nested() || nestedSupported(t))
}

// Take gathers rows idx (each in [0, a.Len())) of a into a new array
// allocated from mem.
func Take(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	return takeOne(mem, a, idx, false)
}

// TakeNullable is Take where a negative index yields NULL (a may then be
// empty).
func TakeNullable(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	return takeOne(mem, a, idx, true)
}

func takeOne(mem memory.Allocator, a arrow.Array, idx []int32, nullable bool) (arrow.Array, error) {
	b, err := NewBuilder(mem, a.DataType())
	if err != nil {
		return nil, err
	}
	b.Reserve(len(idx))
	if err := b.append(a, idx, nullable); err != nil {
		b.Release()
		return nil, err
	}
	return b.Finish(), nil
}

// TakeMulti gathers rows (srcs[bi[i]], ri[i]) of several arrays of t's
// layout into one array of type t. A negative bi[i] yields NULL (srcs may
// then be empty).
func TakeMulti(mem memory.Allocator, t arrow.DataType, srcs []arrow.Array, bi, ri []int32) (arrow.Array, error) {
	b, err := NewBuilder(mem, t)
	if err != nil {
		return nil, err
	}
	b.Reserve(len(bi))
	if err := b.AppendMulti(srcs, bi, ri); err != nil {
		b.Release()
		return nil, err
	}
	return b.Finish(), nil
}

// Builder accumulates gathered rows of one column type in buffers that grow
// geometrically; Finish hands them over as an array and resets it. The
// shuffle writer keeps one per partition and column. A Builder is not safe
// for concurrent use.
type Builder struct {
	t     arrow.DataType
	lay   layout
	mem   memory.Allocator
	n     int            // rows
	nulls int            // NULL rows
	valid *memory.Buffer // validity bitmap; nil while every row is valid
	vals  *memory.Buffer // value bitmap, fixed-width values, or n+1 offsets
	data  *memory.Buffer // bytes of variable-width values
	used  int            // bytes of data in use
	kids  []*Builder     // child builders of a nested layout
	// lastRows and lastBytes are the rows and variable-width bytes of the
	// last array finished: Reserve sizes the bytes of the next from them.
	lastRows, lastBytes int
}

// NewBuilder returns an empty builder of columns of type t.
func NewBuilder(mem memory.Allocator, t arrow.DataType) (*Builder, error) {
	l, ok := layoutOf(t)
	if !ok {
		return nil, fmt.Errorf("unsupported column type %s", t)
	}
	b := &Builder{t: t, lay: l, mem: mem}
	if l.nested() {
		if err := b.newKids(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Len returns the number of rows appended since the last Finish.
func (b *Builder) Len() int { return b.n }

// Bytes returns the bytes the rows appended since the last Finish take in
// the builder's buffers (values, offsets, validity, string bytes and
// nested children): about the size of the array Finish returns.
func (b *Builder) Bytes() int {
	n := b.used
	for _, buf := range []*memory.Buffer{b.valid, b.vals} {
		if buf != nil {
			n += buf.Len()
		}
	}
	for _, k := range b.kids {
		n += k.Bytes()
	}
	return n
}

// Reserve makes room for n more rows without further allocation; for
// variable-width layouts also for their bytes, at the average width of
// the last array finished (none before the first Finish): a shuffle
// partition's builder is finished batch after batch, and growing its
// bytes by doubling allocated, zeroed and copied them about twice over.
func (b *Builder) Reserve(n int) {
	b.grow(n, false)
	if (b.lay == lVar32 || b.lay == lVar64) && b.lastRows > 0 && n > 0 {
		b.data = b.growBytes(b.data, b.used+int(int64(n)*int64(b.lastBytes)/int64(b.lastRows)), false)
	}
}

// grow makes room for k more rows: exactly, or (geometric) at least doubling
// a buffer that must grow.
func (b *Builder) grow(k int, geometric bool) {
	need := b.n + k
	switch b.lay {
	case lNull:
		return
	case lBool:
		b.vals = b.growBits(b.vals, need, geometric)
	case lStruct:
	case lVar32, lVar64, lList, lMap:
		fresh := b.vals == nil
		b.vals = b.growBytes(b.vals, (need+1)*b.lay.width(), geometric)
		if fresh {
			clear(b.vals.Bytes()[:b.lay.width()]) // offsets[0] = 0
		}
	default:
		b.vals = b.growBytes(b.vals, need*b.lay.width(), geometric)
	}
	if b.valid != nil {
		b.valid = b.growBits(b.valid, need, geometric)
	}
}

// growBytes returns buf (allocated if nil) with length at least size.
func (b *Builder) growBytes(buf *memory.Buffer, size int, geometric bool) *memory.Buffer {
	if buf == nil {
		buf = memory.NewResizableBuffer(b.mem)
	}
	if size <= buf.Len() {
		return buf
	}
	if size > buf.Cap() && geometric {
		buf.Reserve(max(size, 2*buf.Cap()))
	}
	buf.ResizeNoShrink(size)
	return buf
}

// growBits returns bitmap buf grown to at least n bits, new bytes zeroed.
func (b *Builder) growBits(buf *memory.Buffer, n int, geometric bool) *memory.Buffer {
	old := 0
	if buf != nil {
		old = buf.Len()
	}
	buf = b.growBytes(buf, int(bitutil.BytesForBits(int64(n))), geometric)
	clear(buf.Bytes()[old:])
	return buf
}

// markValid starts the validity bitmap (every row so far valid) before a
// NULL may be appended among the next k rows.
func (b *Builder) markValid(k int) {
	if b.valid != nil {
		return
	}
	b.valid = b.growBits(nil, b.n+k, false)
	bitutil.SetBitsTo(b.valid.Bytes(), 0, int64(b.n), true)
}

// Append appends rows idx (each in [0, src.Len())) of src, which must have
// the builder's layout.
func (b *Builder) Append(src arrow.Array, idx []int32) error { return b.append(src, idx, false) }

// AppendNullable is Append where a negative index appends NULL.
func (b *Builder) AppendNullable(src arrow.Array, idx []int32) error {
	return b.append(src, idx, true)
}

func (b *Builder) check(src arrow.Array) error {
	if l, ok := layoutOf(src.DataType()); !ok || l != b.lay {
		return fmt.Errorf("take: %s source for a %s column", src.DataType(), b.t)
	}
	return nil
}

func (b *Builder) append(src arrow.Array, idx []int32, nullable bool) error {
	if err := b.check(src); err != nil {
		return err
	}
	k := len(idx)
	if b.lay == lNull {
		b.n += k
		b.nulls += k
		return nil
	}
	if b.lay == lVar32 || b.lay == lVar64 {
		// Check the bytes fit before changing anything.
		if err := b.reserveVar(src, idx, nullable); err != nil {
			return err
		}
	}
	b.grow(k, true)
	b.appendValidity(src, idx, nullable)
	if b.lay.nested() {
		if err := b.appendNested(src, idx, nullable); err != nil {
			return err
		}
		b.n += k
		return nil
	}
	switch b.lay {
	case lBool:
		bs, off := Bits(src)
		out := b.vals.Bytes()
		if nullable {
			for i, j := range idx {
				if j >= 0 && bit(bs, off+int(j)) {
					setBit(out, b.n+i)
				}
			}
		} else {
			for i, j := range idx {
				if bit(bs, off+int(j)) {
					setBit(out, b.n+i)
				}
			}
		}
	case lFixed1:
		appendFixed[uint8](b, src, idx, nullable)
	case lFixed2:
		appendFixed[uint16](b, src, idx, nullable)
	case lFixed4:
		appendFixed[uint32](b, src, idx, nullable)
	case lFixed8:
		appendFixed[uint64](b, src, idx, nullable)
	case lFixed16:
		appendFixed[u128](b, src, idx, nullable)
	case lVar32:
		appendVar[int32](b, src, idx, nullable)
	case lVar64:
		appendVar[int64](b, src, idx, nullable)
	}
	b.n += k
	return nil
}

// appendValidity sets the validity of the k rows about to be appended.
func (b *Builder) appendValidity(src arrow.Array, idx []int32, nullable bool) {
	bm, off := Validity(src)
	if bm == nil && !nullable {
		if b.valid != nil {
			bitutil.SetBitsTo(b.valid.Bytes(), int64(b.n), int64(len(idx)), true)
		}
		return
	}
	b.markValid(len(idx))
	out := b.valid.Bytes()
	nulls := 0
	switch {
	case !nullable:
		for i, j := range idx {
			if bit(bm, off+int(j)) {
				setBit(out, b.n+i)
			} else {
				nulls++
			}
		}
	case bm == nil:
		for i, j := range idx {
			if j >= 0 {
				setBit(out, b.n+i)
			} else {
				nulls++
			}
		}
	default:
		for i, j := range idx {
			if j >= 0 && bit(bm, off+int(j)) {
				setBit(out, b.n+i)
			} else {
				nulls++
			}
		}
	}
	b.nulls += nulls
}

// u128 is a 16-byte value (Decimal128).
type u128 struct{ lo, hi uint64 }

func appendFixed[T uint8 | uint16 | uint32 | uint64 | u128](b *Builder, src arrow.Array, idx []int32, nullable bool) {
	vals := Values[T](src)
	out := asSlice[T](b.vals.Bytes())[b.n : b.n+len(idx)]
	if !nullable {
		for i, j := range idx {
			out[i] = vals[j]
		}
		return
	}
	var zero T
	for i, j := range idx {
		if j >= 0 {
			out[i] = vals[j]
		} else {
			out[i] = zero
		}
	}
}

// reserveVar makes room for the bytes of rows idx of src.
func (b *Builder) reserveVar(src arrow.Array, idx []int32, nullable bool) error {
	var total int
	if b.lay == lVar32 {
		offs, _ := Offsets[int32](src)
		total = varBytes(offs, idx, nullable)
	} else {
		offs, _ := Offsets[int64](src)
		total = varBytes(offs, idx, nullable)
	}
	if b.lay == lVar32 && b.used+total > math.MaxInt32 {
		return fmt.Errorf("string column exceeds 2 GiB in one batch")
	}
	b.data = b.growBytes(b.data, b.used+total, true)
	return nil
}

func varBytes[O int32 | int64](offs []O, idx []int32, nullable bool) int {
	total := 0
	if nullable {
		for _, j := range idx {
			if j >= 0 {
				total += int(offs[j+1] - offs[j])
			}
		}
		return total
	}
	for _, j := range idx {
		total += int(offs[j+1] - offs[j])
	}
	return total
}

// appendVar copies the bytes of rows idx (room made by reserveVar).
func appendVar[O int32 | int64](b *Builder, src arrow.Array, idx []int32, nullable bool) {
	offs, data := Offsets[O](src)
	out := asSlice[O](b.vals.Bytes())[b.n+1 : b.n+1+len(idx)]
	d := b.data.Bytes()
	pos := b.used
	for i, j := range idx {
		if !nullable || j >= 0 {
			pos += copy(d[pos:], data[offs[j]:offs[j+1]])
		}
		out[i] = O(pos)
	}
	b.used = pos
}

// AppendMulti appends rows (srcs[bi[i]], ri[i]) of several arrays of the
// builder's layout; a negative bi[i] appends NULL.
func (b *Builder) AppendMulti(srcs []arrow.Array, bi, ri []int32) error {
	for _, s := range srcs {
		if err := b.check(s); err != nil {
			return err
		}
	}
	k := len(bi)
	if b.lay == lNull {
		b.n += k
		b.nulls += k
		return nil
	}
	if b.lay.nested() {
		return b.appendMultiNested(srcs, bi, ri)
	}
	neg := false
	for _, s := range bi {
		if s < 0 {
			neg = true
			break
		}
	}
	if b.lay == lVar32 || b.lay == lVar64 {
		// Size the bytes from the sources' average value length (rows are
		// gathered in random order: one pass over them is enough); appends
		// grow the buffer beyond it if needed.
		var srcBytes, srcRows int
		for _, s := range srcs {
			srcBytes += varSpan(b.lay, s)
			srcRows += s.Len()
		}
		b.data = b.growBytes(b.data, b.used, false)
		if srcRows > 0 {
			if hint := b.used + int(float64(srcBytes)/float64(srcRows)*float64(k)*1.1); hint > b.data.Cap() {
				b.data.Reserve(hint)
			}
		}
		b.data.ResizeNoShrink(b.data.Cap()) // bytes past used are free room
	}
	b.grow(k, true)
	b.appendMultiValidity(srcs, bi, ri, neg)
	var err error
	switch b.lay {
	case lBool:
		appendMultiBool(b, srcs, bi, ri, neg)
	case lFixed1:
		appendMultiFixed[uint8](b, srcs, bi, ri, neg)
	case lFixed2:
		appendMultiFixed[uint16](b, srcs, bi, ri, neg)
	case lFixed4:
		appendMultiFixed[uint32](b, srcs, bi, ri, neg)
	case lFixed8:
		appendMultiFixed[uint64](b, srcs, bi, ri, neg)
	case lFixed16:
		appendMultiFixed[u128](b, srcs, bi, ri, neg)
	case lVar32:
		err = appendMultiVar[int32](b, srcs, bi, ri)
	case lVar64:
		err = appendMultiVar[int64](b, srcs, bi, ri)
	}
	if err != nil {
		// Undo the rows' validity; their values are past n.
		if b.valid != nil {
			b.nulls -= k - bitutil.CountSetBits(b.valid.Bytes(), b.n, k)
			bitutil.SetBitsTo(b.valid.Bytes(), int64(b.n), int64(k), false)
		}
		return err
	}
	b.n += k
	return nil
}

func varSpan(l layout, a arrow.Array) int {
	if l == lVar32 {
		offs, _ := Offsets[int32](a)
		return int(offs[len(offs)-1] - offs[0])
	}
	offs, _ := Offsets[int64](a)
	return int(offs[len(offs)-1] - offs[0])
}

func (b *Builder) appendMultiValidity(srcs []arrow.Array, bi, ri []int32, neg bool) {
	type vinfo struct {
		bm  []byte
		off int
	}
	vs := make([]vinfo, len(srcs))
	anyNull := false
	for s, a := range srcs {
		vs[s].bm, vs[s].off = Validity(a)
		anyNull = anyNull || vs[s].bm != nil
	}
	if !anyNull && !neg {
		if b.valid != nil {
			bitutil.SetBitsTo(b.valid.Bytes(), int64(b.n), int64(len(bi)), true)
		}
		return
	}
	b.markValid(len(bi))
	out := b.valid.Bytes()
	nulls := 0
	for i, s := range bi {
		if s >= 0 {
			if v := vs[s]; v.bm == nil || bit(v.bm, v.off+int(ri[i])) {
				setBit(out, b.n+i)
				continue
			}
		}
		nulls++
	}
	b.nulls += nulls
}

func appendMultiBool(b *Builder, srcs []arrow.Array, bi, ri []int32, neg bool) {
	type bsrc struct {
		bs  []byte
		off int
	}
	ss := make([]bsrc, len(srcs))
	for s, a := range srcs {
		ss[s].bs, ss[s].off = Bits(a)
	}
	out := b.vals.Bytes()
	for i, s := range bi {
		if neg && s < 0 {
			continue
		}
		if v := ss[s]; bit(v.bs, v.off+int(ri[i])) {
			setBit(out, b.n+i)
		}
	}
}

func appendMultiFixed[T uint8 | uint16 | uint32 | uint64 | u128](b *Builder, srcs []arrow.Array, bi, ri []int32, neg bool) {
	vals := make([][]T, len(srcs))
	for s, a := range srcs {
		vals[s] = Values[T](a)
	}
	out := asSlice[T](b.vals.Bytes())[b.n : b.n+len(bi)]
	if !neg {
		for i, s := range bi {
			out[i] = vals[s][ri[i]]
		}
		return
	}
	var zero T
	for i, s := range bi {
		if s >= 0 {
			out[i] = vals[s][ri[i]]
		} else {
			out[i] = zero
		}
	}
}

func appendMultiVar[O int32 | int64](b *Builder, srcs []arrow.Array, bi, ri []int32) error {
	type vsrc struct {
		offs []O
		data []byte
	}
	ss := make([]vsrc, len(srcs))
	for s, a := range srcs {
		ss[s].offs, ss[s].data = Offsets[O](a)
	}
	out := asSlice[O](b.vals.Bytes())[b.n+1 : b.n+1+len(bi)]
	d := b.data.Bytes()
	pos := b.used
	for i, s := range bi {
		if s >= 0 {
			v := &ss[s]
			j := ri[i]
			val := v.data[v.offs[j]:v.offs[j+1]]
			if pos+len(val) > len(d) {
				if unsafe.Sizeof(O(0)) == 4 && pos+len(val) > math.MaxInt32 {
					return fmt.Errorf("string column exceeds 2 GiB in one batch")
				}
				b.data = b.growBytes(b.data, pos+len(val), true)
				b.data.ResizeNoShrink(b.data.Cap())
				d = b.data.Bytes()
			}
			pos += copy(d[pos:], val)
		}
		out[i] = O(pos)
	}
	b.used = pos
	return nil
}

// Finish returns the rows appended so far as an array (offset 0, exact
// buffers) and resets the builder.
func (b *Builder) Finish() arrow.Array {
	n := b.n
	if b.lay == lNull {
		b.n, b.nulls = 0, 0
		return array.NewNull(n)
	}
	if b.lay.nested() {
		return b.finishNested()
	}
	b.grow(0, false) // allocate the buffers of an empty array
	switch b.lay {
	case lBool:
		b.vals.Resize(int(bitutil.BytesForBits(int64(n))))
	case lVar32, lVar64:
		b.vals.Resize((n + 1) * b.lay.width())
	default:
		b.vals.Resize(n * b.lay.width())
	}
	valid, nulls := b.valid, b.nulls
	if valid != nil && nulls == 0 {
		valid.Release()
		valid = nil
	}
	if valid != nil {
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
	}
	bufs := []*memory.Buffer{valid, b.vals}
	if b.lay == lVar32 || b.lay == lVar64 {
		b.data = b.growBytes(b.data, 0, false)
		b.data.Resize(b.used)
		bufs = append(bufs, b.data)
	}
	d := array.NewData(b.t, n, bufs, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	for _, buf := range bufs {
		if buf != nil {
			buf.Release()
		}
	}
	b.lastRows, b.lastBytes = n, b.used
	b.n, b.nulls, b.used = 0, 0, 0
	b.valid, b.vals, b.data = nil, nil, nil
	return a
}

// Release frees the builder's buffers (the rows appended since Finish).
func (b *Builder) Release() {
	for _, k := range b.kids {
		k.Release()
	}
	for _, buf := range []*memory.Buffer{b.valid, b.vals, b.data} {
		if buf != nil {
			buf.Release()
		}
	}
	b.n, b.nulls, b.used = 0, 0, 0
	b.valid, b.vals, b.data = nil, nil, nil
}

// ---- raw access (the executor's too) ----------------------------------------

func asSlice[T any](b []byte) []T {
	var z T
	w := int(unsafe.Sizeof(z))
	if len(b) < w {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/w)
}

// Values returns the fixed-width values of a (T of the values' width),
// with a's offset applied; nil for an empty array.
func Values[T any](a arrow.Array) []T {
	d := a.Data()
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil || a.Len() == 0 {
		return nil
	}
	off := d.Offset()
	return asSlice[T](bufs[1].Bytes())[off : off+a.Len()]
}

// Offsets returns the n+1 offsets of a String or Binary (int32) or
// LargeString (int64) array a, its offset applied, and its whole data
// buffer (the offsets index into it directly).
func Offsets[O int32 | int64](a arrow.Array) ([]O, []byte) {
	d := a.Data()
	bufs := d.Buffers()
	if a.Len() == 0 || len(bufs) < 2 || bufs[1] == nil {
		return []O{0}, nil
	}
	off := d.Offset()
	var data []byte
	if len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	return asSlice[O](bufs[1].Bytes())[off : off+a.Len()+1], data
}

// Bits returns the value bitmap of a Boolean array and its bit offset.
func Bits(a arrow.Array) ([]byte, int) {
	d := a.Data()
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return nil, 0
	}
	return bufs[1].Bytes(), d.Offset()
}

// Validity returns a's validity bitmap and bit offset, or nil when a has
// no nulls (a Null-typed array too: it has no bitmap).
func Validity(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 || a.DataType().ID() == arrow.NULL {
		return nil, 0
	}
	d := a.Data()
	if d.Buffers()[0] == nil {
		return nil, 0
	}
	return d.Buffers()[0].Bytes(), d.Offset()
}

func bit(b []byte, i int) bool { return b[uint(i)>>3]>>(uint(i)&7)&1 != 0 }

func setBit(b []byte, i int) { b[uint(i)>>3] |= 1 << (uint(i) & 7) }
