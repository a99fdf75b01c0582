package exec

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// sortOp is a stable sort by SortKeys; with Limit >= 0 a top-k that keeps
// only the best rows seen so far (Offset is not applied here).
//
// Input batches are retained with their evaluated sort keys. The keys are
// flattened into typed per-key slices over all rows; a permutation of row
// ids is sorted (ties broken by arrival order, which makes it stable) and
// the output gathered in batches of BatchRows. The top-k variant compacts
// its buffer to the best k rows whenever it holds 2k rows, and afterwards
// drops incoming rows that do not beat the current k-th row.
type sortOp struct {
	in     Operator
	keys   []plan.SortKey
	limit  int64
	schema *arrow.Schema
	opts   Options
	res    *reservation

	batches []arrow.RecordBatch
	keyArrs [][]arrow.Array // per batch, per key
	rows    int
	held    int64

	boundary []arrow.Array // top-k: key values of the k-th row (1 row each)

	runs  []*spillFile // sorted runs spilled to disk (external sort)
	merge *sortMerge

	sorted   bool
	perm     []int32
	rowBatch []int32
	rowIdx   []int32
	emitted  int
	nout     int
	closed   bool
}

// NewSort sorts in by n.SortKeys (a top-k when n.Limit >= 0).
func NewSort(in Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if len(n.SortKeys) == 0 {
		return nil, fmt.Errorf("exec: sort: no sort keys")
	}
	for i, k := range n.SortKeys {
		if k.Expr == nil {
			return nil, fmt.Errorf("exec: sort: key %d has no expression", i)
		}
	}
	return &sortOp{in: in, keys: n.SortKeys, limit: n.Limit, schema: n.Schema.Arrow(), opts: opts,
		res: opts.Pool.reserve("sort")}, nil
}

func (s *sortOp) Schema() *arrow.Schema { return s.schema }

func (s *sortOp) Close() error {
	if !s.closed {
		s.closed = true
		s.releaseBuffered()
		s.res.release()
		if s.merge != nil {
			s.merge.close()
		}
		for _, f := range s.runs {
			f.remove()
		}
	}
	return s.in.Close()
}

func (s *sortOp) releaseBuffered() {
	for _, b := range s.batches {
		b.Release()
	}
	for _, ks := range s.keyArrs {
		releaseAll(ks)
	}
	releaseAll(s.boundary)
	s.batches, s.keyArrs, s.boundary = nil, nil, nil
	s.rows, s.held = 0, 0
}

func (s *sortOp) topK() bool { return s.limit >= 0 }

// handOff reports whether a full sort that fit in memory should still
// write its rows to disk before it emits them: when it holds more than
// half of the task's budget and spilling is possible. An in-memory sort
// holds every input row until its last output row is out, so the
// operator above it (a string_agg's or a window's aggregation, a merge)
// would get only what is left: a single-mode aggregate over a sort of
// 250 KB under a 256 KiB budget failed with SL104 while the same rows
// with more beside them, which made the sort spill, passed. A run on
// disk is read back a batch at a time.
func (s *sortOp) handOff() bool {
	if s.topK() || s.res == nil || s.res.p == nil || !s.res.p.CanSpill() {
		return false
	}
	return s.res.held > s.res.p.Limit()/2
}

func (s *sortOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !s.sorted {
		if s.topK() && s.limit == 0 {
			return nil, io.EOF
		}
		if err := s.consume(ctx); err != nil {
			return nil, err
		}
		s.sorted = true
		// A sort that spilled merges its runs; one that fit but holds
		// more than half the budget (handOff) writes its buffer as the
		// one run, so the operators reading its output have the rest.
		if len(s.runs) > 0 || s.handOff() {
			if err := s.spillRun(); err != nil {
				return nil, err
			}
			if err := s.startMerge(ctx); err != nil {
				return nil, err
			}
		} else if err := s.sortAll(); err != nil {
			return nil, err
		}
	}
	if s.merge != nil {
		return s.merge.next(ctx)
	}
	if s.emitted >= s.nout {
		s.releaseBuffered()
		s.res.release()
		return nil, io.EOF
	}
	lo := s.emitted
	hi := min(s.nout, lo+s.opts.BatchRows)
	rec, err := s.gather(s.perm[lo:hi])
	if err != nil {
		return nil, fmt.Errorf("exec: sort: %w", err)
	}
	s.emitted = hi
	return rec, nil
}

