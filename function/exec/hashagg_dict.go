package exec

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Aggregation by dictionary index. A Parquet column chunk of strings is
// usually dictionary-encoded: a few distinct strings and, per row, an
// index into them. When a partial or single aggregation groups by such a
// column read straight from a Parquet scan, the scan hands the column over
// as an arrow Dictionary array (int32 indices into an engine String
// dictionary; ParquetScan.EmitDictionaries) instead of gathering one
// string per row, and the group table works on the indices:
//
//   - one dictionary key: each dictionary entry a batch uses is looked up
//     (or inserted) in the group table once, hashed and compared as the
//     plain string would be; every row then takes its entry's group id.
//     The entry → group map is kept while batches bring the same dictionary
//     (the same row group's column chunk), so a row group's strings are
//     hashed once, not once per row.
//   - a dictionary key with other keys: the dictionary is hashed once per
//     batch (kernel.Fold) and rows are compared with their entry's bytes.
//
// Strings are copied only into the groups' key storage, once per group, and
// come out as plain strings: the aggregation's output never holds a
// dictionary. Every other consumer of a scan (filters, projections, joins,
// the shuffle) still gets plain strings: only an aggregation directly over
// the scan asks for dictionaries (dictKeyColumns), and a file whose chunks
// are not dictionary-only (a writer that fell back to plain pages) is read
// as plain strings, which hash and compare equal to the dictionary form.

// dictStrings is an engine dictionary array's view: int32 indices (a NULL
// row is a NULL index) into a String dictionary of no NULLs.
type dictStrings struct {
	idx  []int32
	offs []int32
	data []byte
}

// asDictStrings returns the view of a when it is a dictionary array of
// int32 indices into a String dictionary without NULLs.
func asDictStrings(a arrow.Array) (dictStrings, bool) {
	d, ok := a.(*array.Dictionary)
	if !ok {
		return dictStrings{}, false
	}
	ix, ok := d.Indices().(*array.Int32)
	if !ok || d.Dictionary().DataType().ID() != arrow.STRING || d.Dictionary().NullN() > 0 {
		return dictStrings{}, false
	}
	offs, data := strOffsets(d.Dictionary())
	return dictStrings{idx: ix.Int32Values(), offs: offs, data: data}, true
}

// value is the bytes of row i's entry (nil for an index out of range, which
// only a NULL row may have).
func (d dictStrings) value(i int) []byte {
	e := d.idx[i]
	if e < 0 || int(e) >= len(d.offs)-1 {
		return nil
	}
	return d.data[d.offs[e]:d.offs[e+1]]
}

// plainKey returns a group key column in its plain layout: a dictionary
// array gathered into strings, anything else as it is (retained).
func plainKey(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	if _, ok := a.(*array.Dictionary); !ok {
		a.Retain()
		return a, nil
	}
	return toEngineLayout(mem, a)
}

// dictCache maps the entries of the dictionary last seen by a one-key
// group table to their groups.
type dictCache struct {
	offs    []int32 // the dictionary, copied (offsets from 0)
	data    []byte
	gid     []uint32 // per entry; noGroup until a row uses it
	nullGid uint32   // the NULL key's group; noGroup until a row is NULL
	pending []int32  // scratch: entries to resolve
	rows    []int32  // scratch: a row of each
}

// same reports whether dictionary view d is the cached dictionary.
func (c *dictCache) same(d dictStrings) bool {
	n := len(d.offs) - 1
	if c.gid == nil || len(c.gid) != n {
		return false
	}
	base := d.offs[0]
	if !bytes.Equal(c.data, d.data[base:d.offs[n]]) {
		return false
	}
	for i, o := range d.offs {
		if o-base != c.offs[i] {
			return false
		}
	}
	return true
}

// reset makes d the cached dictionary, no entry resolved.
func (c *dictCache) reset(d dictStrings) {
	n := len(d.offs) - 1
	base := d.offs[0]
	c.data = append(c.data[:0], d.data[base:d.offs[n]]...)
	c.offs = c.offs[:0]
	for _, o := range d.offs {
		c.offs = append(c.offs, o-base)
	}
	c.gid = slices.Grow(c.gid[:0], n)[:n]
	for i := range c.gid {
		c.gid[i] = noGroup
	}
}

