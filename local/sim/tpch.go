package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluicedb/sluice/local/tpch"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

// Virtual TPC-H tables: what `sluice tpch gen` would write at a scale
// factor, synthesized without generating a row. Files hold
// tpchRowsPerFile rows in row groups of tpchRowsPerRowGroup (the
// generator's defaults), at the Parquet bytes per row measured on the
// generator's SF 1 output (.tmp/tpch-test-sf1, this machine): the catalog
// entries are what registering a real listing at that scale would give,
// so the planner plans exactly as it would.
const (
	tpchRowsPerFile     = 1_000_000
	tpchRowsPerRowGroup = 16_384
)

// tpchBytesPerRow is the size of the generator's Parquet files per row,
// measured at SF 1 (bytes of the table's files / rows).
var tpchBytesPerRow = map[string]float64{
	tpch.Lineitem: 191_160_441 / 6_001_215.0,
	tpch.Orders:   47_586_372 / 1_500_000.0,
	tpch.PartSupp: 35_411_731 / 800_000.0,
	tpch.Part:     4_968_515 / 200_000.0,
	tpch.Customer: 8_965_635 / 150_000.0,
	tpch.Supplier: 576_406 / 10_000.0,
	tpch.Nation:   6_838 / 25.0,
	tpch.Region:   5_597 / 5.0,
}

// tpchRows is a table's row count at sf (lineitem from its SF 1 count:
// the exact count needs a pass over every order).
func tpchRows(table string, sf float64) int64 {
	if table == tpch.Lineitem {
		return max(1, int64(math.Round(6_001_215*sf)))
	}
	return tpch.RowCount(table, sf)
}

// TPCHTables returns the catalog entries of the eight TPC-H tables at
// scale sf, their files under prefix "tables/<table>/".
func TPCHTables(sf float64) ([]*catalog.Table, error) {
	var out []*catalog.Table
	for _, name := range tpch.Tables() {
		sch, err := tpch.Schema(name)
		if err != nil {
			return nil, err
		}
		t := &catalog.Table{Name: name, Format: "parquet", Location: "tables/" + name + "/"}
		for _, f := range sch.Fields() {
			typ, ok := plan.FromArrow(f.Type)
			if !ok {
				return nil, fmt.Errorf("tpch %s.%s: type %s", name, f.Name, f.Type)
			}
			t.Columns = append(t.Columns, plan.Field{Name: f.Name, Type: typ, Nullable: f.Nullable})
		}
		rows := tpchRows(name, sf)
		bpr := tpchBytesPerRow[name]
		for i, left := 0, rows; left > 0; i++ {
			n := min(left, tpchRowsPerFile)
			left -= n
			f := layout.File{Key: fmt.Sprintf("%s%s-%06d.parquet", t.Location, name, i)}
			for r := n; r > 0; r -= tpchRowsPerRowGroup {
				g := min(r, tpchRowsPerRowGroup)
				b := int64(math.Ceil(float64(g) * bpr))
				f.RowGroups = append(f.RowGroups, layout.RowGroup{Rows: g, Bytes: b})
				f.Size += b
			}
			f.Size += 4 << 10 // footer
			t.Files = append(t.Files, f)
			t.Rows += n
			t.Bytes += f.Size
		}
		out = append(out, t)
	}
	return out, nil
}

// TPCHStats are the column statistics of the TPC-H tables at a scale
// factor: distinct values per column, from the specification's value
// distributions (TPC-H 4.2.3), by lower-case column name.
type TPCHStats struct{ SF float64 }

// NDV returns the distinct values of column col at the scale factor, 0
// when unknown.
func (s TPCHStats) NDV(col string) float64 {
	col = strings.ToLower(col)
	sf := s.SF
	switch col {
	case "l_orderkey", "o_orderkey":
		return 1_500_000 * sf
	case "l_partkey", "ps_partkey", "p_partkey":
		return 200_000 * sf
	case "l_suppkey", "ps_suppkey", "s_suppkey":
		return 10_000 * sf
	case "o_custkey":
		return 100_000 * sf // two thirds of the customers have orders
	case "c_custkey":
		return 150_000 * sf
	case "n_nationkey", "s_nationkey", "c_nationkey", "n_name":
		return 25
	case "r_regionkey", "n_regionkey", "r_name":
		return 5
	case "l_returnflag", "o_orderstatus":
		return 3
	case "l_linestatus":
		return 2
	case "l_shipmode":
		return 7
	case "l_shipinstruct":
		return 4
	case "l_linenumber":
		return 7
	case "l_quantity":
		return 50
	case "l_discount":
		return 11
	case "l_tax":
		return 9
	case "l_shipdate", "l_commitdate", "l_receiptdate", "o_orderdate":
		return 2_526
	case "o_orderpriority", "c_mktsegment":
		return 5
	case "o_shippriority":
		return 1
	case "o_clerk":
		return 1_000 * sf
	case "p_brand":
		return 25
	case "p_mfgr":
		return 5
	case "p_type":
		return 150
	case "p_container":
		return 40
	case "p_size":
		return 50
	}
	return 0
}
