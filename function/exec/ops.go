package exec

import (
	"context"
	"fmt"
	"io"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// withSchema relabels rec with schema (same column types, possibly other
// names), consuming rec.
func withSchema(mem memory.Allocator, schema *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if rec.Schema().Equal(schema) {
		return rec, nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		c.Retain()
		cols[i] = c
	}
	n := int(rec.NumRows())
	rec.Release()
	return conformRecord(mem, schema, cols, n)
}

// ---- Empty ------------------------------------------------------------------

type emptyOp struct{ schema *arrow.Schema }

// NewEmpty returns an operator that produces no rows with the node's schema.
func NewEmpty(n *plan.Node) Operator { return &emptyOp{schema: n.Schema.Arrow()} }

func (e *emptyOp) Schema() *arrow.Schema                           { return e.schema }
func (e *emptyOp) Next(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF }
func (e *emptyOp) Close() error                                    { return nil }

// ---- Filter -----------------------------------------------------------------

type filterOp struct {
	in     Operator
	pred   *plan.Expr
	schema *arrow.Schema
	mem    memory.Allocator
	sel    []int32
	bloom  *bloomProbe // a runtime filter's Bloom filter (plan.Node.Bloom)
	cache  ExprCache
	// the schema of batches carrying dictionary keys (hashagg_dict.go)
	dictSchema dictSchemas
	// skip: output columns no consumer reads (skipcols.go), filled from
	// nulls instead of gathered
	skip  []bool
	nulls []nullFill
}

// SkipColumns fills the columns of unread no consumer reads with NULLs,
// and passes on to the input those the predicate does not read either.
func (f *filterOp) SkipColumns(unread []bool) {
	f.skip = unread
	f.nulls = make([]nullFill, len(unread))
	pass := unread
	if f.bloom != nil && f.bloom.col >= 0 && f.bloom.col < len(unread) && unread[f.bloom.col] {
		pass = append([]bool(nil), unread...)
		pass[f.bloom.col] = false
	}
	passUnread(f.in, pass, f.pred)
}

// EmitDictionaries passes the request on to the scan under the filter,
// whose columns it keeps (hashagg_dict.go).
func (f *filterOp) EmitDictionaries(cols []int) bool {
	de, ok := unmetered(f.in).(DictionaryEmitter)
	return ok && de.EmitDictionaries(cols)
}

// outSchema is the filter's schema for rec: with the dictionary type of
// the columns rec carries as dictionaries.
func (f *filterOp) outSchema(rec arrow.RecordBatch) *arrow.Schema {
	return f.dictSchema.of(f.schema, rec.Schema(), rec.Columns())
}

// dictSchemas gives an operator's schema for batches that carry some of
// its String columns as dictionary arrays (EmitDictionaries), caching it
// for the input schema it was made for.
type dictSchemas struct{ in, out *arrow.Schema }

// of returns base with the type of every column of cols that is a
// dictionary; in is the schema of the batch the columns come from.
func (d *dictSchemas) of(base, in *arrow.Schema, cols []arrow.Array) *arrow.Schema {
	if in != nil && in == d.in {
		return d.out
	}
	var fields []arrow.Field
	for i, c := range cols {
		if _, ok := c.(*array.Dictionary); ok && i < base.NumFields() {
			if fields == nil {
				fields = base.Fields()
			}
			fields[i].Type = c.DataType()
		}
	}
	if fields == nil {
		return base
	}
	md := base.Metadata()
	d.in, d.out = in, arrow.NewSchema(fields, &md)
	return d.out
}

// NewFilter keeps the rows of in where n.Predicate is TRUE.
func NewFilter(in Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if n.Predicate == nil {
		return nil, fmt.Errorf("exec: filter: no predicate")
	}
	bloom, err := newBloomProbe(n.Bloom)
	if err != nil {
		return nil, fmt.Errorf("exec: filter: %w", err)
	}
	return &filterOp{in: in, pred: n.Predicate, schema: n.Schema.Arrow(), mem: opts.Mem, bloom: bloom}, nil
}

func (f *filterOp) Schema() *arrow.Schema { return f.schema }

func (f *filterOp) Close() error {
	for i := range f.nulls {
		f.nulls[i].release()
	}
	return f.in.Close()
}

// take gathers the rows sel of rec, filling skipped columns with NULLs.
func (f *filterOp) take(rec arrow.RecordBatch, sel []int32) (arrow.RecordBatch, error) {
	if f.skip == nil {
		return takeRecord(f.mem, rec, sel)
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		var a arrow.Array
		var err error
		if i < len(f.skip) && f.skip[i] && !isDictionary(c) {
			a = f.nulls[i].get(f.mem, c.DataType(), len(sel))
		} else if a, err = take(f.mem, c, sel); err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(sel)))
	releaseAll(cols)
	return out, nil
}

