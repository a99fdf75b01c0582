// Package tpch generates the eight TPC-H tables as Arrow record batches and
// Parquet files.
//
// The data follows TPC-H specification v3 clause 4.2 (row counts, key
// relations, value distributions, dates and pseudo text) but is not
// bit-identical to the reference dbgen. Every value is a pure function of
// (scale factor, table, column, row index), so generation is deterministic
// and any slice of a table can be generated independently, in bounded memory.
package tpch

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Table names, in an order where every table comes after the tables it
// references.
const (
	Region   = "region"
	Nation   = "nation"
	Supplier = "supplier"
	Customer = "customer"
	Part     = "part"
	PartSupp = "partsupp"
	Orders   = "orders"
	Lineitem = "lineitem"
)

var tableNames = []string{Region, Nation, Supplier, Customer, Part, PartSupp, Orders, Lineitem}

// Tables returns the eight table names, referenced tables first.
func Tables() []string { return append([]string(nil), tableNames...) }

// DefaultBatchRows is the batch size Generate uses when batchRows <= 0.
const DefaultBatchRows = 16384

var (
	i64T  = arrow.PrimitiveTypes.Int64
	i32T  = arrow.PrimitiveTypes.Int32
	decT  = &arrow.Decimal128Type{Precision: 15, Scale: 2}
	dateT = arrow.FixedWidthTypes.Date32
	strT  = arrow.BinaryTypes.String
)

func mkSchema(cols ...any) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(cols)/2)
	for i := 0; i < len(cols); i += 2 {
		fields = append(fields, arrow.Field{Name: cols[i].(string), Type: cols[i+1].(arrow.DataType), Nullable: false})
	}
	return arrow.NewSchema(fields, nil)
}

var schemas = map[string]*arrow.Schema{
	Region: mkSchema("r_regionkey", i64T, "r_name", strT, "r_comment", strT),
	Nation: mkSchema("n_nationkey", i64T, "n_name", strT, "n_regionkey", i64T, "n_comment", strT),
	Supplier: mkSchema("s_suppkey", i64T, "s_name", strT, "s_address", strT, "s_nationkey", i64T,
		"s_phone", strT, "s_acctbal", decT, "s_comment", strT),
	Customer: mkSchema("c_custkey", i64T, "c_name", strT, "c_address", strT, "c_nationkey", i64T,
		"c_phone", strT, "c_acctbal", decT, "c_mktsegment", strT, "c_comment", strT),
	Part: mkSchema("p_partkey", i64T, "p_name", strT, "p_mfgr", strT, "p_brand", strT, "p_type", strT,
		"p_size", i32T, "p_container", strT, "p_retailprice", decT, "p_comment", strT),
	PartSupp: mkSchema("ps_partkey", i64T, "ps_suppkey", i64T, "ps_availqty", i32T,
		"ps_supplycost", decT, "ps_comment", strT),
	Orders: mkSchema("o_orderkey", i64T, "o_custkey", i64T, "o_orderstatus", strT, "o_totalprice", decT,
		"o_orderdate", dateT, "o_orderpriority", strT, "o_clerk", strT, "o_shippriority", i32T,
		"o_comment", strT),
	Lineitem: mkSchema("l_orderkey", i64T, "l_partkey", i64T, "l_suppkey", i64T, "l_linenumber", i32T,
		"l_quantity", decT, "l_extendedprice", decT, "l_discount", decT, "l_tax", decT,
		"l_returnflag", strT, "l_linestatus", strT, "l_shipdate", dateT, "l_commitdate", dateT,
		"l_receiptdate", dateT, "l_shipinstruct", strT, "l_shipmode", strT, "l_comment", strT),
}

// Schema returns the Arrow schema of a table.
func Schema(table string) (*arrow.Schema, error) {
	s, ok := schemas[table]
	if !ok {
		return nil, fmt.Errorf("tpch: unknown table %q", table)
	}
	return s, nil
}

// scale holds the cardinalities derived from a scale factor.
type scale struct {
	sf                               float64
	supp, cust, part, orders, clerks int64
	custNonMult3                     int64 // customer keys that may have orders
}

func scaled(base float64, sf float64) int64 {
	n := int64(math.Round(base * sf))
	if n < 1 {
		n = 1
	}
	return n
}

func newScale(sf float64) scale {
	s := scale{
		sf:     sf,
		supp:   scaled(10_000, sf),
		cust:   scaled(150_000, sf),
		part:   scaled(200_000, sf),
		orders: scaled(1_500_000, sf),
		clerks: scaled(1_000, sf),
	}
	s.custNonMult3 = s.cust - s.cust/3
	return s
}

