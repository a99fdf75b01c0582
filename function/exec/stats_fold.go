package exec

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Answering from footers. A partial aggregate with no GROUP BY directly
// over a Parquet scan with no filter (count(*), count(x), min(x), max(x))
// need not decode a row group whose footer statistics already give each
// call's partial state: the scan hands such row groups to a StatsFold
// instead of reading them, and the aggregate merges the states the fold
// gathered as if another task had sent them. Row groups whose statistics
// do not suffice are read as usual, so the answer never depends on which
// writer wrote the file. DataFusion's AggregateStatistics and DuckDB's
// count(*) from Parquet metadata do the same.

// ColumnStats is what a file's footer says of one column chunk, in engine
// types: Nulls is -1 when unknown, Min and Max (arrays of one value) nil
// when unknown or not trusted exact.
type ColumnStats struct {
	Rows     int64
	Nulls    int64
	Min, Max arrow.Array
}

// StatsFold gathers the partial states of the row groups a scan answered
// from their statistics. Calls[i] reads scan column Columns[i] ("" for
// count(*)).
type StatsFold struct {
	Calls   []plan.AggCall
	Columns []string
	fns     []*AggregateFunction
	mem     memory.Allocator
	// states[i] are call i's state columns, one row per folded row group.
	states    [][][]arrow.Array
	rowGroups atomic.Int64
}

// statsFolder is a scan that can fold row groups into a StatsFold instead
// of reading them; it reports whether it will (it is asked before its
// first Next).
type statsFolder interface {
	FoldStats(f *StatsFold) bool
}

// newStatsFold returns the fold for aggregate node n when its shape allows
// one (nil otherwise): a partial aggregate of no group key directly over a
// scan with no filter, every call of an aggregate that can be answered
// from statistics, over no argument or a plain column.
func newStatsFold(n *plan.Node, mem memory.Allocator) *StatsFold {
	a := n.Aggregate
	if a == nil || a.Mode != plan.AggPartial || len(a.GroupBy) > 0 || len(a.Aggs) == 0 || len(n.Inputs) != 1 {
		return nil
	}
	// Projections of plain columns between the two are seen through.
	scan := n.Inputs[0]
	var maps [][]*plan.Expr
	for scan.Kind == plan.KindProject && len(scan.Inputs) == 1 {
		for _, e := range scan.Exprs {
			if e.Op != plan.OpColumn {
				return nil
			}
		}
		maps = append(maps, scan.Exprs)
		scan = scan.Inputs[0]
	}
	if scan.Kind != plan.KindScan || scan.Scan == nil || scan.Scan.Filter != nil {
		return nil
	}
	switch scan.Scan.Format {
	case "", "parquet", "iceberg":
	default:
		return nil
	}
	f := &StatsFold{mem: mem}
	for _, c := range a.Aggs {
		fn, ok := PlannedAggregate(c.Func)
		if !ok || fn.FromStats == nil || c.Distinct {
			return nil
		}
		col := ""
		if c.Arg != nil {
			if c.Arg.Op != plan.OpColumn {
				return nil
			}
			ci := c.Arg.Col
			for _, m := range maps {
				if ci < 0 || ci >= len(m) {
					return nil
				}
				ci = m[ci].Col
			}
			if ci < 0 || ci >= len(scan.Scan.Columns) || !sameType(c.Arg.Type, scan.Schema[ci].Type) {
				return nil
			}
			if ci < len(scan.Scan.Paths) && len(scan.Scan.Paths[ci]) > 0 {
				return nil // a struct field: its leaf's null count may not count NULL structs
			}
			col = scan.Scan.Columns[ci]
		}
		f.Calls = append(f.Calls, c)
		f.Columns = append(f.Columns, col)
		f.fns = append(f.fns, fn)
	}
	f.states = make([][][]arrow.Array, len(f.Calls))
	return f
}

// Fold takes one row group whose column statistics are stats (by column
// name; Rows holds the row group's row count) when every call's state
// follows from them, and reports whether it did.
func (f *StatsFold) Fold(rows int64, stats func(col string) *ColumnStats) bool {
	got := make([][]arrow.Array, len(f.Calls))
	for i := range f.Calls {
		st := &ColumnStats{Rows: rows, Nulls: -1}
		if f.Columns[i] != "" {
			if st = stats(f.Columns[i]); st == nil {
				releaseStates(got)
				return false
			}
		}
		s, ok := f.fns[i].FromStats(f.mem, st)
		if !ok {
			releaseStates(got)
			return false
		}
		got[i] = s
	}
	for i, s := range got {
		f.states[i] = append(f.states[i], s)
	}
	f.rowGroups.Add(1)
	return true
}

// RowGroups is how many row groups were answered from statistics.
func (f *StatsFold) RowGroups() int64 { return f.rowGroups.Load() }

// merge folds the gathered states into the aggregate's accumulators (all
// of group 0), releasing them.
func (f *StatsFold) merge(accs []aggSlot) error {
	for i, rgs := range f.states {
		for _, s := range rgs {
			if err := accs[i].acc.Merge(s, nil); err != nil {
				return err
			}
		}
		releaseStates(rgs)
		f.states[i] = nil
	}
	return nil
}

func (f *StatsFold) folded() bool {
	return len(f.states) > 0 && len(f.states[0]) > 0
}

func releaseStates(ss [][]arrow.Array) {
	for _, s := range ss {
		releaseAll(s)
	}
}

// scanUnder is the operator under op's metering wrapper and projections
// (newStatsFold sees through the same projections).
func scanUnder(op Operator) Operator {
	for {
		switch o := op.(type) {
		case *opMeter:
			op = o.op
		case *projectOp:
			op = o.in
		default:
			return op
		}
	}
}