func (c *dictCache) bytes() int64 {
	if c == nil {
		return 0
	}
	return int64(cap(c.offs)*4 + cap(c.data) + cap(c.gid)*4 + cap(c.pending)*4 + cap(c.rows)*4)
}

// insertDict is insert for one dictionary-encoded key column a (n rows):
// each entry the rows use is inserted once as the plain string would be
// (same hash, same group), then every row takes its entry's group.
func (t *groupTable) insertDict(a arrow.Array, d dictStrings, n int) ([]uint32, error) {
	if t.dict == nil {
		t.dict = &dictCache{nullGid: noGroup}
	}
	c := t.dict
	if !c.same(d) {
		c.reset(d)
	}
	vb, voff := validityOf(a)
	nd := int32(len(c.gid))
	// The entries (and NULL) used for the first time, with a row of each.
	const pendingMark = noGroup - 1
	c.pending, c.rows = c.pending[:0], c.rows[:0]
	nullRow := int32(-1)
	for i, e := range d.idx[:n] {
		if vb != nil && !bit(vb, voff+i) {
			if c.nullGid == noGroup && nullRow < 0 {
				nullRow = int32(i)
			}
			continue
		}
		if e < 0 || e >= nd {
			t.dict = nil // entries left marked pending
			return nil, fmt.Errorf("dictionary index %d out of range (%d values)", e, nd)
		}
		if c.gid[e] == noGroup {
			c.gid[e] = pendingMark
			c.pending = append(c.pending, e)
			c.rows = append(c.rows, int32(i))
		}
	}
	if nullRow >= 0 {
		c.rows = append(c.rows, nullRow)
	}
	if len(c.rows) > 0 {
		// Resolve them through the plain path: the rows' strings gathered
		// (a few per dictionary), hashed, found or inserted.
		plain, err := takeNullable(memory.DefaultAllocator, a.(*array.Dictionary).Dictionary(), dictRows(d, vb, voff, c.rows))
		if err != nil {
			t.dict = nil
			return nil, err
		}
		gids, err := t.insertPlain([]arrow.Array{plain}, []arrow.Array{plain}, plain.Len())
		plain.Release()
		if err != nil {
			t.dict = nil
			return nil, err
		}
		for j, e := range c.pending {
			c.gid[e] = gids[j]
		}
		if nullRow >= 0 {
			c.nullGid = gids[len(c.pending)]
		}
	}
	if cap(t.gids) < n {
		t.gids = make([]uint32, n)
	}
	gids := t.gids[:n]
	gm := c.gid
	if vb == nil {
		for i, e := range d.idx[:n] {
			gids[i] = gm[e]
		}
		return gids, nil
	}
	for i, e := range d.idx[:n] {
		if bit(vb, voff+i) {
			gids[i] = gm[e]
		} else {
			gids[i] = c.nullGid
		}
	}
	return gids, nil
}

// maxDictCodes bounds the combinations of entries (NULL counted as one) of
// several dictionary keys grouped by index (insertDicts).
const maxDictCodes = 1 << 16

// dictsCache maps the combinations of the entries of the dictionaries
// last seen by a group table of several dictionary keys to their groups.
type dictsCache struct {
	dicts   []dictCache // per key: the dictionary, copied (gid unused)
	stride  []int32     // per key: the code of entry 1 (entry e adds e*stride)
	gid     []uint32    // per combination code; noGroup until a row uses it
	codes   []int32     // scratch: per row
	pending []int32     // scratch: codes to resolve
	rows    []int32     // scratch: a row of each
}

func (c *dictsCache) bytes() int64 {
	if c == nil {
		return 0
	}
	n := int64(cap(c.gid)*4 + cap(c.codes)*4 + cap(c.pending)*4 + cap(c.rows)*4)
	for i := range c.dicts {
		n += c.dicts[i].bytes()
	}
	return n
}

