package planner

import (
	"context"
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// fakeCatalog is an in-memory Catalog with the TPC-H lineitem and orders
// schemas.
type fakeCatalog map[string]*TableInfo

func (c fakeCatalog) Table(_ context.Context, name string) (*TableInfo, error) {
	if t, ok := c[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("fake catalog: %q: %w", name, ErrUnknownTable)
}

func dec(p, s int) plan.DataType { return plan.DecimalType(p, s) }

func table(name string, rows int64, cols ...any) *TableInfo {
	t := &TableInfo{Name: name, Format: "parquet", Rows: rows, Bytes: rows * 100}
	for i := 0; i < len(cols); i += 2 {
		t.Columns = append(t.Columns, plan.Field{Name: cols[i].(string), Type: cols[i+1].(plan.DataType)})
	}
	return t
}

var testCatalog = fakeCatalog{
	"lineitem": table("lineitem", 6001215,
		"l_orderkey", plan.Int64Type,
		"l_partkey", plan.Int64Type,
		"l_suppkey", plan.Int64Type,
		"l_linenumber", plan.Int64Type,
		"l_quantity", dec(15, 2),
		"l_extendedprice", dec(15, 2),
		"l_discount", dec(15, 2),
		"l_tax", dec(15, 2),
		"l_returnflag", plan.StringType,
		"l_linestatus", plan.StringType,
		"l_shipdate", plan.DateType,
		"l_commitdate", plan.DateType,
		"l_receiptdate", plan.DateType,
		"l_shipinstruct", plan.StringType,
		"l_shipmode", plan.StringType,
		"l_comment", plan.StringType,
	),
	"orders": table("orders", 1500000,
		"o_orderkey", plan.Int64Type,
		"o_custkey", plan.Int64Type,
		"o_orderstatus", plan.StringType,
		"o_totalprice", dec(15, 2),
		"o_orderdate", plan.DateType,
		"o_orderpriority", plan.StringType,
		"o_clerk", plan.StringType,
		"o_shippriority", plan.Int64Type,
		"o_comment", plan.StringType,
	),
}
