package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/shuffle/kernel"
)

// hashSeed starts the hash tables' row hashes (see hashColumn).
const hashSeed = 0x243f6a8885a308d3

// normFloat maps -0 to +0 and every NaN to one NaN, so equal keys hash and
// compare equal bitwise.
func normFloat(f float64) uint64 {
	if f == 0 {
		return 0
	}
	if f != f {
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

// hashColumn folds column a into h (len(h) == a.Len()), with the column
// walk the shuffle's partitioning hash uses (kernel.Fold, written once).
// The hash tables start from their own seed (hashSeed), so a table built
// from one shuffle partition is not skewed by the partition's hash bits.
func hashColumn(a arrow.Array, h []uint64) error { return kernel.Fold(a, h[:a.Len()]) }

// keyCol stores one group-key column, one value per group, in a typed
// slice.
type keyCol struct {
	k     kind
	i64   []int64
	f64   []uint64 // normalized float bits
	i32   []int32
	d128  []decimal128.Num
	bl    []bool
	soff  []int64 // len groups+1
	sdata []byte
	valid []bool // nil until the first NULL key
	n     int

	// A nested key (LIST, MAP, STRUCT) is stored as its key encoding
	// (kernel.AppendKey) in the string fields, which is what hashing and
	// equality see; the values themselves are kept for build in nb and
	// chunks (Go-heap arrays), one row per group.
	nested bool
	nb     *kernel.Builder
	chunks []arrow.Array
	starts []int // first group of each chunk
}

func newKeyCol(k kind) *keyCol {
	c := &keyCol{k: k}
	if k == kNested {
		c.k, c.nested = kString, true
	}
	if c.k == kString {
		c.soff = []int64{0}
	}
	return c
}

// encodeNestedKeys returns cols with every nested column replaced by its
// key encodings (a String array); the caller releases the result with
// releaseEncoded(cols, out).
func encodeNestedKeys(cols []arrow.Array) ([]arrow.Array, error) {
	out, copied := cols, false
	for i, c := range cols {
		if !kernel.IsNested(c.DataType()) {
			continue
		}
		if !copied {
			out, copied = append([]arrow.Array(nil), cols...), true
		}
		e, err := kernel.EncodeKeys(memory.DefaultAllocator, c)
		if err != nil {
			releaseEncoded(cols, out)
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func releaseEncoded(cols, enc []arrow.Array) {
	for i := range enc {
		if enc[i] != nil && enc[i] != cols[i] {
			enc[i].Release()
		}
	}
}

// keepNested keeps rows of nested key column a (the values of new groups).
func (c *keyCol) keepNested(a arrow.Array, rows []int32) error {
	if !c.nested || len(rows) == 0 {
		return nil
	}
	if c.nb == nil {
		b, err := kernel.NewBuilder(memory.DefaultAllocator, a.DataType())
		if err != nil {
			return err
		}
		c.nb = b
	}
	return c.nb.Append(a, rows)
}

// buildNested returns the nested keys of groups [lo, hi).
func (c *keyCol) buildNested(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	if c.nb != nil && c.nb.Len() > 0 {
		n := 0
		if len(c.chunks) > 0 {
			last := len(c.chunks) - 1
			n = c.starts[last] + c.chunks[last].Len()
		}
		c.starts = append(c.starts, n)
		c.chunks = append(c.chunks, c.nb.Finish())
	}
	bi, ri := make([]int32, hi-lo), make([]int32, hi-lo)
	k := 0
	for g := lo; g < hi; g++ {
		for k+1 < len(c.starts) && c.starts[k+1] <= g {
			k++
		}
		for k > 0 && c.starts[k] > g {
			k--
		}
		if len(c.chunks) == 0 || g-c.starts[k] >= c.chunks[k].Len() {
			bi[g-lo] = -1 // a group of the NULL-typed column
			continue
		}
		bi[g-lo], ri[g-lo] = int32(k), int32(g-c.starts[k])
	}
	return kernel.TakeMulti(mem, t, c.chunks, bi, ri)
}

func (c *keyCol) bytes() int64 {
	return int64(cap(c.i64)*8 + cap(c.f64)*8 + cap(c.i32)*4 + cap(c.d128)*16 + cap(c.bl) + cap(c.soff)*8 + cap(c.sdata) + cap(c.valid))
}

// appendRows stores the keys of rows (new groups, in group order).
func (c *keyCol) appendRows(a arrow.Array, rows []int32) {
	if a.DataType().ID() == arrow.NULL || c.k == kNull {
		c.markNulls(len(rows), func(int) bool { return false })
		for range rows {
			c.appendZero()
		}
		c.n += len(rows)
		return
	}
	vb, voff := validityOf(a)
	if vb != nil || c.valid != nil {
		c.markNulls(len(rows), func(j int) bool { return isValid(vb, voff, int(rows[j])) })
	}
	switch c.k {
	case kInt64:
		x := values[int64](a)
		for _, r := range rows {
			c.i64 = append(c.i64, x[r])
		}
	case kFloat64:
		x := values[float64](a)
		for _, r := range rows {
			c.f64 = append(c.f64, normFloat(x[r]))
		}
	case kDate:
		x := values[int32](a)
		for _, r := range rows {
			c.i32 = append(c.i32, x[r])
		}
	case kDec128:
		x := values[decimal128.Num](a)
		for _, r := range rows {
			c.d128 = append(c.d128, x[r])
		}
	case kBool:
		bs, off := bitsOf(a)
		for _, r := range rows {
			c.bl = append(c.bl, bit(bs, off+int(r)))
		}
	case kString:
		if d, ok := asDictStrings(a); ok {
			for _, r := range rows {
				c.sdata = append(c.sdata, d.value(int(r))...)
				c.soff = append(c.soff, int64(len(c.sdata)))
			}
			break
		}
		offs, data := strOffsets(a)
		for _, r := range rows {
			c.sdata = append(c.sdata, data[offs[r]:offs[r+1]]...)
			c.soff = append(c.soff, int64(len(c.sdata)))
		}
	}
	if vb != nil {
		// Keep stored values of NULL keys canonical (zero).
		for j, r := range rows {
			if !bit(vb, voff+int(r)) {
				c.zero(c.n + j)
			}
		}
	}
	c.n += len(rows)
}

func (c *keyCol) appendZero() {
	switch c.k {
	case kInt64:
		c.i64 = append(c.i64, 0)
	case kFloat64:
		c.f64 = append(c.f64, 0)
	case kDate:
		c.i32 = append(c.i32, 0)
	case kDec128:
		c.d128 = append(c.d128, decimal128.Num{})
	case kBool:
		c.bl = append(c.bl, false)
	case kString:
		c.soff = append(c.soff, int64(len(c.sdata)))
	}
}

func (c *keyCol) zero(g int) {
	switch c.k {
	case kInt64:
		c.i64[g] = 0
	case kFloat64:
		c.f64[g] = 0
	case kDate:
		c.i32[g] = 0
	case kDec128:
		c.d128[g] = decimal128.Num{}
	case kBool:
		c.bl[g] = false
	case kString:
		// the value bytes stay; equality checks validity first
	}
}

// markNulls appends validity for m new groups.
func (c *keyCol) markNulls(m int, valid func(j int) bool) {
	if c.valid == nil {
		c.valid = make([]bool, c.n, max(c.n+m, 16))
		for i := range c.valid {
			c.valid[i] = true
		}
	}
	for j := 0; j < m; j++ {
		c.valid = append(c.valid, valid(j))
	}
}

func (c *keyCol) isNull(g uint32) bool { return c.valid != nil && !c.valid[g] }

// verify sets bad[i] where the key of row i differs from that of group
// gids[i]; it returns whether any row was bad.
func (c *keyCol) verify(a arrow.Array, gids []uint32, bad []bool) bool {
	any := false
	vb, voff := validityOf(a)
	if a.DataType().ID() == arrow.NULL {
		for i, g := range gids {
			if !c.isNull(g) {
				bad[i], any = true, true
			}
		}
		return any
	}
	if vb != nil || c.valid != nil {
		for i, g := range gids {
			rowNull := !isValid(vb, voff, i)
			if rowNull != c.isNull(g) {
				bad[i], any = true, true
			}
		}
	}
	switch c.k {
	case kInt64:
		x := values[int64](a)
		st := c.i64
		for i, g := range gids {
			if x[i] != st[g] && isValid(vb, voff, i) {
				bad[i], any = true, true
			}
		}
	case kFloat64:
		x := values[float64](a)
		st := c.f64
		for i, g := range gids {
			if normFloat(x[i]) != st[g] && isValid(vb, voff, i) {
				bad[i], any = true, true
			}
		}
	case kDate:
		x := values[int32](a)
		st := c.i32
		for i, g := range gids {
			if x[i] != st[g] && isValid(vb, voff, i) {
				bad[i], any = true, true
			}
		}
	case kDec128:
		x := values[decimal128.Num](a)
		st := c.d128
		for i, g := range gids {
			if x[i] != st[g] && isValid(vb, voff, i) {
				bad[i], any = true, true
			}
		}
	case kBool:
		bs, off := bitsOf(a)
		st := c.bl
		for i, g := range gids {
			if bit(bs, off+i) != st[g] && isValid(vb, voff, i) {
				bad[i], any = true, true
			}
		}
	case kString:
		if d, ok := asDictStrings(a); ok {
			for i, g := range gids {
				if isValid(vb, voff, i) && string(d.value(i)) != string(c.sdata[c.soff[g]:c.soff[g+1]]) {
					bad[i], any = true, true
				}
			}
			break
		}
		offs, data := strOffsets(a)
		for i, g := range gids {
			s := data[offs[i]:offs[i+1]]
			st := c.sdata[c.soff[g]:c.soff[g+1]]
			if string(s) != string(st) && isValid(vb, voff, i) {
				bad[i], any = true, true
			}
		}
	}
	return any
}

// equalRow reports whether row i of a has the key of group g.
func (c *keyCol) equalRow(a arrow.Array, i int, g uint32) bool {
	if a.DataType().ID() == arrow.NULL {
		return c.isNull(g)
	}
	vb, voff := validityOf(a)
	rowNull := !isValid(vb, voff, i)
	if rowNull || c.isNull(g) {
		return rowNull == c.isNull(g)
	}
	switch c.k {
	case kInt64:
		return values[int64](a)[i] == c.i64[g]
	case kFloat64:
		return normFloat(values[float64](a)[i]) == c.f64[g]
	case kDate:
		return values[int32](a)[i] == c.i32[g]
	case kDec128:
		return values[decimal128.Num](a)[i] == c.d128[g]
	case kBool:
		bs, off := bitsOf(a)
		return bit(bs, off+i) == c.bl[g]
	case kString:
		if d, ok := asDictStrings(a); ok {
			return string(d.value(i)) == string(c.sdata[c.soff[g]:c.soff[g+1]])
		}
		offs, data := strOffsets(a)
		return string(data[offs[i]:offs[i+1]]) == string(c.sdata[c.soff[g]:c.soff[g+1]])
	}
	return true
}

// build returns the keys of groups [lo, hi) as an array of type t.
func (c *keyCol) build(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	n := hi - lo
	if c.nested {
		return c.buildNested(mem, t, lo, hi)
	}
	if c.k == kNull {
		return makeNulls(mem, t, n), nil
	}
	var valid *memory.Buffer
	if c.valid != nil {
		var vb []byte
		valid, vb = newBitmap(mem, n)
		for i, ok := range c.valid[lo:hi] {
			if ok {
				setBit(vb, i)
			}
		}
	}
	switch c.k {
	case kInt64:
		buf, out := newFixed[int64](mem, n)
		copy(out, c.i64[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kFloat64:
		buf, out := newFixed[float64](mem, n)
		for i, b := range c.f64[lo:hi] {
			out[i] = math.Float64frombits(b)
		}
		return makeArray(t, n, valid, buf), nil
	case kDate:
		buf, out := newFixed[int32](mem, n)
		copy(out, c.i32[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kDec128:
		buf, out := newFixed[decimal128.Num](mem, n)
		copy(out, c.d128[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kBool:
		buf, out := newBitmap(mem, n)
		for i, b := range c.bl[lo:hi] {
			if b {
				setBit(out, i)
			}
		}
		return makeArray(t, n, valid, buf), nil
	case kString:
		sb := newStrBuilder(mem, n, int(c.soff[hi]-c.soff[lo]))
		for g := lo; g < hi; g++ {
			sb.append(c.sdata[c.soff[g]:c.soff[g+1]])
		}
		return sb.finish(valid)
	}
	if valid != nil {
		valid.Release()
	}
	return nil, fmt.Errorf("unsupported key layout %s", c.k)
}

// groupTable maps multi-column keys to dense group ids (in order of first
// appearance) with open addressing and linear probing. A slot holds the high
// 32 bits of the key hash and group id + 1 (0 = empty); the low hash bits
// choose the slot. Matches on the 32-bit tag are verified against the
// stored keys column by column in typed loops; the rare false match is
// re-probed with full key comparison.
type groupTable struct {
	keys    []*keyCol
	slots   []uint64
	mask    uint64
	hashes  []uint64 // per group, for rehashing
	ngroups int
	dict    *dictCache  // one dictionary key: its entries' groups (hashagg_dict.go)
	dicts   *dictsCache // several dictionary keys: their combinations' groups

	// per-batch scratch
	h       []uint64
	gids    []uint32
	newRows []int32
	bad     []bool
}

const tagMask = 0xffffffff00000000

// testHashMask, when set by tests, degrades every hash to force collisions.
var testHashMask uint64

func newGroupTable(kinds []kind) *groupTable {
	t := &groupTable{}
	for _, k := range kinds {
		t.keys = append(t.keys, newKeyCol(k))
	}
	t.slots = make([]uint64, 256)
	t.mask = 255
	return t
}

func (t *groupTable) bytes() int64 {
	n := int64(cap(t.slots)*8 + cap(t.hashes)*8 + cap(t.h)*8 + cap(t.gids)*4 + cap(t.newRows)*4 + cap(t.bad))
	for _, k := range t.keys {
		n += k.bytes()
	}
	return n + t.dict.bytes() + t.dicts.bytes()
}

func (t *groupTable) grow() {
	size := len(t.slots) * 2
	slots := make([]uint64, size)
	mask := uint64(size - 1)
	for g, h := range t.hashes {
		pos := h & mask
		for slots[pos] != 0 {
			pos = (pos + 1) & mask
		}
		slots[pos] = h&tagMask | uint64(g+1)
	}
	t.slots, t.mask = slots, mask
}

func (t *groupTable) newGroup(h uint64, pos uint64) uint32 {
	g := uint32(t.ngroups)
	t.ngroups++
	t.hashes = append(t.hashes, h)
	t.slots[pos] = h&tagMask | uint64(g+1)
	if t.ngroups*2 > len(t.slots) {
		t.grow()
	}
	return g
}

// insert assigns a group id to every row of the key columns (n rows),
// creating groups for new keys. The returned slice is scratch, valid until
// the next call. A key column may be a dictionary array (asDictStrings) in
// place of a String column; one such key alone is grouped by index
// (insertDict). Nested keys are hashed and compared by their key encoding
// (encodeNestedKeys), and their values kept for the output.
func (t *groupTable) insert(orig []arrow.Array, n int) ([]uint32, error) {
	if len(orig) == 1 && t.keys[0].k == kString {
		if d, ok := asDictStrings(orig[0]); ok {
			return t.insertDict(orig[0], d, n)
		}
	}
	if len(orig) > 1 {
		if ds, ok := t.allDicts(orig); ok {
			return t.insertDicts(orig, ds, n)
		}
	}
	cols, err := encodeNestedKeys(orig)
	if err != nil {
		return nil, err
	}
	defer releaseEncoded(orig, cols)
	return t.insertPlain(orig, cols, n)
}

// insertPlain is insert hashing and comparing every row's keys (cols:
// orig with nested keys encoded).
func (t *groupTable) insertPlain(orig, cols []arrow.Array, n int) ([]uint32, error) {
	var err error
	if cap(t.h) < n {
		t.h = make([]uint64, n)
		t.gids = make([]uint32, n)
		t.bad = make([]bool, n)
	}
	h, gids := t.h[:n], t.gids[:n]
	for i := range h {
		h[i] = hashSeed
	}
	for _, c := range cols {
		if err := hashColumn(c, h); err != nil {
			return nil, err
		}
	}
	if testHashMask != 0 {
		for i := range h {
			h[i] &= testHashMask
		}
	}
	t.newRows = t.newRows[:0]
	for i := 0; i < n; i++ {
		hv := h[i]
		if i > 0 && hv == h[i-1] {
			// A run of one key (a table clustered by it): the row before's
			// group, without a probe. verify checks it as any other.
			gids[i] = gids[i-1]
			continue
		}
		tag := hv & tagMask
		pos := hv & t.mask
		for {
			s := t.slots[pos]
			if s == 0 {
				gids[i] = t.newGroup(hv, pos)
				t.newRows = append(t.newRows, int32(i))
				break
			}
			if s&tagMask == tag {
				gids[i] = uint32(s) - 1
				break
			}
			pos = (pos + 1) & t.mask
		}
	}
	for k, c := range t.keys {
		c.appendRows(cols[k], t.newRows)
		if err := c.keepNested(orig[k], t.newRows); err != nil {
			return nil, err
		}
	}
	bad := t.bad[:n]
	anyBad := false
	for k, c := range t.keys {
		if c.verify(cols[k], gids, bad) {
			anyBad = true
		}
	}
	if anyBad {
		for i := 0; i < n; i++ {
			if bad[i] {
				bad[i] = false
				if gids[i], err = t.probeSlow(orig, cols, i, h[i]); err != nil {
					return nil, err
				}
			}
		}
	}
	return gids, nil
}

// probeSlow finds or creates the group of row i comparing full keys.
func (t *groupTable) probeSlow(orig, cols []arrow.Array, i int, hv uint64) (uint32, error) {
	tag := hv & tagMask
	pos := hv & t.mask
	for {
		s := t.slots[pos]
		if s == 0 {
			g := t.newGroup(hv, pos)
			for k, c := range t.keys {
				c.appendRows(cols[k], []int32{int32(i)})
				if err := c.keepNested(orig[k], []int32{int32(i)}); err != nil {
					return 0, err
				}
			}
			return g, nil
		}
		if s&tagMask == tag {
			g := uint32(s) - 1
			eq := true
			for k, c := range t.keys {
				if !c.equalRow(cols[k], i, g) {
					eq = false
					break
				}
			}
			if eq {
				return g, nil
			}
		}
		pos = (pos + 1) & t.mask
	}
}

// noGroup is the group id lookup reports for a key that is not in the table.
const noGroup = math.MaxUint32

// lookup finds the group of every row's key (n rows) without creating
// groups: noGroup where the key is absent. Like insert, it hashes all key
// columns, probes on the 32-bit tag and verifies tag matches column by
// column in typed loops, re-probing false matches with full comparison.
// NULL keys are looked up like any value (a NULL matches a stored NULL):
// callers that want SQL equality exclude them. The returned slice is
// scratch, valid until the next call.
func (t *groupTable) lookup(orig []arrow.Array, n int) ([]uint32, error) {
	cols, err := encodeNestedKeys(orig)
	if err != nil {
		return nil, err
	}
	defer releaseEncoded(orig, cols)
	if cap(t.h) < n {
		t.h = make([]uint64, n)
		t.gids = make([]uint32, n)
		t.bad = make([]bool, n)
	}
	h, gids := t.h[:n], t.gids[:n]
	for i := range h {
		h[i] = hashSeed
	}
	for _, c := range cols {
		if err := hashColumn(c, h); err != nil {
			return nil, err
		}
	}
	if testHashMask != 0 {
		for i := range h {
			h[i] &= testHashMask
		}
	}
	cand := t.newRows[:0]
	for i := 0; i < n; i++ {
		hv := h[i]
		if i > 0 && hv == h[i-1] {
			// A run of one key: the row before's group (or none), without
			// a probe; a candidate is verified as any other.
			if gids[i] = gids[i-1]; gids[i] != noGroup {
				cand = append(cand, int32(i))
			}
			continue
		}
		tag := hv & tagMask
		pos := hv & t.mask
		for {
			s := t.slots[pos]
			if s == 0 {
				gids[i] = noGroup
				break
			}
			if s&tagMask == tag {
				gids[i] = uint32(s) - 1
				cand = append(cand, int32(i))
				break
			}
			pos = (pos + 1) & t.mask
		}
	}
	t.newRows = cand
	bad := t.bad[:len(cand)]
	anyBad := false
	for k, c := range t.keys {
		if c.verifyRows(cols[k], cand, gids, bad) {
			anyBad = true
		}
	}
	if anyBad {
		for j, r := range cand {
			if bad[j] {
				bad[j] = false
				gids[r] = t.findSlow(cols, int(r), h[r])
			}
		}
	}
	return gids, nil
}

// findSlow finds the group of row i comparing full keys (noGroup if absent).
func (t *groupTable) findSlow(cols []arrow.Array, i int, hv uint64) uint32 {
	tag := hv & tagMask
	pos := hv & t.mask
	for {
		s := t.slots[pos]
		if s == 0 {
			return noGroup
		}
		if s&tagMask == tag {
			g := uint32(s) - 1
			eq := true
			for k, c := range t.keys {
				if !c.equalRow(cols[k], i, g) {
					eq = false
					break
				}
			}
			if eq {
				return g
			}
		}
		pos = (pos + 1) & t.mask
	}
}

// verifyRows is verify over a selection: for each j it compares the key of
// row rows[j] with that of group gids[rows[j]] and sets bad[j] on a
// difference; it returns whether any was bad.
func (c *keyCol) verifyRows(a arrow.Array, rows []int32, gids []uint32, bad []bool) bool {
	any := false
	if a.DataType().ID() == arrow.NULL {
		for j, r := range rows {
			if !c.isNull(gids[r]) {
				bad[j], any = true, true
			}
		}
		return any
	}
	vb, voff := validityOf(a)
	if vb != nil || c.valid != nil {
		for j, r := range rows {
			if !isValid(vb, voff, int(r)) != c.isNull(gids[r]) {
				bad[j], any = true, true
			}
		}
	}
	switch c.k {
	case kInt64:
		x, st := values[int64](a), c.i64
		for j, r := range rows {
			if x[r] != st[gids[r]] && isValid(vb, voff, int(r)) {
				bad[j], any = true, true
			}
		}
	case kFloat64:
		x, st := values[float64](a), c.f64
		for j, r := range rows {
			if normFloat(x[r]) != st[gids[r]] && isValid(vb, voff, int(r)) {
				bad[j], any = true, true
			}
		}
	case kDate:
		x, st := values[int32](a), c.i32
		for j, r := range rows {
			if x[r] != st[gids[r]] && isValid(vb, voff, int(r)) {
				bad[j], any = true, true
			}
		}
	case kDec128:
		x, st := values[decimal128.Num](a), c.d128
		for j, r := range rows {
			if x[r] != st[gids[r]] && isValid(vb, voff, int(r)) {
				bad[j], any = true, true
			}
		}
	case kBool:
		bs, off := bitsOf(a)
		st := c.bl
		for j, r := range rows {
			if bit(bs, off+int(r)) != st[gids[r]] && isValid(vb, voff, int(r)) {
				bad[j], any = true, true
			}
		}
	case kString:
		if d, ok := asDictStrings(a); ok {
			for j, r := range rows {
				g := gids[r]
				if isValid(vb, voff, int(r)) && string(d.value(int(r))) != string(c.sdata[c.soff[g]:c.soff[g+1]]) {
					bad[j], any = true, true
				}
			}
			break
		}
		offs, data := strOffsets(a)
		for j, r := range rows {
			g := gids[r]
			if string(data[offs[r]:offs[r+1]]) != string(c.sdata[c.soff[g]:c.soff[g+1]]) && isValid(vb, voff, int(r)) {
				bad[j], any = true, true
			}
		}
	}
	return any
}