// allDicts returns the dictionary views of key columns orig when every one
// is a dictionary of Strings (asDictStrings) and their entries (and NULL)
// combine in at most maxDictCodes codes.
func (t *groupTable) allDicts(orig []arrow.Array) ([]dictStrings, bool) {
	ds := make([]dictStrings, len(orig))
	codes := 1
	for i, a := range orig {
		if t.keys[i].k != kString {
			return nil, false
		}
		d, ok := asDictStrings(a)
		if !ok {
			return nil, false
		}
		if codes *= len(d.offs); codes > maxDictCodes {
			return nil, false
		}
		ds[i] = d
	}
	return ds, true
}

// insertDicts is insert for several dictionary-encoded key columns (n
// rows): each row's combination of entries is a code (entry e of key k,
// or NULL as one past its last entry, times the entries of the keys before
// it), each code the rows use is inserted once as the plain strings would
// be (same hashes, same group), and every row takes its code's group. The
// code -> group map is kept while batches bring the same dictionaries.
// (TPC-H Q1 groups 6 million rows by two one-letter flags, three and two
// distinct values: six codes, resolved once per row group.)
func (t *groupTable) insertDicts(orig []arrow.Array, ds []dictStrings, n int) ([]uint32, error) {
	if t.dicts == nil || len(t.dicts.dicts) != len(ds) {
		t.dicts = &dictsCache{dicts: make([]dictCache, len(ds)), stride: make([]int32, len(ds))}
	}
	c := t.dicts
	same := c.gid != nil
	for k, d := range ds {
		same = same && c.dicts[k].same(d)
	}
	if !same {
		size := int32(1)
		for k, d := range ds {
			c.dicts[k].reset(d)
			c.stride[k] = size
			size *= int32(len(d.offs)) // its entries and NULL
		}
		c.gid = slices.Grow(c.gid[:0], int(size))[:size]
		for i := range c.gid {
			c.gid[i] = noGroup
		}
	}
	c.codes = slices.Grow(c.codes[:0], n)[:n]
	codes := c.codes
	clear(codes)
	for k, d := range ds {
		vb, voff := validityOf(orig[k])
		nd := int32(len(d.offs) - 1)
		st := c.stride[k]
		for i, e := range d.idx[:n] {
			if vb != nil && !bit(vb, voff+i) {
				e = nd
			} else if e < 0 || e >= nd {
				t.dicts = nil
				return nil, fmt.Errorf("dictionary index %d out of range (%d values)", e, nd)
			}
			codes[i] += e * st
		}
	}
	// The codes used for the first time, with a row of each.
	const pendingMark = noGroup - 1
	c.pending, c.rows = c.pending[:0], c.rows[:0]
	gm := c.gid
	for i, code := range codes {
		if gm[code] == noGroup {
			gm[code] = pendingMark
			c.pending = append(c.pending, code)
			c.rows = append(c.rows, int32(i))
		}
	}
	if len(c.rows) > 0 {
		// Resolve them through the plain path: the rows' strings gathered
		// (a few per dictionary), hashed, found or inserted.
		plain := make([]arrow.Array, len(ds))
		var err error
		for k, d := range ds {
			vb, voff := validityOf(orig[k])
			if plain[k], err = takeNullable(memory.DefaultAllocator, orig[k].(*array.Dictionary).Dictionary(), dictRows(d, vb, voff, c.rows)); err != nil {
				break
			}
		}
		var gids []uint32
		if err == nil {
			gids, err = t.insertPlain(plain, plain, len(c.rows))
		}
		releaseAll(plain)
		if err != nil {
			t.dicts = nil // codes left marked pending
			return nil, err
		}
		for j, code := range c.pending {
			gm[code] = gids[j]
		}
	}
	if cap(t.gids) < n {
		t.gids = make([]uint32, n)
	}
	gids := t.gids[:n]
	for i, code := range codes {
		gids[i] = gm[code]
	}
	return gids, nil
}

// dictRows is the dictionary entries of rows (-1 for a NULL row), for a
// gather of their strings.
func dictRows(d dictStrings, vb []byte, voff int, rows []int32) []int32 {
	out := make([]int32, len(rows))
	for j, r := range rows {
		if vb != nil && !bit(vb, voff+int(r)) {
			out[j] = -1
		} else {
			out[j] = d.idx[r]
		}
	}
	return out
}

