package catalog

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// parquetFile returns a Parquet file of one int64 column a with n rows.
func parquetFile(tb testing.TB, n int, colName ...string) []byte {
	tb.Helper()
	name := "a"
	if len(colName) > 0 {
		name = colName[0]
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range n {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func keys(objs []objstore.ObjectInfo) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

// TestListFiles: a single file, a prefix, hidden names, and a writer's
// files visible only once its commit marker exists.
func TestListFiles(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("b")
	w := "20260101-000000-deadbeef"
	for _, k := range []string{"p/x.parquet", "p/y.csv", "p/_SUCCESS", "p/.tmp.parquet", "p/_hidden.parquet",
		"p/" + layout.DataFileName(w, 0, "parquet"), "p/k=1/z.parquet", "q.parquet"} {
		if err := b.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		loc, ext string
		want     []string
	}{
		{"q.parquet", ".parquet", []string{"q.parquet"}},
		{"p/", ".parquet", []string{"p/k=1/z.parquet", "p/x.parquet"}},
		{"p", ".parquet", []string{"p/k=1/z.parquet", "p/x.parquet"}},
		{"p/", ".csv", []string{"p/y.csv"}},
		{"none/", ".csv", []string{}},
	}
	for _, tt := range tests {
		got, err := ListFiles(ctx, b, tt.loc, tt.ext)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(keys(got), tt.want) {
			t.Errorf("ListFiles(%s, %s) = %v, want %v", tt.loc, tt.ext, keys(got), tt.want)
		}
	}
	if _, err := ListFiles(ctx, b, "q.parquet", ".csv"); err == nil {
		t.Error("a .parquet file listed as csv: no error")
	}
	if err := b.Put(ctx, "p/"+layout.CommitMarkerPrefix+w, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	got, _ := ListFiles(ctx, b, "p/", ".parquet")
	if want := []string{"p/" + layout.DataFileName(w, 0, "parquet"), "p/k=1/z.parquet", "p/x.parquet"}; !reflect.DeepEqual(keys(got), want) {
		t.Errorf("after the marker: %v, want %v", keys(got), want)
	}
}

// TestExternalRelist: an external table's new files are seen through
// Store.Table and Store.Layout without registering it again; removed ones
// are dropped; a new file of another schema is an error naming it.
func TestExternalRelist(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("b")
	if err := b.Put(ctx, "ext/a.parquet", parquetFile(t, 10)); err != nil {
		t.Fatal(err)
	}
	tbl, err := Inspect(ctx, b, "e", "ext/")
	if err != nil {
		t.Fatal(err)
	}
	tbl.External = true
	mr := miniredis.RunT(t)
	s := NewStore(redis.NewClient(&redis.Options{Addr: mr.Addr()}))
	s.Bucket = b
	if err := s.Put(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "ext/b.parquet", parquetFile(t, 5)); err != nil {
		t.Fatal(err)
	}
	info, err := s.Table(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	lay, err := s.Layout(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	if info.Rows != 15 || len(lay.Files) != 2 {
		t.Fatalf("after a new file: rows %d, files %d; want 15, 2", info.Rows, len(lay.Files))
	}
	if err := b.Delete(ctx, "ext/a.parquet"); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Table(ctx, "e")
	if info.Rows != 5 {
		t.Fatalf("after a removed file: rows %d, want 5", info.Rows)
	}
	// A file with another schema fails the query, naming the file.
	if err := b.Put(ctx, "ext/c.parquet", parquetFile(t, 3, "z")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Table(ctx, "e"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("ext/c.parquet has a different schema")) {
		t.Fatalf("a file of another schema: %v", err)
	}
}

// BenchmarkRelist measures what re-listing costs a query of an external
// table of 1000 files: unchanged (one LIST, nothing read) and with one new
// file (plus its footer). The in-memory bucket has no latency: on S3 add
// one LIST round trip (and one ranged GET per new file).
func BenchmarkRelist(b *testing.B) {
	ctx := context.Background()
	bk := objstore.NewMem("b")
	data := parquetFile(b, 100)
	for i := range 1000 {
		if err := bk.Put(ctx, fmt.Sprintf("ext/f%04d.parquet", i), data); err != nil {
			b.Fatal(err)
		}
	}
	tbl, err := Inspect(ctx, bk, "e", "ext/")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if changed, err := Relist(ctx, bk, tbl); err != nil || changed {
				b.Fatal(changed, err)
			}
		}
	})
	b.Run("one_new_file", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			t := *tbl
			t.Files = tbl.Files[:len(tbl.Files)-1]
			b.StartTimer()
			if changed, err := Relist(ctx, bk, &t); err != nil || !changed {
				b.Fatal(changed, err)
			}
		}
	})
}
