package exec

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// writeFieldIDParquet writes 10 rows (id 0..9, val id*10) in row groups
// of 3, with Iceberg field ids 1 (id) and 2 (val, written under the old
// name "old_val").
func writeFieldIDParquet(t *testing.T) string {
	t.Helper()
	fid := func(id string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{id}) }
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: fid("1")},
		{Name: "old_val", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fid("2")},
	}, nil)
	path := filepath.Join(t.TempDir(), "f.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(3), parquet.WithStats(true)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	for i := int64(0); i < 10; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.Int64Builder).Append(i * 10)
	}
	rec := b.NewRecordBatch()
	b.Release()
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestParquetScanFieldIDs: with Scan.FieldIDs a file's columns are found
// by field id (a renamed column reads, a column the file lacks is NULL),
// and SetDeleted drops rows by their position in the file across row
// groups, also when statistics skip a row group and when no column is
// read.
func TestParquetScanFieldIDs(t *testing.T) {
	path := writeFieldIDParquet(t)
	mem := checkedMem(t)
	scan := func(cols []string, ids []int, types []plan.DataType, filter *plan.Expr, deleted map[int64]bool) (rows int64, out [][]any) {
		t.Helper()
		n := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "iceberg", Columns: cols, FieldIDs: ids, Filter: filter}}
		for i, c := range cols {
			n.Schema = append(n.Schema, plan.Field{Name: c, Type: types[i], Nullable: true})
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		op, err := NewParquetScan(context.Background(), f, n, nil, Options{Mem: mem, BatchRows: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		op.(*ParquetScan).SetDeleted(deleted)
		out = make([][]any, len(cols))
		for {
			rec, err := op.Next(context.Background())
			if err == io.EOF {
				return rows, out
			}
			if err != nil {
				t.Fatal(err)
			}
			rows += rec.NumRows()
			for c := range cols {
				out[c] = append(out[c], goVals(rec.Column(c))...)
			}
			rec.Release()
		}
	}
	i64 := plan.Int64Type
	str := plan.StringType
	// val is field 2 (written as old_val); note (field 3) is not in the file.
	rows, out := scan([]string{"val", "note", "id"}, []int{2, 3, 1}, []plan.DataType{i64, str, i64}, nil, map[int64]bool{0: true, 2: true, 3: true, 9: true})
	if rows != 6 {
		t.Fatalf("rows %d, want 6", rows)
	}
	wantIDs := []any{int64(1), int64(4), int64(5), int64(6), int64(7), int64(8)}
	for i, v := range out[2] {
		if v != wantIDs[i] || out[0][i] != wantIDs[i].(int64)*10 || out[1][i] != nil {
			t.Fatalf("row %d: val %v note %v id %v", i, out[0][i], out[1][i], v)
		}
	}
	// id >= 6 skips row groups 0 and 1 (rows 0-5): positions still count
	// from the file's first row.
	ge6 := plan.Call(plan.OpGe, plan.BoolType, plan.Column(0, "id", i64), plan.Literal(plan.Value{I: 6}, i64))
	if rows, out = scan([]string{"id"}, []int{1}, []plan.DataType{i64}, ge6, map[int64]bool{7: true}); rows != 3 || out[0][0] != int64(6) || out[0][1] != int64(8) {
		t.Fatalf("pruned row groups: %d rows %v", rows, out)
	}
	// No column read: the count drops the deleted rows.
	if rows, _ = scan(nil, []int{}, nil, nil, map[int64]bool{1: true, 5: true, 42: true}); rows != 8 {
		t.Fatalf("zero columns: %d rows, want 8", rows)
	}
	// Only columns the file lacks: NULLs, one per live row.
	if rows, out = scan([]string{"note"}, []int{3}, []plan.DataType{str}, nil, map[int64]bool{4: true}); rows != 9 || out[0][0] != nil {
		t.Fatalf("absent column: %d rows %v", rows, out)
	}
}