func (s *sortOp) consume(ctx context.Context) error {
	mem := s.opts.Mem
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := s.in.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		keys := make([]arrow.Array, len(s.keys))
		for i, k := range s.keys {
			a, err := evalSortKey(k.Expr, rec, mem)
			if err != nil {
				releaseAll(keys)
				rec.Release()
				return fmt.Errorf("exec: sort key %d: %w", i, err)
			}
			keys[i] = a
		}
		if s.boundary != nil {
			rec, keys, err = s.dropWorse(rec, keys)
			if err != nil {
				return fmt.Errorf("exec: sort: %w", err)
			}
			if rec == nil {
				continue
			}
		}
		s.batches = append(s.batches, rec)
		s.keyArrs = append(s.keyArrs, keys)
		s.rows += int(rec.NumRows())
		s.held += bytesOf(rec)
		for _, k := range keys {
			s.held += arrayBytes(k)
		}
		// flattened keys and permutation take ~16 bytes per row and key
		need := s.held + int64(s.rows)*int64(8+8*len(s.keys))
		if !s.topK() && s.res.spill(need) {
			if err := s.spillRun(); err != nil {
				return err
			}
		} else if err := s.res.set(need); err != nil {
			return err
		}
		if s.topK() && int64(s.rows) >= max(2*s.limit, 1024) {
			if err := s.compact(); err != nil {
				return fmt.Errorf("exec: sort: %w", err)
			}
		}
	}
}

// compact keeps the best limit rows of the buffer in one batch.
func (s *sortOp) compact() error {
	if err := s.sortAll(); err != nil {
		return err
	}
	keep := s.perm[:s.nout]
	bi := make([]int32, len(keep))
	ri := make([]int32, len(keep))
	for j, r := range keep {
		bi[j], ri[j] = s.rowBatch[r], s.rowIdx[r]
	}
	rec, err := s.gather(keep)
	if err != nil {
		return err
	}
	keys := make([]arrow.Array, len(s.keys))
	for k := range s.keys {
		srcs := make([]arrow.Array, len(s.keyArrs))
		for b := range s.keyArrs {
			srcs[b] = s.keyArrs[b][k]
		}
		a, err := takeMulti(s.opts.Mem, srcs[0].DataType(), srcs, bi, ri)
		if err != nil {
			rec.Release()
			releaseAll(keys)
			return err
		}
		keys[k] = a
	}
	s.releaseBuffered()
	s.perm, s.rowBatch, s.rowIdx, s.nout = nil, nil, nil, 0
	s.batches = []arrow.RecordBatch{rec}
	s.keyArrs = [][]arrow.Array{keys}
	s.rows = int(rec.NumRows())
	s.held = bytesOf(rec)
	for _, k := range keys {
		s.held += arrayBytes(k)
	}
	if int64(s.rows) == s.limit {
		last := []int32{int32(s.rows - 1)}
		s.boundary = make([]arrow.Array, len(keys))
		for k, a := range keys {
			b, err := take(s.opts.Mem, a, last)
			if err != nil {
				return err
			}
			s.boundary[k] = b
		}
	}
	return s.res.set(s.held)
}