func (f *filterOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		rec, err := f.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		n := int(rec.NumRows())
		if n == 0 {
			rec.Release()
			continue
		}
		mask, err := EvalCached(f.pred, rec, f.mem, &f.cache)
		if err != nil {
			rec.Release()
			return nil, fmt.Errorf("exec: filter: %w", err)
		}
		f.sel, err = selectRows(mask, f.sel[:0])
		mask.Release()
		if err == nil && f.bloom != nil && len(f.sel) > 0 {
			f.sel, err = f.bloom.keep(rec, f.sel)
		}
		if err != nil {
			rec.Release()
			return nil, fmt.Errorf("exec: filter: %w", err)
		}
		switch len(f.sel) {
		case 0:
			rec.Release()
			continue
		case n:
			out, err := withSchema(f.mem, f.outSchema(rec), rec)
			if err != nil {
				return nil, fmt.Errorf("exec: filter: %w", err)
			}
			return out, nil
		}
		out, err := f.take(rec, f.sel)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("exec: filter: %w", err)
		}
		if out, err = withSchema(f.mem, f.outSchema(out), out); err != nil {
			return nil, fmt.Errorf("exec: filter: %w", err)
		}
		return out, nil
	}
}

// selectRows appends the rows where mask is TRUE (valid and set) to sel.
func selectRows(mask arrow.Array, sel []int32) ([]int32, error) {
	n := mask.Len()
	switch mask.DataType().ID() {
	case arrow.NULL:
		return sel, nil
	case arrow.BOOL:
	default:
		return sel, fmt.Errorf("predicate of type %s, want bool", mask.DataType())
	}
	bs, off := bitsOf(mask)
	v := alignedBits(bs, off, n)
	if vb, voff := validityOf(mask); vb != nil {
		vv := alignedBits(vb, voff, n)
		tmp := make([]byte, len(v))
		for i := range tmp {
			tmp[i] = v[i] & vv[i]
		}
		v = tmp
	}
	for i, b := range v {
		for b != 0 {
			j := i<<3 + bits.TrailingZeros8(b)
			if j >= n {
				break
			}
			sel = append(sel, int32(j))
			b &= b - 1
		}
	}
	return sel, nil
}

// ---- Project ----------------------------------------------------------------

type projectOp struct {
	in     Operator
	exprs  []*plan.Expr
	schema *arrow.Schema
	mem    memory.Allocator
	// dicts: the scan below may hand String columns over as dictionary
	// arrays (EmitDictionaries); a bare column reference passes one
	// through, and dictSchema caches the schema of such batches.
	dicts      bool
	dictSchema dictSchemas
	cache      ExprCache
}

// EmitDictionaries passes the request on to the operator below; the
// columns are the scan's (dictKeyColumns maps them through projections),
// and only bare column references of them reach the aggregate above.
func (p *projectOp) EmitDictionaries(cols []int) bool {
	de, ok := unmetered(p.in).(DictionaryEmitter)
	if ok && de.EmitDictionaries(cols) {
		p.dicts = true
		return true
	}
	return false
}

// NewProject computes n.Exprs over every batch of in.
func NewProject(in Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if len(n.Exprs) != len(n.Schema) {
		return nil, fmt.Errorf("exec: project: %d expressions for %d output columns", len(n.Exprs), len(n.Schema))
	}
	return &projectOp{in: in, exprs: n.Exprs, schema: n.Schema.Arrow(), mem: opts.Mem}, nil
}

func (p *projectOp) Schema() *arrow.Schema { return p.schema }
func (p *projectOp) Close() error          { return p.in.Close() }

func (p *projectOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := p.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	cols := make([]arrow.Array, len(p.exprs))
	schema, isDict := p.schema, false
	for i, e := range p.exprs {
		if p.dicts && e.Op == plan.OpColumn && e.Col >= 0 && e.Col < int(rec.NumCols()) {
			if d, ok := rec.Column(e.Col).(*array.Dictionary); ok {
				d.Retain()
				cols[i], isDict = d, true
				continue
			}
		}
		c, err := EvalCached(e, rec, p.mem, &p.cache)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("exec: project column %q: %w", p.schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	if isDict {
		schema = p.dictSchema.of(p.schema, rec.Schema(), cols)
	}
	out, err := conformRecord(p.mem, schema, cols, int(rec.NumRows()))
	if err != nil {
		return nil, fmt.Errorf("exec: project: %w", err)
	}
	return out, nil
}

// ---- Limit ------------------------------------------------------------------

type limitOp struct {
	in     Operator
	skip   int64
	left   int64 // -1: unlimited
	schema *arrow.Schema
	mem    memory.Allocator
}

// NewLimit skips n.Offset rows of in, then passes n.Limit rows (-1: all).
func NewLimit(in Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if n.Offset < 0 {
		return nil, fmt.Errorf("exec: limit: negative offset %d", n.Offset)
	}
	left := n.Limit
	if left < 0 {
		left = -1
	}
	return &limitOp{in: in, skip: n.Offset, left: left, schema: n.Schema.Arrow(), mem: opts.Mem}, nil
}

func (l *limitOp) Schema() *arrow.Schema { return l.schema }
func (l *limitOp) Close() error          { return l.in.Close() }

func (l *limitOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if l.left == 0 {
			return nil, io.EOF
		}
		rec, err := l.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		n := rec.NumRows()
		if l.skip >= n {
			l.skip -= n
			rec.Release()
			continue
		}
		start, end := l.skip, n
		l.skip = 0
		if l.left >= 0 && end-start > l.left {
			end = start + l.left
		}
		if l.left >= 0 {
			l.left -= end - start
		}
		if start != 0 || end != n {
			s := rec.NewSlice(start, end)
			rec.Release()
			rec = s
		}
		out, err := withSchema(l.mem, l.schema, rec)
		if err != nil {
			return nil, fmt.Errorf("exec: limit: %w", err)
		}
		return out, nil
	}
}
