package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Hive partition columns. A table whose files sit under key=value folders
// has a column per key (plan.Scan.Partitions); a scan's split carries the
// file's values, one per partition column. The file format readers see
// only the file's own columns (FileScan); PartitionScan adds the partition
// columns as constants of each batch.

// partitionOf returns, for each output column of a scan, the index of the
// partition column it names, or -1 for a file column.
func partitionOf(s *plan.Scan) []int {
	out := make([]int, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = -1
		for j, p := range s.Partitions {
			if p.Name == c {
				out[i] = j
			}
		}
	}
	return out
}

// FileScan returns the scan node a file reader runs for n: n without its
// partition columns, and its pruning filter without the conjuncts that
// name one (those are decided per file, by PartitionFilter). It returns n
// itself when n reads no partition column.
func FileScan(n *plan.Node) *plan.Node {
	part := partitionOf(n.Scan)
	remap := make([]int, len(part)) // output column -> file-scan column, -1 for a partition column
	k := 0
	for i, p := range part {
		remap[i] = -1
		if p < 0 {
			remap[i] = k
			k++
		}
	}
	if k == len(part) {
		return n
	}
	sc := *n.Scan
	sc.Columns, sc.Paths, sc.Fields = nil, nil, nil
	var schema plan.Schema
	for i, p := range part {
		if p < 0 {
			sc.Columns = append(sc.Columns, n.Scan.Columns[i])
			if len(n.Scan.Paths) > 0 {
				sc.Paths = append(sc.Paths, n.Scan.Paths[i])
			}
			if len(n.Scan.Fields) > 0 {
				sc.Fields = append(sc.Fields, n.Scan.Fields[i])
			}
			schema = append(schema, n.Schema[i])
		}
	}
	sc.Filter = nil
	var keep []*plan.Expr
	for _, c := range conjuncts(n.Scan.Filter) {
		if e, ok := remapColumns(c, remap); ok {
			keep = append(keep, e)
		}
	}
	for _, c := range keep {
		if sc.Filter == nil {
			sc.Filter = c
		} else {
			sc.Filter = plan.Call(plan.OpAnd, plan.BoolType, sc.Filter, c)
		}
	}
	out := *n
	out.Scan, out.Schema = &sc, schema
	return &out
}

// conjuncts splits e at its top-level ANDs.
func conjuncts(e *plan.Expr) []*plan.Expr {
	if e == nil {
		return nil
	}
	if e.Op == plan.OpAnd {
		var out []*plan.Expr
		for _, a := range e.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*plan.Expr{e}
}

// remapColumns copies e with its column references renumbered; ok is false
// when it references a column mapped to -1.
func remapColumns(e *plan.Expr, remap []int) (*plan.Expr, bool) {
	if e == nil {
		return nil, true
	}
	c := *e
	if e.Op == plan.OpColumn {
		if e.Col < 0 || e.Col >= len(remap) || remap[e.Col] < 0 {
			return nil, false
		}
		c.Col = remap[e.Col]
		return &c, true
	}
	c.Args = make([]*plan.Expr, len(e.Args))
	for i, a := range e.Args {
		x, ok := remapColumns(a, remap)
		if !ok {
			return nil, false
		}
		c.Args[i] = x
	}
	return &c, true
}

// PartitionFilter decides from a file's partition values alone whether the
// scan's filter can hold for any of its rows: the conjuncts of
// n.Scan.Filter that name only partition columns are evaluated with the
// values in place of the columns (SQL semantics: a NULL or FALSE result
// excludes the file). values are the file's, one per n.Scan.Partitions. A
// conjunct that cannot be evaluated keeps the file.
func PartitionFilter(n *plan.Node, values []plan.Value) bool {
	if n.Scan == nil || n.Scan.Filter == nil || len(n.Scan.Partitions) == 0 {
		return true
	}
	part := partitionOf(n.Scan)
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1) // the constants' row
	defer one.Release()
	for _, c := range conjuncts(n.Scan.Filter) {
		e, ok := bindPartitions(c, part, n.Scan.Partitions, values)
		if !ok {
			continue
		}
		a, err := Eval(e, one, memory.DefaultAllocator)
		if err != nil {
			continue
		}
		pass := a.Len() == 1 && a.IsValid(0)
		if b, ok := a.(*array.Boolean); ok && pass {
			pass = b.Value(0)
		}
		a.Release()
		if !pass {
			return false
		}
	}
	return true
}

// bindPartitions copies e with every partition column replaced by its
// value; ok is false when e names a file column.
func bindPartitions(e *plan.Expr, part []int, cols []plan.Field, values []plan.Value) (*plan.Expr, bool) {
	if e.Op == plan.OpColumn {
		if e.Col < 0 || e.Col >= len(part) || part[e.Col] < 0 || part[e.Col] >= len(values) {
			return nil, false
		}
		return plan.Literal(values[part[e.Col]], cols[part[e.Col]].Type), true
	}
	c := *e
	c.Args = make([]*plan.Expr, len(e.Args))
	for i, a := range e.Args {
		x, ok := bindPartitions(a, part, cols, values)
		if !ok {
			return nil, false
		}
		c.Args[i] = x
	}
	return &c, true
}

// PartitionScan adds a file's partition columns, as constants, to the
// batches of the file's scan.
type PartitionScan struct {
	in     Operator
	mem    memory.Allocator
	schema *arrow.Schema
	part   []int // output column -> partition column, -1: next file column
	types  []plan.DataType
	values []plan.Value
}

// NewPartitionScan wraps in, the scan of FileScan(n), into the scan of n
// for a file whose partition values are values (one per n.Scan.Partitions).
func NewPartitionScan(in Operator, n *plan.Node, values []plan.Value, mem memory.Allocator) (*PartitionScan, error) {
	if len(values) != len(n.Scan.Partitions) {
		return nil, fmt.Errorf("scan of %s: %d partition values for %d partition columns", n.Scan.Table, len(values), len(n.Scan.Partitions))
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	p := &PartitionScan{in: in, mem: mem, schema: n.Schema.Arrow(), part: partitionOf(n.Scan), values: values}
	for _, f := range n.Schema {
		p.types = append(p.types, f.Type)
	}
	return p, nil
}

func (p *PartitionScan) Schema() *arrow.Schema { return p.schema }

func (p *PartitionScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := p.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(p.part))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	k := 0
	for i, j := range p.part {
		if j < 0 {
			if k >= int(rec.NumCols()) {
				return nil, fmt.Errorf("file scan returned %d columns, fewer than the plan's file columns", rec.NumCols())
			}
			cols[i] = rec.Column(k)
			cols[i].Retain()
			k++
			continue
		}
		a, err := broadcast(p.mem, p.types[i], p.values[j], n)
		if err != nil {
			return nil, fmt.Errorf("partition column %s: %w", p.schema.Field(i).Name, err)
		}
		cols[i] = a
	}
	return array.NewRecordBatch(p.schema, cols, int64(n)), nil
}

func (p *PartitionScan) Close() error { return p.in.Close() }

// LateRows passes on the file scan's late materialization counts.
func (p *PartitionScan) LateRows() (decoded, skipped int64) {
	if q, ok := p.in.(LateMaterializer); ok {
		return q.LateRows()
	}
	return 0, 0
}

// Pruned passes on the row groups the file scan skipped.
func (p *PartitionScan) Pruned() int {
	if q, ok := p.in.(interface{ Pruned() int }); ok {
		return q.Pruned()
	}
	return 0
}
