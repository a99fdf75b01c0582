package catalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func fieldNames(fs []plan.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func fieldTypes(fs []plan.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name + ":" + f.Type.String()
	}
	return out
}

// TestHiveTypes: a key's type is inferred over all its values as DuckDB's
// hive_types_autocast does (checked against DuckDB 1.5: DATE, then
// TIMESTAMP, then BIGINT; '+3' and '01' stay VARCHAR; mixed kinds are
// VARCHAR; NULLs do not count).
func TestHiveTypes(t *testing.T) {
	for _, tc := range []struct {
		vals []string
		want string
	}{
		{[]string{"2024", "2025"}, "int64"},
		{[]string{"-5", "3"}, "int64"},
		{[]string{"+3", "4"}, "string"},
		{[]string{"01", "2"}, "string"},
		{[]string{"99999999999999999999", "1"}, "string"},
		{[]string{"2024-01-01", HiveDefaultPartition}, "date"},
		{[]string{"2024-01-01 10:00:00", "2024-01-02T11:00:00.5"}, "timestamp"},
		{[]string{"2024-01-01 10:00:00", "2024-01-01"}, "string"},
		{[]string{"1.5", "2"}, "string"},
		{[]string{"true", "false"}, "string"},
		{[]string{"", ""}, "string"},
		{[]string{HiveDefaultPartition, HiveDefaultPartition}, "string"},
	} {
		t.Run(fmt.Sprint(tc.vals), func(t *testing.T) {
			tbl := &Table{Name: "t", Location: "t/"}
			for i, v := range tc.vals {
				tbl.Files = append(tbl.Files, layout.File{Key: fmt.Sprintf("t/k=%s/f%d.parquet", v, i)})
			}
			if err := applyPartitions(tbl, []plan.Field{{Name: "a", Type: plan.Int64Type}}); err != nil {
				t.Fatal(err)
			}
			if got := tbl.Partitions[0].Type.String(); got != tc.want {
				t.Fatalf("type %s, want %s", got, tc.want)
			}
		})
	}
}

// TestHivePartitions: keys become columns after the file columns, values
// are URL-decoded, __HIVE_DEFAULT_PARTITION__ is NULL, and files with
// other keys are an error naming the table and the file.
func TestHivePartitions(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("b")
	for _, k := range []string{"t/Year=2024/city=New%20York/a.parquet", "t/Year=2025/city=__HIVE_DEFAULT_PARTITION__/a.parquet"} {
		if err := b.Put(ctx, k, parquetFile(t, 3)); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := Inspect(ctx, b, "t", "t/")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(fieldTypes(tbl.Columns), fieldNames(tbl.Partitions), tbl.Files[0].Partition, tbl.Files[1].Partition)
	if want := "[a:int64 year:int64 city:string] [year city] map[city:New York year:2024] map[year:2025]"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	lay := &layout.Table{Partitions: tbl.Partitions}
	v, err := lay.PartitionValues(tbl.Files[1])
	if err != nil || v[0].I != 2025 || !v[1].Null {
		t.Fatalf("values %+v, %v", v, err)
	}

	// A Parquet table's column list declares partition key types, and
	// names nothing else.
	declared, _ := ParseSchema("year varchar")
	dt, err := InspectParquet(ctx, b, "t", "t/", ParquetOptions{Schema: declared})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fieldTypes(dt.Columns)); got != "[a:int64 year:string city:string]" {
		t.Fatalf("declared: %s", got)
	}
	declared, _ = ParseSchema("a bigint")
	if _, err := InspectParquet(ctx, b, "t", "t/", ParquetOptions{Schema: declared}); plan.CodeOf(err) != plan.CodeBadOption {
		t.Fatalf("a file column declared: %v", err)
	}

	// A new file with another key set fails the re-list with a code.
	if err := b.Put(ctx, "t/year=2026/b.parquet", parquetFile(t, 1)); err != nil {
		t.Fatal(err)
	}
	_, err = Relist(ctx, b, tbl)
	if plan.CodeOf(err) != plan.CodeBadPartitions {
		t.Fatalf("relist: %v (code %q)", err, plan.CodeOf(err))
	}
	if want := "table t: file t/year=2026/b.parquet has partition keys [year], file t/Year=2024/city=New%20York/a.parquet has [year, city]"; err == nil || err.Error()[:len(want)] != want {
		t.Fatalf("relist error %v", err)
	}

	// A new partition appears on re-list, and its values widen the type.
	if err := b.Delete(ctx, "t/year=2026/b.parquet"); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "t/year=x/city=Oslo/b.parquet", parquetFile(t, 1)); err != nil {
		t.Fatal(err)
	}
	changed, err := Relist(ctx, b, tbl)
	if err != nil || !changed {
		t.Fatalf("relist: %v %v", changed, err)
	}
	got = fmt.Sprint(fieldTypes(tbl.Columns), len(tbl.Files), tbl.Files[2].Partition)
	if want := "[a:int64 year:string city:string] 3 map[city:Oslo year:x]"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestHiveKeyInFile: a file column named like a partition key is the
// partition column, in the file column's place (DuckDB 1.5 reads the
// folder's value there too).
func TestHiveKeyInFile(t *testing.T) {
	tbl := &Table{Name: "t", Location: "t/", Files: []layout.File{{Key: "t/a=x/b=2/f.parquet"}}}
	if err := applyPartitions(tbl, []plan.Field{{Name: "a", Type: plan.Int64Type}, {Name: "c", Type: plan.Int64Type}}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fieldTypes(tbl.Columns), fieldTypes(fileColumns(tbl))); got != "[a:string c:int64 b:int64] [c:int64]" {
		t.Fatalf("got %s", got)
	}
}

// TestHivePartitionsCSV: a CSV table's column list may name partition
// keys (their declared types win) next to the file columns; the file
// columns stay the CSV columns.
func TestHivePartitionsCSV(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("b")
	for _, k := range []string{"t/y=2024/a.csv", "t/y=2025/a.csv"} {
		if err := b.Put(ctx, k, []byte("a,s\n1,x\n2,y\n")); err != nil {
			t.Fatal(err)
		}
	}
	declared, err := ParseSchema("a bigint, y varchar, s varchar")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := InspectCSV(ctx, b, "t", "t/", CSVOptions{Header: true, Delimiter: ',', Schema: declared})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%v %v %v %v", fieldNames(tbl.Columns), fieldNames(tbl.CSV.Columns), tbl.Partitions[0].Type, tbl.Files[1].Partition["y"])
	if want := "[a y s] [a s] string 2025"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}

	// Without a column list the key's type is inferred.
	tbl, err = InspectCSV(ctx, b, "t", "t/", CSVOptions{Header: true, Delimiter: ','})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fieldTypes(tbl.Columns), fieldNames(tbl.CSV.Columns)); got != "[a:int64 s:string y:int64] [a s]" {
		t.Fatalf("got %s", got)
	}

	// A declared type the values do not parse as is an error.
	declared, _ = ParseSchema("a bigint, s varchar, y date")
	_, err = InspectCSV(ctx, b, "t", "t/", CSVOptions{Header: true, Delimiter: ',', Schema: declared})
	if plan.CodeOf(err) != plan.CodeBadPartitions {
		t.Fatalf("declared date: %v", err)
	}
}
