package function

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// positionDeletes reads Iceberg position-delete files (Parquet with the
// columns file_path and pos) and returns the positions they delete from
// the data file at key dataKey.
func positionDeletes(ctx context.Context, b objstore.Bucket, keys []string, dataKey string) (map[int64]bool, error) {
	out := map[int64]bool{}
	for _, k := range keys {
		if err := readPositionDeletes(ctx, b, k, dataKey, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readPositionDeletes(ctx context.Context, b objstore.Bucket, key, dataKey string, out map[int64]bool) error {
	info, err := b.Stat(ctx, key)
	if err != nil {
		return fmt.Errorf("position-delete file %s: %w", key, err)
	}
	pf, err := file.NewParquetReader(objstore.NewReaderAt(ctx, b, key, info.Size))
	if err != nil {
		return plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("position-delete file %s: %w", key, err))
	}
	defer pf.Close()
	sch := pf.MetaData().Schema
	pathCol, posCol := sch.ColumnIndexByName("file_path"), sch.ColumnIndexByName("pos")
	if pathCol < 0 || posCol < 0 {
		return plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("position-delete file %s: no file_path and pos columns", key))
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.NewGoAllocator())
	if err != nil {
		return fmt.Errorf("position-delete file %s: %w", key, err)
	}
	rr, err := fr.GetRecordReader(ctx, []int{pathCol, posCol}, nil)
	if err != nil {
		return fmt.Errorf("position-delete file %s: %w", key, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		paths, ok1 := rec.Column(0).(*array.String)
		pos, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			return plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("position-delete file %s: file_path is %s and pos is %s, want string and long",
				key, rec.Column(0).DataType(), rec.Column(1).DataType()))
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			if paths.IsNull(i) || pos.IsNull(i) || objectKey(paths.Value(i)) != dataKey {
				continue
			}
			out[pos.Value(i)] = true
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("position-delete file %s: %w", key, err)
	}
	return nil
}

// objectKey is the object key of an s3:// URI (the path after the
// bucket), or the string itself when it is not a URI.
func objectKey(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" {
		return uri
	}
	return strings.TrimPrefix(u.Path, "/")
}
