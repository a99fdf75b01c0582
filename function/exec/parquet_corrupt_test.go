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
	for _, cols := range [][]int{{0, 3, 5}, {3}} {
		op, err := NewParquetScan(context.Background(), bytes.NewReader(bad), scanNode(nil, cols...), nil, Options{Mem: checkedMem(t), BatchRows: 64})
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