// units returns how many generation units a table has: rows, except parts
// for partsupp (4 rows each) and orders for lineitem (1-7 rows each).
func (s *scale) units(table string) int64 {
	switch table {
	case Region:
		return 5
	case Nation:
		return 25
	case Supplier:
		return s.supp
	case Customer:
		return s.cust
	case Part, PartSupp:
		return s.part
	case Orders, Lineitem:
		return s.orders
	}
	return 0
}

var lineCounts sync.Map // float64 sf -> int64

// RowCount returns the number of rows of table at scale sf; for lineitem the
// exact number that Generate produces. It returns 0 for an unknown table or
// a scale factor that is not positive.
func RowCount(table string, sf float64) int64 {
	if _, ok := schemas[table]; !ok || !(sf > 0) {
		return 0
	}
	s := newScale(sf)
	switch table {
	case PartSupp:
		return 4 * s.part
	case Lineitem:
		if v, ok := lineCounts.Load(sf); ok {
			return v.(int64)
		}
		var n int64
		for oi := int64(0); oi < s.orders; oi++ {
			n += linesOf(oi)
		}
		lineCounts.Store(sf, n)
		return n
	}
	return s.units(table)
}

// SliceBounds returns the half-open range of generation units (rows; parts
// for partsupp; orders for lineitem) that slice `slice` of `slices` covers.
func SliceBounds(table string, sf float64, slice, slices int) (lo, hi int64) {
	s := newScale(sf)
	n := s.units(table)
	return sliceOf(n, slice, slices), sliceOf(n, slice+1, slices)
}

func sliceOf(n int64, k, parts int) int64 {
	// n*k/parts without overflow for any realistic n.
	q, r := n/int64(parts), n%int64(parts)
	return q*int64(k) + r*int64(k)/int64(parts)
}

// Generate streams the rows of slice `slice` of `slices` (0 <= slice <
// slices) of table at scale sf, calling emit for each batch of at most
// batchRows rows (DefaultBatchRows if batchRows <= 0). Each batch is
// released when emit returns: emit must not use it afterwards unless it
// called rec.Retain() (and later rec.Release()); batches own their memory.
// Concatenating slices 0..n-1 of n gives exactly slice 0 of 1. An error from
// emit or the context stops generation and is returned.
func Generate(ctx context.Context, table string, sf float64, slice, slices int, batchRows int, emit func(arrow.RecordBatch) error) error {
	schema, err := Schema(table)
	if err != nil {
		return err
	}
	if !(sf > 0) || math.IsInf(sf, 0) {
		return fmt.Errorf("tpch: scale factor must be positive, got %v", sf)
	}
	if slices < 1 || slice < 0 || slice >= slices {
		return fmt.Errorf("tpch: slice %d of %d out of range", slice, slices)
	}
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	lo, hi := SliceBounds(table, sf, slice, slices)
	g := &generator{sc: newScale(sf), pool: getTextPool()}
	// reserve builder space for a full batch, or for the whole slice when smaller
	perUnit := int64(1)
	switch table {
	case PartSupp:
		perUnit = 4
	case Lineitem:
		perUnit = 7
	}
	reserve := min(int64(batchRows), perUnit*(hi-lo))
	b := newBatcher(ctx, schema, batchRows, int(reserve), emit)
	defer b.release()
	switch table {
	case Region:
		err = g.region(b, lo, hi)
	case Nation:
		err = g.nation(b, lo, hi)
	case Supplier:
		err = g.supplier(b, lo, hi)
	case Customer:
		err = g.customer(b, lo, hi)
	case Part:
		err = g.partRows(b, lo, hi)
	case PartSupp:
		err = g.partsupp(b, lo, hi)
	case Orders:
		err = g.orders(b, lo, hi)
	case Lineitem:
		err = g.lineitem(b, lo, hi)
	}
	if err != nil {
		return err
	}
	return b.flush()
}

// Dates, as days since the Unix epoch.
func epochDay(y int, m time.Month, d int) int32 {
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

var (
	startDate   = epochDay(1992, 1, 1)
	currentDate = epochDay(1995, 6, 17)
	endDate     = epochDay(1998, 12, 31)
	// O_ORDERDATE is uniform in [STARTDATE, ENDDATE - 151 days] = [1992-01-01, 1998-08-02].
	orderDateMax = endDate - 151
)
