package planner

import (
	"context"
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// fakeCatalog is an in-memory Catalog with the TPC-H schemas (engine
// types as the Parquet files the generator writes have them) and the row
// counts and file sizes of scale factor 1, so plans show the join orders
// and broadcast choices a real SF 1 catalog gets.
type fakeCatalog map[string]*TableInfo

func (c fakeCatalog) Table(_ context.Context, name string) (*TableInfo, error) {
	if t, ok := c[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("fake catalog: %q: %w", name, ErrUnknownTable)
}

func table(name string, rows, bytes int64, cols ...any) *TableInfo {
	t := &TableInfo{Name: name, Format: "parquet", Rows: rows, Bytes: bytes}
	for i := 0; i < len(cols); i += 2 {
		t.Columns = append(t.Columns, plan.Field{Name: cols[i].(string), Type: cols[i+1].(plan.DataType)})
	}
	return t
}

var (
	i64   = plan.Int64Type
	str   = plan.StringType
	date  = plan.DateType
	money = plan.DecimalType(15, 2)
)

var testCatalog = fakeCatalog{
	"lineitem": table("lineitem", 6001215, 160_000_000,
		"l_orderkey", i64, "l_partkey", i64, "l_suppkey", i64, "l_linenumber", i64,
		"l_quantity", money, "l_extendedprice", money, "l_discount", money, "l_tax", money,
		"l_returnflag", str, "l_linestatus", str,
		"l_shipdate", date, "l_commitdate", date, "l_receiptdate", date,
		"l_shipinstruct", str, "l_shipmode", str, "l_comment", str,
	),
	"orders": table("orders", 1500000, 42_000_000,
		"o_orderkey", i64, "o_custkey", i64, "o_orderstatus", str, "o_totalprice", money,
		"o_orderdate", date, "o_orderpriority", str, "o_clerk", str, "o_shippriority", i64, "o_comment", str,
	),
	"customer": table("customer", 150000, 9_600_000,
		"c_custkey", i64, "c_name", str, "c_address", str, "c_nationkey", i64,
		"c_phone", str, "c_acctbal", money, "c_mktsegment", str, "c_comment", str,
	),
	"part": table("part", 200000, 6_000_000,
		"p_partkey", i64, "p_name", str, "p_mfgr", str, "p_brand", str, "p_type", str,
		"p_size", i64, "p_container", str, "p_retailprice", money, "p_comment", str,
	),
	"partsupp": table("partsupp", 800000, 35_000_000,
		"ps_partkey", i64, "ps_suppkey", i64, "ps_availqty", i64, "ps_supplycost", money, "ps_comment", str,
	),
	"supplier": table("supplier", 10000, 800_000,
		"s_suppkey", i64, "s_name", str, "s_address", str, "s_nationkey", i64,
		"s_phone", str, "s_acctbal", money, "s_comment", str,
	),
	"nation": table("nation", 25, 3_000,
		"n_nationkey", i64, "n_name", str, "n_regionkey", i64, "n_comment", str,
	),
	"region": table("region", 5, 2_000,
		"r_regionkey", i64, "r_name", str, "r_comment", str,
	),
	// A table with nested columns (rule_nested_paths.go).
	"events": table("events", 1000000, 50_000_000,
		"e_id", i64,
		"e_info", plan.StructOf([]plan.Field{{Name: "a", Type: i64}, {Name: "b", Type: str},
			{Name: "c", Type: plan.StructOf([]plan.Field{{Name: "x", Type: i64}, {Name: "y", Type: str}})}}),
		"e_tags", plan.ListOf(str),
		"e_items", plan.ListOf(plan.StructOf([]plan.Field{{Name: "a", Type: i64}, {Name: "b", Type: str},
			{Name: "c", Type: plan.StructOf([]plan.Field{{Name: "x", Type: i64}, {Name: "y", Type: str}})}})),
		"e_deep", plan.StructOf([]plan.Field{{Name: "k", Type: i64},
			{Name: "l", Type: plan.ListOf(plan.StructOf([]plan.Field{{Name: "p", Type: i64}, {Name: "q", Type: str}}))}}),
		"e_attrs", plan.MapOf(str, str),
	),
}
