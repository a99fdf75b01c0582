package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestParquetScanCorruptPage: a file whose pages of one column do not
// decode gives ErrCorruptFile naming that column, whichever columns are
// read with it.
func TestParquetScanCorruptPage(t *testing.T) {
	path := writeTestParquet(t, false)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	const victim = 3 // "name"
	cc, err := pf.MetaData().RowGroup(1).ColumnChunk(victim)
	if err != nil {
		t.Fatal(err)
	}
	off := cc.DataPageOffset()
	pf.Close()
	bad := append([]byte(nil), data...)
	for i := off; i < off+24 && int(i) < len(bad); i++ {
		bad[i] = 0xff // the page header no longer parses
	}
	// With a filter on id, name is decoded late, from the column chunk
	// readers (parquet_late.go); the error is the same.
	idPos := call(plan.OpGe, plan.BoolType, cref(0, plan.Int64Type), litI(0))
	for k, cols := range [][]int{{0, 3, 5}, {3}, {0, 3, 5}} {
		var filter *plan.Expr
		if k == 2 {
			filter = idPos
		}
		op, err := NewParquetScan(context.Background(), bytes.NewReader(bad), scanNode(filter, cols...), nil, Options{Mem: checkedMem(t), BatchRows: 64, Late: LateAlways})
		if k == 2 && err == nil {
			if err := op.(*ParquetScan).start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if l := op.(*ParquetScan).late; l == nil || l.byOut[1] < 0 {
				t.Fatal("name is not decoded late")
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			var rec interface{ Release() }
			rec, err = op.Next(context.Background())
			if err == nil {
				rec.Release()
			}
		}
		op.Close()
		if errors.Is(err, io.EOF) {
			t.Fatalf("columns %v: a corrupt file read to the end", cols)
		}
		if !errors.Is(err, ErrCorruptFile) || !strings.Contains(err.Error(), "corrupt page in column name") {
			t.Fatalf("columns %v: %v, want a corrupt page in column name", cols, err)
		}
	}
}