// dropWorse keeps the rows of rec that sort strictly before the boundary
// row (ties lose: the boundary arrived first).
func (s *sortOp) dropWorse(rec arrow.RecordBatch, keys []arrow.Array) (arrow.RecordBatch, []arrow.Array, error) {
	flat, err := s.flatten([][]arrow.Array{s.boundary, keys})
	if err != nil {
		releaseAll(keys)
		rec.Release()
		return nil, nil, err
	}
	n := int(rec.NumRows())
	var sel []int32
	for i := 0; i < n; i++ {
		if compareRows(flat, int32(i+1), 0) < 0 {
			sel = append(sel, int32(i))
		}
	}
	if len(sel) == n {
		return rec, keys, nil
	}
	if len(sel) == 0 {
		releaseAll(keys)
		rec.Release()
		return nil, nil, nil
	}
	out, err := takeRecord(s.opts.Mem, rec, sel)
	rec.Release()
	if err != nil {
		releaseAll(keys)
		return nil, nil, err
	}
	nkeys := make([]arrow.Array, len(keys))
	for i, k := range keys {
		nk, err := take(s.opts.Mem, k, sel)
		if err != nil {
			releaseAll(nkeys)
			releaseAll(keys)
			out.Release()
			return nil, nil, err
		}
		nkeys[i] = nk
	}
	releaseAll(keys)
	return out, nkeys, nil
}

// sortAll sorts the buffered rows into s.perm (s.nout rows to emit).
func (s *sortOp) sortAll() error {
	n := s.rows
	s.rowBatch = make([]int32, n)
	s.rowIdx = make([]int32, n)
	r := 0
	for b, rec := range s.batches {
		for i := 0; i < int(rec.NumRows()); i++ {
			s.rowBatch[r], s.rowIdx[r] = int32(b), int32(i)
			r++
		}
	}
	flat, err := s.flatten(s.keyArrs)
	if err != nil {
		return err
	}
	s.perm = sortPerm(flat, n)
	s.nout = n
	if s.topK() && int64(n) > s.limit {
		s.nout = int(s.limit)
	}
	return nil
}

func (s *sortOp) gather(rows []int32) (arrow.RecordBatch, error) {
	bi := make([]int32, len(rows))
	ri := make([]int32, len(rows))
	for j, r := range rows {
		bi[j], ri[j] = s.rowBatch[r], s.rowIdx[r]
	}
	cols := make([]arrow.Array, s.schema.NumFields())
	srcs := make([]arrow.Array, len(s.batches))
	for c := range cols {
		for b, rec := range s.batches {
			if int(rec.NumCols()) <= c {
				releaseAll(cols)
				return nil, fmt.Errorf("input batch has %d columns, schema %d", rec.NumCols(), len(cols))
			}
			srcs[b] = rec.Column(c)
		}
		a, err := takeMulti(s.opts.Mem, s.batches[0].Column(c).DataType(), srcs, bi, ri)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("column %q: %w", s.schema.Field(c).Name, err)
		}
		cols[c] = a
	}
	return conformRecord(s.opts.Mem, s.schema, cols, len(rows))
}

// ---- flattened keys ---------------------------------------------------------

// flatKey is one sort key over all buffered rows, in a typed slice.
type flatKey struct {
	k          kind
	desc       bool
	nullsFirst bool
	i64        []int64
	f64        []float64
	i32        []int32
	d128       []decimal128.Num
	bl         []bool
	str        []string // views of the Arrow buffers (valid while the batches are held)
	null       []bool   // nil: no NULLs
}

