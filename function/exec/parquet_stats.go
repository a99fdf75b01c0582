package exec

import (
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/sluicedb/sluice/planner/plan"
)

// FoldStats hands the row groups whose statistics give f's states to f
// instead of reading them (stats_fold.go). It is called before the first
// Next, never on a scan with deleted rows, and reports whether it took
// any.
func (s *ParquetScan) FoldStats(f *StatsFold) bool {
	if s.started || s.deleted != nil || s.md == nil {
		return false
	}
	keep := s.rowGroups[:0:0]
	for _, rg := range s.rowGroups {
		rgm := s.md.RowGroup(rg)
		var made []*ColumnStats
		ok := f.Fold(rgm.NumRows(), func(col string) *ColumnStats {
			st := s.columnStats(rgm, col)
			if st != nil {
				made = append(made, st)
			}
			return st
		})
		for _, st := range made {
			if st.Min != nil {
				st.Min.Release()
			}
			if st.Max != nil {
				st.Max.Release()
			}
		}
		if !ok {
			keep = append(keep, rg)
		}
	}
	took := len(keep) < len(s.rowGroups)
	s.rowGroups = keep
	if len(keep) == 0 {
		s.done = true
	}
	return took
}

// columnStats reads the statistics of scan column col in row group rgm, in
// the column's engine type; nil when the file has none for it. Min and Max
// are given only for integer, date and decimal columns stored as INT32 or
// INT64, whose statistics are exact and signed in every writer that
// arrow-go trusts (StatsSet checks the writer's version): strings may be
// truncated and floats leave NaN out, so their bounds are not answers.
func (s *ParquetScan) columnStats(rgm *metadata.RowGroupMetaData, col string) *ColumnStats {
	idx := -1
	for i, c := range s.n.Scan.Columns {
		if c == col && (s.paths == nil || s.paths[i] == nil) {
			idx = i
			break
		}
	}
	if idx < 0 || s.colLeaves[idx] < 0 {
		return nil
	}
	cc, err := rgm.ColumnChunk(s.colLeaves[idx])
	if err != nil {
		return nil
	}
	ts, err := cc.Statistics()
	if err != nil || ts == nil || !ts.HasNullCount() {
		return nil
	}
	rows := rgm.NumRows()
	st := &ColumnStats{Rows: rows, Nulls: ts.NullCount()}
	t := s.outT[idx]
	mem := s.opts.Mem
	if st.Nulls == rows {
		null := array.MakeArrayOfNull(mem, t.Arrow(), 1)
		null.Retain()
		st.Min, st.Max = null, null
		return st
	}
	if !ts.HasMinMax() {
		return st
	}
	var lo, hi int64
	switch x := ts.(type) {
	case *metadata.Int32Statistics:
		lo, hi = int64(x.Min()), int64(x.Max())
	case *metadata.Int64Statistics:
		lo, hi = x.Min(), x.Max()
	default:
		return st
	}
	ft, ok := statsType(s.md.Schema.Column(s.colLeaves[idx]))
	if !ok {
		return st
	}
	for i, v := range []int64{lo, hi} {
		e, err := broadcast(mem, ft, plan.Value{I: v}, 1)
		if err == nil {
			raw := e
			e, err = toEngine(mem, raw, t)
			raw.Release()
		}
		if err != nil {
			if st.Min != nil {
				st.Min.Release()
				st.Min = nil
			}
			return st
		}
		if i == 0 {
			st.Min = e
		} else {
			st.Max = e
		}
	}
	return st
}

// statsType is the engine type whose values a column's INT32/INT64
// statistics are, when they are exact answers (false otherwise).
func statsType(c *schema.Column) (plan.DataType, bool) {
	phys := c.PhysicalType()
	if phys != parquet.Types.Int32 && phys != parquet.Types.Int64 {
		return plan.DataType{}, false
	}
	switch lt := c.LogicalType().(type) {
	case nil, schema.NoLogicalType:
	case schema.IntLogicalType:
		if !lt.IsSigned() {
			return plan.DataType{}, false
		}
	case schema.DateLogicalType:
		return plan.DateType, phys == parquet.Types.Int32
	case schema.DecimalLogicalType:
		return plan.DecimalType(int(lt.Precision()), int(lt.Scale())), true
	default:
		return plan.DataType{}, false
	}
	return plan.Int64Type, true
}
