package function

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// tailLog counts, per key, the ranged GETs that reach an object's last
// byte (footer reads), and holds a GET of another part of a file until
// the footer of the file after it (next) was asked for: the scan must
// ask for it while it still reads the file before (or it waits 2 s and
// the file is counted in unwarmed).
type tailLog struct {
	*objstore.Mem
	next     map[string]string
	mu       sync.Mutex
	tails    map[string]int
	asked    map[string]chan struct{} // closed once the key's footer was asked for
	unwarmed []string
}

func (b *tailLog) askedFor(key string) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.asked[key]
	if !ok {
		c = make(chan struct{})
		b.asked[key] = c
	}
	return c
}

func (b *tailLog) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	info, err := b.Mem.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	if n < 0 || off+n >= info.Size {
		b.mu.Lock()
		b.tails[key]++
		first := b.tails[key] == 1
		b.mu.Unlock()
		if first {
			close(b.askedFor(key))
		}
	} else if next, ok := b.next[key]; ok {
		select {
		case <-b.askedFor(next):
		case <-time.After(2 * time.Second):
			b.mu.Lock()
			b.unwarmed = append(b.unwarmed, next)
			b.mu.Unlock()
		}
	}
	return b.Mem.GetRange(ctx, key, off, n)
}

// TestScanWarmsNextFooter: a task of several Parquet files reads every
// row of each, and each file's footer once (the next file's, fetched while
// the one before is decoded, is the one its open uses).
func TestScanWarmsNextFooter(t *testing.T) {
	ctx := context.Background()
	b := &tailLog{Mem: objstore.NewMem("b"), tails: map[string]int{}, asked: map[string]chan struct{}{}, next: map[string]string{}}
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var splits []Split
	var want int64
	for f := range 4 {
		bld := array.NewInt64Builder(memory.DefaultAllocator)
		for i := range 60000 { // about 480 KB: the footer window is not the whole file
			bld.Append(int64(uint64(f*100000+i)*2654435761) & 0xffffffffff)
		}
		col := bld.NewArray()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(schema, &buf, nil, pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("tables/t/f%d.parquet", f)
		if err := b.Put(ctx, key, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if f > 0 {
			b.next[splits[f-1].Key] = key
		}
		splits = append(splits, Split{Key: key, Size: int64(buf.Len())})
		want += int64(col.Len())
	}
	st := plan.Stage{ID: 0, Root: &plan.Node{Kind: plan.KindScan, Schema: plan.Schema{{Name: "x", Type: plan.Int64Type}},
		Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: []string{"x"}}},
		Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}}
	sj, _ := json.Marshal(st)
	var res TaskResult
	_ = json.Unmarshal(NewRuntime(b, nil, nil).Handle(ctx, specBytes(t, func(s *TaskSpec) {
		s.Plan, s.Splits = sj, splits
	})), &res)
	if res.Error != "" || res.Rows != want {
		t.Fatalf("rows %d error %q, want %d rows", res.Rows, res.Error, want)
	}
	if len(b.unwarmed) > 0 {
		t.Errorf("footers not asked for while the file before was read: %v", b.unwarmed)
	}
	for _, sp := range splits {
		if n := b.tails[sp.Key]; n != 1 {
			t.Errorf("%s: footer read %d times, want once", sp.Key, n)
		}
	}
}