func (s *sortOp) flatten(keyArrs [][]arrow.Array) ([]*flatKey, error) {
	total := 0
	for _, ks := range keyArrs {
		if len(ks) > 0 {
			total += ks[0].Len()
		}
	}
	out := make([]*flatKey, len(s.keys))
	for k, sk := range s.keys {
		f := &flatKey{k: kNull, desc: sk.Desc, nullsFirst: sk.NullsFirst}
		for _, ks := range keyArrs {
			if kk := layoutOf(ks[k]); kk != kNull {
				f.k = kk
				break
			}
		}
		switch f.k {
		case kInt64:
			f.i64 = make([]int64, 0, total)
		case kFloat64:
			f.f64 = make([]float64, 0, total)
		case kDate:
			f.i32 = make([]int32, 0, total)
		case kDec128:
			f.d128 = make([]decimal128.Num, 0, total)
		case kBool:
			f.bl = make([]bool, 0, total)
		case kString:
			f.str = make([]string, 0, total)
		}
		pos := 0
		for _, ks := range keyArrs {
			a := ks[k]
			n := a.Len()
			kk := layoutOf(a)
			if kk != f.k && kk != kNull {
				return nil, fmt.Errorf("sort key %d has mixed types %s and %s", k, f.k, kk)
			}
			if kk == kNull || a.NullN() > 0 {
				if f.null == nil {
					f.null = make([]bool, total)
				}
				vb, voff := validityOf(a)
				for i := 0; i < n; i++ {
					f.null[pos+i] = kk == kNull || !bit(vb, voff+i)
				}
			}
			switch {
			case kk == kNull:
				for i := 0; i < n; i++ {
					switch f.k {
					case kInt64:
						f.i64 = append(f.i64, 0)
					case kFloat64:
						f.f64 = append(f.f64, 0)
					case kDate:
						f.i32 = append(f.i32, 0)
					case kDec128:
						f.d128 = append(f.d128, decimal128.Num{})
					case kBool:
						f.bl = append(f.bl, false)
					case kString:
						f.str = append(f.str, "")
					}
				}
			case f.k == kInt64:
				f.i64 = append(f.i64, values[int64](a)...)
			case f.k == kFloat64:
				f.f64 = append(f.f64, values[float64](a)...)
			case f.k == kDate:
				f.i32 = append(f.i32, values[int32](a)...)
			case f.k == kDec128:
				f.d128 = append(f.d128, values[decimal128.Num](a)...)
			case f.k == kBool:
				bs, off := bitsOf(a)
				for i := 0; i < n; i++ {
					f.bl = append(f.bl, bit(bs, off+i))
				}
			case f.k == kString:
				offs, data := strOffsets(a)
				for i := 0; i < n; i++ {
					b := data[offs[i]:offs[i+1]]
					if len(b) == 0 {
						f.str = append(f.str, "")
					} else {
						f.str = append(f.str, unsafe.String(&b[0], len(b)))
					}
				}
			}
			pos += n
		}
		out[k] = f
	}
	return out, nil
}

// cmpFloat orders floats with NaN after every number (as DuckDB does).
func cmpFloat(a, b float64) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

func (f *flatKey) cmp(a, b int32) int { return f.cmpWith(a, f, b) }

func compareRows(keys []*flatKey, a, b int32) int {
	for _, k := range keys {
		if c := k.cmp(a, b); c != 0 {
			return c
		}
	}
	return 0
}

// prefix encodes the value of row r as an unsigned integer whose order is
// the key's order (DESC included): exact for numbers, dates and booleans,
// the first 8 bytes for strings.
func (f *flatKey) prefix(r int32) uint64 {
	var p uint64
	switch f.k {
	case kInt64:
		p = uint64(f.i64[r]) ^ 1<<63
	case kDate:
		p = uint64(int64(f.i32[r])) ^ 1<<63
	case kDec128: // the high word: order-preserving, ties broken by cmp
		p = uint64(f.d128[r].HighBits()) ^ 1<<63
	case kFloat64:
		v := f.f64[r]
		switch {
		case v != v:
			p = math.MaxUint64
		case v == 0:
			p = 1 << 63
		default:
			b := math.Float64bits(v)
			if b>>63 != 0 {
				p = ^b
			} else {
				p = b | 1<<63
			}
		}
	case kBool:
		p = uint64(b2u(f.bl[r]))
	case kString:
		return f.strPrefix(r, 0)
	}
	if f.desc {
		p = ^p
	}
	return p
}

// strPrefix encodes bytes [off, off+8) of string row r (zero-padded).
func (f *flatKey) strPrefix(r int32, off int) uint64 {
	str := f.str[r]
	var p uint64
	switch {
	case len(str) >= off+8:
		p = binary.BigEndian.Uint64([]byte(str[off : off+8]))
	case len(str) > off:
		var buf [8]byte
		copy(buf[:], str[off:])
		p = binary.BigEndian.Uint64(buf[:])
	}
	if f.desc {
		p = ^p
	}
	return p
}

// sortEntry is a row with the order-preserving prefix of its first key.
type sortEntry struct {
	p uint64
	r int32
}

