package exec

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/sluicedb/sluice/local/tpch"
	"github.com/sluicedb/sluice/planner/plan"
)

// BenchmarkParquetScanLineitem scans the columns TPC-H Q1 reads from a
// lineitem file at SF 0.1 (600 k rows, the generator's row groups) into
// engine batches; MB/s is of the file's bytes.
func BenchmarkParquetScanLineitem(b *testing.B) {
	dir := b.TempDir()
	files, err := tpch.WriteTableParquet(context.Background(), dir, tpch.Lineitem, 0.1, tpch.WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	n := &plan.Node{
		Scan: &plan.Scan{Table: "lineitem", Format: "parquet", Columns: []string{"l_quantity", "l_extendedprice",
			"l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"}},
		Schema: plan.Schema{{Name: "l_quantity", Type: plan.DecimalType(15, 2)}, {Name: "l_extendedprice", Type: plan.DecimalType(15, 2)},
			{Name: "l_discount", Type: plan.DecimalType(15, 2)}, {Name: "l_tax", Type: plan.DecimalType(15, 2)},
			{Name: "l_returnflag", Type: plan.StringType}, {Name: "l_linestatus", Type: plan.StringType},
			{Name: "l_shipdate", Type: plan.DateType}},
	}
	var size int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rows int64
		for _, path := range files {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			op, err := NewParquetScan(context.Background(), f, n, nil, Options{})
			if err != nil {
				b.Fatal(err)
			}
			for {
				rec, err := op.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				rows += rec.NumRows()
				rec.Release()
			}
			op.Close()
			f.Close()
		}
		if want := tpch.RowCount(tpch.Lineitem, 0.1); rows != want {
			b.Fatalf("%d rows, want %d", rows, want)
		}
	}
}