// dictKey returns group key g of rec when it is a column the scan handed
// over as a dictionary array (retained); nil when it is not. A dictionary
// of another shape than asDictStrings takes is gathered into plain
// strings.
func dictKey(mem memory.Allocator, g *plan.Expr, rec arrow.RecordBatch) (arrow.Array, error) {
	if g.Op != plan.OpColumn || g.Col < 0 || g.Col >= int(rec.NumCols()) {
		return nil, nil
	}
	a, ok := rec.Column(g.Col).(*array.Dictionary)
	if !ok {
		return nil, nil
	}
	if _, ok := asDictStrings(a); !ok {
		return plainKey(mem, a)
	}
	a.Retain()
	return a, nil
}

// dictKeyColumns lists the scan columns an aggregation node n may receive
// as dictionary arrays: n is a partial or single aggregation over a
// Parquet scan, directly or through filters (which gather a dictionary
// column's indices) and projections (which pass a bare column reference
// through), and the column is a String group key used by nothing else
// (no aggregate argument, no other key or projected expression, no
// filter), so only the group table ever sees its dictionary form. Nil when there is
// none.
func dictKeyColumns(n *plan.Node) []int {
	a := n.Aggregate
	if a == nil || (a.Mode != plan.AggPartial && a.Mode != plan.AggSingle) || len(n.Inputs) != 1 {
		return nil
	}
	// keyOf and uses are in the numbering of the columns of in, the node
	// the walk below has reached.
	keyOf := map[int]bool{}
	uses := map[int]int{} // column -> references outside bare group keys
	for _, g := range a.GroupBy {
		if g.Op == plan.OpColumn && g.Type.ID == plan.String {
			keyOf[g.Col] = true
			continue
		}
		for _, c := range g.Columns() {
			uses[c]++
		}
	}
	for _, c := range a.Aggs {
		if c.Arg != nil {
			for _, col := range c.Arg.Columns() {
				uses[col]++
			}
		}
	}
	in := n.Inputs[0]
walk:
	for len(in.Inputs) == 1 {
		switch {
		case in.Kind == plan.KindFilter && len(in.Schema) == len(in.Inputs[0].Schema):
			// Filters keep the scan's columns; the ones they test are
			// read as plain strings.
			if in.Predicate != nil {
				for _, c := range in.Predicate.Columns() {
					uses[c]++
				}
			}
			if in.Bloom != nil {
				uses[in.Bloom.Column]++
			}
		case in.Kind == plan.KindProject && len(in.Exprs) == len(in.Schema):
			// A projection passes a key through when it is a bare
			// column reference; every other expression is evaluated
			// over plain strings, so the columns it reads are uses.
			key, use := map[int]bool{}, map[int]int{}
			for i, e := range in.Exprs {
				if keyOf[i] && uses[i] == 0 && e.Op == plan.OpColumn {
					key[e.Col] = true
					continue
				}
				for _, c := range e.Columns() {
					use[c]++
				}
			}
			keyOf, uses = key, use
		default:
			break walk
		}
		in = in.Inputs[0]
	}
	scan := in
	if scan.Kind != plan.KindScan || scan.Scan == nil {
		return nil
	}
	switch scan.Scan.Format {
	case "", "parquet", "iceberg":
	default:
		return nil
	}
	var out []int
	for c := range keyOf {
		if uses[c] == 0 && c >= 0 && c < len(scan.Schema) && scan.Schema[c].Type.ID == plan.String {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// DictionaryEmitter is a scan that can hand some of its String columns
// over as dictionary arrays (see dictKeyColumns): EmitDictionaries is
// called before the first Next with the columns' indexes in the scan's
// schema, and reports whether the scan may do so.
type DictionaryEmitter interface {
	EmitDictionaries(cols []int) bool
}

// unmetered is the operator under op's metering wrapper.
func unmetered(op Operator) Operator {
	for {
		m, ok := op.(*opMeter)
		if !ok {
			return op
		}
		op = m.op
	}
}