// sortPerm returns row ids 0..n-1 in sorted order (stable). Rows become
// (prefix of the first key, row id) entries, radix-sorted by prefix (LSD,
// stable, so equal prefixes stay in arrival order); runs of equal prefixes
// are then ordered by the remaining keys (and, for strings, whose prefix is
// only the first 8 bytes, by the full first key). Rows whose first key is
// NULL are set aside and placed first or last.
func sortPerm(keys []*flatKey, n int) []int32 {
	k0, rest := keys[0], keys[1:]
	ents := make([]sortEntry, 0, n)
	var nulls []int32
	for r := int32(0); r < int32(n); r++ {
		if k0.null != nil && k0.null[r] {
			nulls = append(nulls, r)
			continue
		}
		ents = append(ents, sortEntry{k0.prefix(r), r})
	}
	exact := k0.k != kString && k0.k != kDec128
	full := func(a, b sortEntry) int {
		if a.p != b.p {
			if a.p < b.p {
				return -1
			}
			return 1
		}
		if !exact {
			if c := k0.cmp(a.r, b.r); c != 0 {
				return c
			}
		}
		if c := compareRows(rest, a.r, b.r); c != 0 {
			return c
		}
		return cmp.Compare(a.r, b.r)
	}
	// refine orders runs of equal prefixes: long runs of strings are radix
	// sorted again on their next 8 bytes (up to 32 bytes in all), the rest
	// with comparisons.
	var refine func(ents []sortEntry, level int)
	refine = func(ents []sortEntry, level int) {
		for i := 0; i < len(ents); {
			j := i + 1
			for j < len(ents) && ents[j].p == ents[i].p {
				j++
			}
			switch {
			case j-i == 1:
			case k0.k == kString && j-i >= 512 && level < 3:
				run := ents[i:j]
				for t := range run {
					run[t].p = k0.strPrefix(run[t].r, 8*(level+1))
				}
				radixSort(run)
				refine(run, level+1)
			default:
				slices.SortFunc(ents[i:j], full)
			}
			i = j
		}
	}
	if len(ents) < 512 {
		slices.SortFunc(ents, full)
	} else {
		radixSort(ents)
		if !exact || len(rest) > 0 {
			refine(ents, 0)
		}
	}
	if len(rest) > 0 && len(nulls) > 1 {
		slices.SortFunc(nulls, func(a, b int32) int {
			if c := compareRows(rest, a, b); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	perm := make([]int32, 0, n)
	if k0.nullsFirst {
		perm = append(perm, nulls...)
	}
	for _, e := range ents {
		perm = append(perm, e.r)
	}
	if !k0.nullsFirst {
		perm = append(perm, nulls...)
	}
	return perm
}

// radixSort sorts entries by prefix: a stable LSD radix sort on bytes,
// skipping the byte positions where every entry agrees.
func radixSort(ents []sortEntry) {
	var counts [8][256]int
	for _, e := range ents {
		p := e.p
		for b := 0; b < 8; b++ {
			counts[b][byte(p>>(8*b))]++
		}
	}
	buf := make([]sortEntry, len(ents))
	src, dst := ents, buf
	for b := 0; b < 8; b++ {
		c := &counts[b]
		if c[byte(src[0].p>>(8*b))] == len(src) {
			continue // all equal in this byte
		}
		var pos [256]int
		sum := 0
		for i := range c {
			pos[i] = sum
			sum += c[i]
		}
		shift := uint(8 * b)
		for _, e := range src {
			k := byte(e.p >> shift)
			dst[pos[k]] = e
			pos[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ents[0] {
		copy(ents, src)
	}
}

// evalSortKey evaluates a sort key: a nested value (LIST, MAP, STRUCT)
// becomes its key encoding, a string that orders bytewise as DuckDB
// orders the values (kernel.AppendKey), so every sort path sorts it as a
// string.
func evalSortKey(e *plan.Expr, rec arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	a, err := Eval(e, rec, mem)
	if err != nil || !kernel.IsNested(a.DataType()) {
		return a, err
	}
	defer a.Release()
	return kernel.EncodeKeys(mem, a)
}
