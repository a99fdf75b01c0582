package shuffle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// writeAttempt writes batches of rows [start, start+n) to an attempt.
func writeAttempt(t testing.TB, b objstore.Bucket, ap string, p plan.Partitioning, opts shuffle.WriterOptions, batches [][2]int) (*shuffle.Manifest, []string) {
	t.Helper()
	ctx := context.Background()
	w := shuffle.NewWriter(b, ap, testSchema, p, opts)
	var rows []string
	for _, bt := range batches {
		rec := genRecord(memory.DefaultAllocator, bt[0], bt[1])
		rows = append(rows, rowStrings(rec)...)
		if err := w.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	m, err := w.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m, rows
}

// readPartition reads the refs and returns the rows and the number of
// record batches.
func readRefs(t testing.TB, b objstore.Bucket, refs []shuffle.ObjectRef) ([]string, int) {
	t.Helper()
	var rows []string
	nb := 0
	err := shuffle.ReadObjectsWith(context.Background(), b, refs, shuffle.ReadOptions{Schema: testSchema}, func(rec arrow.RecordBatch) error {
		rows = append(rows, rowStrings(rec)...)
		nb++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, nb
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		part plan.Partitioning
		opts shuffle.WriterOptions
	}{
		{"hash int64 zstd", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 8}, shuffle.WriterOptions{}},
		{"hash string lz4", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{4}, Count: 5}, shuffle.WriterOptions{Compression: shuffle.CompressionLZ4}},
		{"hash decimal,date none", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{3, 5}, Count: 4}, shuffle.WriterOptions{Compression: shuffle.CompressionNone}},
		{"hash bool,float", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0, 2}, Count: 3}, shuffle.WriterOptions{}},
		{"hash decimal zstd level 3", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{3}, Count: 4}, shuffle.WriterOptions{ZstdLevel: 3}},
		{"hash all columns", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0, 1, 2, 3, 4, 5}, Count: 7}, shuffle.WriterOptions{}},
		{"hash no keys", plan.Partitioning{Kind: plan.PartitionHash, Count: 4}, shuffle.WriterOptions{}},
		{"hash one partition", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 1}, shuffle.WriterOptions{}},
		{"single", plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{}},
		{"broadcast", plan.Partitioning{Kind: plan.PartitionBroadcast, Count: 1}, shuffle.WriterOptions{}},
		{"small batches", plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 6}, shuffle.WriterOptions{BatchRows: 100, MaxBufferedRows: 350}},
		{"single small batches", plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{BatchRows: 700}},
	}
	// Batches of varied sizes, including an empty one and one larger than
	// BatchRows in the small-batch cases.
	batches := [][2]int{{0, 1000}, {1000, 1}, {1001, 0}, {1001, 2500}, {3501, 499}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := newJob(t)
			ap := shuffle.AttemptPrefix("rt", job, 1, 2, 0)
			m, written := writeAttempt(t, bucket, ap, c.part, c.opts, batches)

			if m.Job != job || m.Stage != 1 || m.Task != 2 || m.Attempt != 0 || m.Version != shuffle.ManifestVersion {
				t.Errorf("manifest header = %+v", m)
			}
			if m.Rows != int64(len(written)) {
				t.Errorf("manifest rows %d, want %d", m.Rows, len(written))
			}
			if len(m.Schema) != 6 || m.Schema[3].Type != "decimal(15,2)" || m.Schema[5].Type != "date" {
				t.Errorf("manifest schema = %+v", m.Schema)
			}
			if !reflect.DeepEqual(m.Partitioning, c.part) {
				t.Errorf("manifest partitioning = %+v", m.Partitioning)
			}

			var all []string
			for _, ps := range m.Partitions {
				rows, nb := readRefs(t, bucket, []shuffle.ObjectRef{ps.Ref()})
				if int64(len(rows)) != ps.Rows {
					t.Errorf("partition %d: read %d rows, manifest says %d", ps.Partition, len(rows), ps.Rows)
				}
				if c.opts.BatchRows > 0 && nb < 2 && ps.Rows > int64(c.opts.BatchRows) {
					t.Errorf("partition %d: %d rows in %d batch(es) with BatchRows %d", ps.Partition, ps.Rows, nb, c.opts.BatchRows)
				}
				all = append(all, rows...)
				if c.part.Kind != plan.PartitionHash || len(c.part.Keys) == 0 {
					continue
				}
				// Every row is in the partition its key hashes to.
				err := shuffle.ReadObjects(context.Background(), bucket, []shuffle.ObjectRef{ps.Ref()}, func(rec arrow.RecordBatch) error {
					cols := make([]arrow.Array, len(c.part.Keys))
					for i, k := range c.part.Keys {
						cols[i] = rec.Column(k)
					}
					h := make([]uint64, rec.NumRows())
					if err := shuffle.HashColumns(cols, h); err != nil {
						return err
					}
					for r, x := range h {
						if int(x%uint64(c.part.Count)) != ps.Partition {
							return fmt.Errorf("row %d of partition %d hashes to %d", r, ps.Partition, x%uint64(c.part.Count))
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if got, want := sortedCopy(all), sortedCopy(written); !reflect.DeepEqual(got, want) {
				t.Fatalf("read %d rows, wrote %d; contents differ", len(got), len(want))
			}
			// Reading all objects at once gives the same rows.
			rows, _ := readRefs(t, bucket, m.Refs())
			if !reflect.DeepEqual(sortedCopy(rows), sortedCopy(written)) {
				t.Fatal("multi-object read differs")
			}
			// The attempt wrote one data object, a plain Arrow IPC file
			// whose batches are the partitions' runs, in partition order.
			data, err := bucket.Get(context.Background(), m.Object)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != m.ObjectBytes {
				t.Errorf("object has %d bytes, manifest says %d", len(data), m.ObjectBytes)
			}
			fr, err := ipc.NewFileReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s is not an Arrow IPC file: %v", m.Object, err)
			}
			if !fr.Schema().Equal(testSchema) {
				t.Errorf("%s schema %s", m.Object, fr.Schema())
			}
			var fileRows []string
			for i := 0; i < fr.NumRecords(); i++ {
				rec, err := fr.RecordBatch(i)
				if err != nil {
					t.Fatal(err)
				}
				fileRows = append(fileRows, rowStrings(rec)...)
			}
			fr.Close()
			if !reflect.DeepEqual(sortedCopy(fileRows), sortedCopy(written)) {
				t.Errorf("arrow-go's FileReader read %d rows, wrote %d", len(fileRows), len(written))
			}
			// The file's stream part (after the 8-byte magic) reads as an
			// IPC stream too.
			sr, err := ipc.NewReader(bytes.NewReader(data[8:]))
			if err != nil {
				t.Fatalf("%s: stream part: %v", m.Object, err)
			}
			var n int64
			for sr.Next() {
				n += sr.RecordBatch().NumRows()
			}
			if sr.Err() != nil || n != m.Rows {
				t.Errorf("%s: stream part read %d rows (%v), want %d", m.Object, n, sr.Err(), m.Rows)
			}
			sr.Release()
			for _, ps := range m.Partitions {
				if ps.Key != m.Object || ps.Checksum != shuffle.SumOf(data[ps.Offset:ps.Offset+ps.Bytes]) {
					t.Errorf("partition %d: manifest checksum does not match its range", ps.Partition)
				}
			}
		})
	}
}

func TestHashPartitioningGroupsKeysDeterministically(t *testing.T) {
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{4}, Count: 8}
	job := newJob(t)
	// The same rows, split into batches differently, by two attempts.
	m1, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix("", job, 0, 0, 0), part, shuffle.WriterOptions{}, [][2]int{{0, 3000}})
	m2, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix("", job, 0, 0, 1), part, shuffle.WriterOptions{}, [][2]int{{0, 7}, {7, 1000}, {1007, 1993}})
	// And the same rows again with identical batches: identical bytes.
	m3, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix("", job, 0, 0, 2), part, shuffle.WriterOptions{}, [][2]int{{0, 3000}})

	keyPart := map[string]int{}
	for _, m := range []*shuffle.Manifest{m1, m2} {
		for _, ps := range m.Partitions {
			err := shuffle.ReadObjects(context.Background(), bucket, []shuffle.ObjectRef{ps.Ref()}, func(rec arrow.RecordBatch) error {
				col := rec.Column(4)
				for r := 0; r < col.Len(); r++ {
					key := col.ValueStr(r)
					if col.IsNull(r) {
						key = "<NULL>"
					}
					if p, ok := keyPart[key]; ok && p != ps.Partition {
						return fmt.Errorf("key %q in partitions %d and %d", key, p, ps.Partition)
					}
					keyPart[key] = ps.Partition
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(keyPart) != 351 { // 50 x 7 strings and NULL
		t.Errorf("saw %d distinct keys, want 351", len(keyPart))
	}
	if len(m1.Partitions) != len(m2.Partitions) {
		t.Fatalf("non-empty partitions differ: %d vs %d", len(m1.Partitions), len(m2.Partitions))
	}
	for i := range m1.Partitions {
		if m1.Partitions[i].Partition != m2.Partitions[i].Partition || m1.Partitions[i].Rows != m2.Partitions[i].Rows {
			t.Errorf("partition stats differ: %+v vs %+v", m1.Partitions[i], m2.Partitions[i])
		}
		if m1.Partitions[i].Checksum != m3.Partitions[i].Checksum {
			t.Errorf("partition %d: identical input gave different bytes", m1.Partitions[i].Partition)
		}
	}
}

func TestEmptyPartitionsWriteNoObject(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	// Keys 0..2 only, 64 partitions: at most 3 non-empty.
	schema := plan.Schema{{Name: "k", Type: plan.Int64Type}}.Arrow()
	ap := shuffle.AttemptPrefix("e", job, 0, 0, 0)
	w := shuffle.NewWriter(bucket, ap, schema, plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 64}, shuffle.WriterOptions{})
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 300; i++ {
		bld.Append(int64(i % 3))
	}
	col := bld.NewArray()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 300)
	if err := w.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	m, err := w.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := bucket.List(ctx, ap)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Partitions) == 0 || len(m.Partitions) > 3 || len(objs) != 2 || objs[1].Key != m.Object {
		t.Fatalf("%d non-empty partitions, objects %+v (want the data object and the manifest)", len(m.Partitions), objs)
	}
	if m.NumPartitions != 64 {
		t.Errorf("NumPartitions = %d", m.NumPartitions)
	}

	// A writer that gets no rows writes only its manifest.
	ap2 := shuffle.AttemptPrefix("e", job, 0, 1, 0)
	w2 := shuffle.NewWriter(bucket, ap2, schema, plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 4}, shuffle.WriterOptions{})
	empty := array.NewRecordBatch(schema, []arrow.Array{array.NewSlice(col, 0, 0)}, 0)
	if err := w2.Write(ctx, empty); err != nil {
		t.Fatal(err)
	}
	m2, err := w2.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	objs, _ = bucket.List(ctx, ap2)
	if len(m2.Partitions) != 0 || m2.Rows != 0 || len(objs) != 1 || objs[0].Key != shuffle.ManifestKey(ap2) {
		t.Fatalf("empty attempt: manifest %+v, objects %+v", m2, objs)
	}
	rm, err := shuffle.ReadManifest(ctx, bucket, ap2)
	if err != nil || len(rm.Partitions) != 0 {
		t.Fatalf("ReadManifest of empty attempt = %+v, %v", rm, err)
	}
}

// recordingBucket passes through to a real bucket, recording the order of
// Puts, and can fail the Put of keys containing failOn.
type recordingBucket struct {
	objstore.Bucket
	mu     sync.Mutex
	puts   []string
	failOn string
}

func (r *recordingBucket) Put(ctx context.Context, key string, data []byte) error {
	if r.failOn != "" && strings.Contains(key, r.failOn) {
		return errors.New("injected put failure")
	}
	err := r.Bucket.Put(ctx, key, data)
	r.mu.Lock()
	r.puts = append(r.puts, key)
	r.mu.Unlock()
	return err
}

func (r *recordingBucket) PutReader(ctx context.Context, key string, rd io.Reader, size int64) error {
	if r.failOn != "" && strings.Contains(key, r.failOn) {
		return errors.New("injected put failure")
	}
	err := r.Bucket.PutReader(ctx, key, rd, size)
	r.mu.Lock()
	r.puts = append(r.puts, key)
	r.mu.Unlock()
	return err
}

func TestManifestWrittenLast(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 16}
	rb := &recordingBucket{Bucket: bucket}
	ap := shuffle.AttemptPrefix("", job, 3, 0, 0)
	m, _ := writeAttempt(t, rb, ap, part, shuffle.WriterOptions{UploadConcurrency: 8}, [][2]int{{0, 2000}})
	if len(rb.puts) != 2 || rb.puts[0] != shuffle.DataKey(ap) || rb.puts[1] != shuffle.ManifestKey(ap) || len(m.Partitions) < 8 {
		t.Fatalf("puts %q for %d partitions: want one data object, then the manifest", rb.puts, len(m.Partitions))
	}
	// The manifest is readable JSON with the documented fields.
	data, err := bucket.Get(ctx, shuffle.ManifestKey(ap))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"version", "job", "stage", "task", "attempt", "partitions", "rows", "bytes", "schema", "partitioning", "object", "object_bytes"} {
		if _, ok := raw[f]; !ok {
			t.Errorf("manifest lacks %q: %s", f, data)
		}
	}

	// A failed part upload leaves no manifest.
	fb := &recordingBucket{Bucket: bucket, failOn: shuffle.DataName}
	ap2 := shuffle.AttemptPrefix("", job, 3, 1, 0)
	w := shuffle.NewWriter(fb, ap2, testSchema, part, shuffle.WriterOptions{})
	rec := genRecord(memory.DefaultAllocator, 0, 500)
	defer rec.Release()
	if err := w.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(ctx); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("Close with failing uploads = %v", err)
	}
	if _, err := shuffle.ReadManifest(ctx, bucket, ap2); !errors.Is(err, shuffle.ErrMissing) || !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("manifest after failed Close: %v", err)
	}
	w.Abort() // harmless after Close
}

func TestWriterErrors(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	ap := shuffle.AttemptPrefix("", job, 0, 0, 0)
	hash := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 4}
	timeListSchema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.FixedWidthTypes.Time32s)}}, nil)
	cases := []struct {
		name   string
		prefix string
		schema *arrow.Schema
		part   plan.Partitioning
		opts   shuffle.WriterOptions
		want   string
	}{
		{"bad prefix", "tmp/foo", testSchema, hash, shuffle.WriterOptions{}, "attempt prefix"},
		{"bad job in prefix", "jobs/a.b/stage-0/task-0/a0/", testSchema, hash, shuffle.WriterOptions{}, "job id"},
		{"key out of range", ap, testSchema, plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{9}, Count: 2}, shuffle.WriterOptions{}, "out of range"},
		{"zero count", ap, testSchema, plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}}, shuffle.WriterOptions{}, "count 0"},
		{"unknown kind", ap, testSchema, plan.Partitioning{Kind: "roundrobin", Count: 2}, shuffle.WriterOptions{}, "unsupported partitioning"},
		{"bad compression", ap, testSchema, hash, shuffle.WriterOptions{Compression: "gzip"}, "compression"},
		{"unsupported column", ap, timeListSchema, plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{}, "unsupported column type"},
		{"unhashable key", ap, timeListSchema, plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 2}, shuffle.WriterOptions{}, "cannot hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := shuffle.NewWriter(bucket, c.prefix, c.schema, c.part, c.opts)
			_, err := w.Close(ctx)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Close = %v, want an error containing %q", err, c.want)
			}
		})
	}
	t.Run("schema mismatch", func(t *testing.T) {
		other := plan.Schema{{Name: "x", Type: plan.Int64Type}}.Arrow()
		w := shuffle.NewWriter(bucket, ap, other, plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{})
		rec := genRecord(memory.DefaultAllocator, 0, 10)
		defer rec.Release()
		if err := w.Write(ctx, rec); err == nil {
			t.Fatal("Write of a record with another schema succeeded")
		}
		if _, err := w.Close(ctx); err == nil {
			t.Fatal("Close after a failed Write succeeded")
		}
	})
	t.Run("use after close", func(t *testing.T) {
		w := shuffle.NewWriter(bucket, shuffle.AttemptPrefix("", job, 0, 9, 0), testSchema, hash, shuffle.WriterOptions{})
		if _, err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		rec := genRecord(memory.DefaultAllocator, 0, 10)
		defer rec.Release()
		if err := w.Write(ctx, rec); err == nil {
			t.Error("Write after Close succeeded")
		}
		if _, err := w.Close(ctx); err == nil {
			t.Error("second Close succeeded")
		}
	})
}

func TestReaderRejectsDamagedObjects(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	ap := shuffle.AttemptPrefix("", job, 0, 0, 0)
	m, _ := writeAttempt(t, bucket, ap, plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{}, [][2]int{{0, 3000}})
	ps := m.Partitions[0]
	good, err := bucket.Get(ctx, ps.Key)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[ps.Offset+ps.Bytes/2] ^= 0xff
	garbage := bytes.Repeat([]byte("not arrow"), 100)
	// Cut inside the partition's range, and cut only the footer (the
	// partition's bytes intact: a ranged read needs no footer).
	cut := good[:ps.Offset+ps.Bytes-100]
	noFooter := good[:ps.Offset+ps.Bytes]

	cases := []struct {
		name    string
		content []byte // nil: delete the object
		ref     shuffle.ObjectRef
		want    error // nil: reads fine
	}{
		{"truncated, ranged", cut, ps.Ref(), shuffle.ErrCorrupt},
		{"footer cut, ranged", noFooter, ps.Ref(), nil},
		{"truncated, whole, checksum only", good[:len(good)-100], shuffle.ObjectRef{Key: ps.Key, Checksum: shuffle.SumOf(good)}, shuffle.ErrCorrupt},
		{"truncated, whole, unchecked", good[:len(good)-100], shuffle.ObjectRef{Key: ps.Key}, shuffle.ErrCorrupt},
		{"byte flipped, ranged", flipped, ps.Ref(), shuffle.ErrCorrupt},
		{"garbage, ranged", garbage, ps.Ref(), shuffle.ErrCorrupt},
		{"garbage, whole, unchecked", garbage, shuffle.ObjectRef{Key: ps.Key}, shuffle.ErrCorrupt},
		{"row count differs, ranged", good, func() shuffle.ObjectRef { r := ps.Ref(); r.Rows++; return r }(), shuffle.ErrCorrupt},
		{"row count differs, whole", good, shuffle.ObjectRef{Key: ps.Key, Rows: ps.Rows + 1}, shuffle.ErrCorrupt},
		{"deleted", nil, ps.Ref(), shuffle.ErrMissing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.content == nil {
				if err := bucket.Delete(ctx, ps.Key); err != nil {
					t.Fatal(err)
				}
			} else if err := bucket.Put(ctx, ps.Key, c.content); err != nil {
				t.Fatal(err)
			}
			var rows int64
			err := shuffle.ReadObjectsWith(ctx, bucket, []shuffle.ObjectRef{c.ref}, shuffle.ReadOptions{Schema: testSchema},
				func(r arrow.RecordBatch) error { rows += r.NumRows(); return nil })
			if c.want == nil {
				if err != nil || rows != ps.Rows {
					t.Fatalf("ReadObjects = %v, %d rows; want %d rows", err, rows, ps.Rows)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("ReadObjects = %v, want %v", err, c.want)
			}
			if key, ok := shuffle.FailedObject(err); !ok || key != c.ref.ID() {
				t.Errorf("FailedObject = %q, %v; want %q", key, ok, c.ref.ID())
			}
			if info, err := shuffle.ParseKey(c.ref.ID()); err != nil || info.Task != 0 || (c.ref.Ranged() && info.Part != ps.Partition) {
				t.Errorf("ParseKey(%q) = %+v, %v", c.ref.ID(), info, err)
			}
			var ce *shuffle.CorruptError
			var me *shuffle.MissingError
			if c.want == shuffle.ErrCorrupt && !errors.As(err, &ce) {
				t.Errorf("error is not a *CorruptError: %T", err)
			}
			if c.want == shuffle.ErrMissing && (!errors.As(err, &me) || !errors.Is(err, objstore.ErrNotFound)) {
				t.Errorf("error is not a *MissingError wrapping ErrNotFound: %v", err)
			}
		})
	}
	// Restored, it reads again; an error from fn stops the read as is.
	if err := bucket.Put(ctx, ps.Key, good); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	err = shuffle.ReadObjects(ctx, bucket, []shuffle.ObjectRef{ps.Ref(), ps.Ref()}, func(arrow.RecordBatch) error { return stop })
	if err != stop {
		t.Fatalf("fn error not returned as is: %v", err)
	}
	// A corrupt manifest.
	if err := bucket.Put(ctx, shuffle.ManifestKey(ap), []byte(`{"version":1,"rows":5,"partitions":[]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := shuffle.ReadManifest(ctx, bucket, ap); !errors.Is(err, shuffle.ErrCorrupt) {
		t.Fatalf("ReadManifest of inconsistent manifest = %v", err)
	}
}

func TestReadObjectsOrderAndPrefetch(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	var refs []shuffle.ObjectRef
	var want []string
	for task := 0; task < 6; task++ {
		m, rows := writeAttempt(t, bucket, shuffle.AttemptPrefix("", job, 0, task, 0),
			plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{}, [][2]int{{task * 100, 100}})
		refs = append(refs, m.Refs()...)
		want = append(want, rows...)
	}
	for _, prefetch := range []int{1, 2, 5} {
		var got []string
		err := shuffle.ReadObjectsWith(ctx, bucket, refs, shuffle.ReadOptions{Prefetch: prefetch}, func(rec arrow.RecordBatch) error {
			got = append(got, rowStrings(rec)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("prefetch %d: rows out of order", prefetch)
		}
	}
	// A missing object in the middle stops the read with ErrMissing.
	bad := append(append([]shuffle.ObjectRef{}, refs[:2]...), shuffle.ObjectRef{Key: "jobs/" + job + "/stage-0/task-99/a0/part-0.arrow"})
	if err := shuffle.ReadObjects(ctx, bucket, bad, func(arrow.RecordBatch) error { return nil }); !errors.Is(err, shuffle.ErrMissing) {
		t.Fatalf("err = %v", err)
	}
	// A canceled context stops it.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := shuffle.ReadObjects(cctx, bucket, refs, func(arrow.RecordBatch) error { return nil }); err == nil {
		t.Fatal("read with a canceled context succeeded")
	}
}

// writeStage writes a stage of several tasks with retried, unfinished and
// duplicate attempts, and returns the manifests of the lowest finished
// attempt of each task.
func writeStage(t *testing.T, prefix, job string, stage int) []*shuffle.Manifest {
	t.Helper()
	ctx := context.Background()
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 12}
	var lowest []*shuffle.Manifest
	for task := 0; task < 4; task++ {
		rows := [][2]int{{task * 1000, 700 + task*150}}
		switch task {
		case 1:
			// a0 died after uploading some parts: no manifest.
			w := shuffle.NewWriter(bucket, shuffle.AttemptPrefix(prefix, job, stage, task, 0), testSchema, part, shuffle.WriterOptions{})
			rec := genRecord(memory.DefaultAllocator, 0, 50)
			w.Write(ctx, rec)
			rec.Release()
			m, err := w.Close(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := bucket.Delete(ctx, shuffle.ManifestKey(shuffle.AttemptPrefix(prefix, job, stage, task, 0))); err != nil {
				t.Fatal(err)
			}
			_ = m
			m1, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix(prefix, job, stage, task, 1), part, shuffle.WriterOptions{}, rows)
			lowest = append(lowest, m1)
		case 2:
			// A hedged duplicate: a0 and a3 both finished.
			m0, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix(prefix, job, stage, task, 0), part, shuffle.WriterOptions{}, rows)
			writeAttempt(t, bucket, shuffle.AttemptPrefix(prefix, job, stage, task, 3), part, shuffle.WriterOptions{}, rows)
			lowest = append(lowest, m0)
		default:
			m, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix(prefix, job, stage, task, 0), part, shuffle.WriterOptions{}, rows)
			lowest = append(lowest, m)
		}
	}
	return lowest
}

func TestStatsFromListingEqualsManifests(t *testing.T) {
	ctx := context.Background()
	for _, prefix := range []string{"", "some/prefix"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			job := newJob(t)
			lowest := writeStage(t, prefix, job, 5)
			// Another stage of the same job must not leak in.
			writeAttempt(t, bucket, shuffle.AttemptPrefix(prefix, job, 50, 0, 0), plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{}, [][2]int{{0, 10}})

			want := shuffle.StatsFromManifests(lowest)
			got, err := shuffle.StatsFromListing(ctx, bucket, prefix, job, 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("StatsFromListing != StatsFromManifests:\n%+v\n%+v", got, want)
			}
			if want.NumPartitions != 12 || len(want.Attempts) != 4 || want.Attempts[1] != 1 || want.Attempts[2] != 0 {
				t.Errorf("stats = %+v", want)
			}
			var rows, bytes int64
			for _, m := range lowest {
				rows += m.Rows
				bytes += m.Bytes
			}
			if want.Rows != rows || want.Bytes != bytes {
				t.Errorf("totals %d rows %d bytes, want %d, %d", want.Rows, want.Bytes, rows, bytes)
			}
			var sum int64
			for _, b := range want.PartitionBytes() {
				sum += b
			}
			if sum != bytes {
				t.Errorf("PartitionBytes sum %d, want %d", sum, bytes)
			}
			// The refs of a partition read back its rows.
			ps := want.Sorted()[0]
			rs, _ := readRefs(t, bucket, want.Refs(ps.Partition))
			if int64(len(rs)) != ps.Rows {
				t.Errorf("partition %d: read %d rows, stats say %d", ps.Partition, len(rs), ps.Rows)
			}

			// With the coordinator's commits (a3 won for task 2).
			committed := map[int]int{0: 0, 1: 1, 2: 3, 3: 0}
			mc, err := shuffle.ReadManifest(ctx, bucket, shuffle.AttemptPrefix(prefix, job, 5, 2, 3))
			if err != nil {
				t.Fatal(err)
			}
			withCommits := []*shuffle.Manifest{lowest[0], lowest[1], mc, lowest[3]}
			got, err = shuffle.StatsFromListing(ctx, bucket, prefix, job, 5, committed)
			if err != nil {
				t.Fatal(err)
			}
			if want := shuffle.StatsFromManifests(withCommits); !reflect.DeepEqual(got, want) {
				t.Fatalf("with commits: StatsFromListing != StatsFromManifests:\n%+v\n%+v", got, want)
			}
			if got.Attempts[2] != 3 {
				t.Errorf("task 2 attempt %d, want 3", got.Attempts[2])
			}

			// A committed attempt without a manifest is missing.
			_, err = shuffle.StatsFromListing(ctx, bucket, prefix, job, 5, map[int]int{1: 0})
			if !errors.Is(err, shuffle.ErrMissing) {
				t.Errorf("committed attempt without manifest: %v", err)
			}
			// A lost part object is missing; a resized one corrupt.
			victim := lowest[3].Partitions[0]
			data, _ := bucket.Get(ctx, victim.Key)
			bucket.Delete(ctx, victim.Key)
			if _, err := shuffle.StatsFromListing(ctx, bucket, prefix, job, 5, nil); !errors.Is(err, shuffle.ErrMissing) {
				t.Errorf("deleted part: %v", err)
			}
			bucket.Put(ctx, victim.Key, data[:len(data)-1])
			if _, err := shuffle.StatsFromListing(ctx, bucket, prefix, job, 5, nil); !errors.Is(err, shuffle.ErrCorrupt) {
				t.Errorf("truncated part: %v", err)
			}
			bucket.Put(ctx, victim.Key, data)
			// An empty stage has empty stats.
			empty, err := shuffle.StatsFromListing(ctx, bucket, prefix, job, 6, nil)
			if err != nil || empty.Rows != 0 || len(empty.Partitions) != 0 {
				t.Errorf("empty stage: %+v, %v", empty, err)
			}
		})
	}
}

func TestListJobAndCat(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	lowest := writeStage(t, "p", job, 2)
	// Non-shuffle keys of the job are ignored.
	bucket.Put(ctx, shuffle.JobPrefix("p", job)+"plans/2-r0.json", []byte("{}"))
	writeAttempt(t, bucket, shuffle.AttemptPrefix("p", job, 10, 0, 0), plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{}, [][2]int{{0, 10}})

	entries, err := shuffle.ListJob(ctx, bucket, "p", job)
	if err != nil {
		t.Fatal(err)
	}
	// Ordered numerically: stage 2 before stage 10.
	if entries[0].Stage != 2 || entries[len(entries)-1].Stage != 10 || !entries[len(entries)-1].Manifest {
		t.Errorf("order: first %+v last %+v", entries[0], entries[len(entries)-1])
	}
	var sawUnfinished bool
	for i, e := range entries {
		if strings.Contains(e.Key, "plans/") {
			t.Errorf("non-shuffle key listed: %s", e.Key)
		}
		if e.Stage == 2 && e.Task == 1 && e.Attempt == 0 {
			sawUnfinished = true
			if e.Rows != -1 || e.Note != "no manifest" {
				t.Errorf("unfinished attempt entry %+v", e)
			}
			continue
		}
		if e.Rows < 0 || e.Note != "" {
			t.Errorf("entry %+v has no rows", e)
		}
		if i > 0 {
			p := entries[i-1]
			if p.Stage == e.Stage && p.Task == e.Task && p.Attempt == e.Attempt && !p.Manifest && !e.Manifest && p.Part >= e.Part {
				t.Errorf("parts out of order: %d then %d", p.Part, e.Part)
			}
		}
	}
	if !sawUnfinished {
		t.Error("unfinished attempt not listed")
	}

	// Cat decodes a whole data object, or one partition of it; the rows
	// match the manifest.
	m0 := lowest[0]
	var n int64
	if err := shuffle.Cat(ctx, bucket, m0.Object, func(rec arrow.RecordBatch) error { n += rec.NumRows(); return nil }); err != nil {
		t.Fatal(err)
	}
	if n != m0.Rows {
		t.Errorf("Cat of the object read %d rows, want %d", n, m0.Rows)
	}
	for _, ps := range m0.Partitions {
		n = 0
		if err := shuffle.Cat(ctx, bucket, ps.ID(), func(rec arrow.RecordBatch) error { n += rec.NumRows(); return nil }); err != nil {
			t.Fatal(err)
		}
		if n != ps.Rows {
			t.Errorf("Cat of %s read %d rows, want %d", ps.ID(), n, ps.Rows)
		}
	}
	if err := shuffle.Cat(ctx, bucket, shuffle.ManifestKey(shuffle.AttemptPrefix("p", job, 2, 0, 0)), func(arrow.RecordBatch) error { return nil }); err == nil {
		t.Error("Cat of a manifest succeeded")
	}
	if err := shuffle.Cat(ctx, bucket, "p/jobs/"+job+"/nope.arrow", func(arrow.RecordBatch) error { return nil }); !errors.Is(err, shuffle.ErrMissing) {
		t.Errorf("Cat of a missing key = %v", err)
	}
	if _, err := shuffle.ListJob(ctx, bucket, "p", "bad/job"); err == nil {
		t.Error("ListJob accepted an invalid job id")
	}
}

// TestReaderAtOverShuffleObject reads a shuffle object through the ranged
// ReaderAt (as a Parquet or IPC reader of a large object would).
func TestReaderAtOverShuffleObject(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	m, rows := writeAttempt(t, bucket, shuffle.AttemptPrefix("", job, 0, 0, 0), plan.Partitioning{Kind: plan.PartitionSingle, Count: 1},
		shuffle.WriterOptions{BatchRows: 1000}, [][2]int{{0, 1000}, {1000, 1000}, {2000, 1000}, {3000, 1000}, {4000, 1000}})
	ps := m.Partitions[0]
	before := bucketStats()
	ra := objstore.NewReaderAt(ctx, bucket, ps.Key, m.ObjectBytes, objstore.WithMinRead(4<<10))
	fr, err := ipc.NewFileReader(ra)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	// Read only the last record batch.
	rec, err := fr.RecordBatch(fr.NumRecords() - 1)
	if err != nil {
		t.Fatal(err)
	}
	got := rowStrings(rec)
	if !reflect.DeepEqual(got, rows[len(rows)-len(got):]) {
		t.Fatal("last batch read through ReaderAt differs")
	}
	st := bucketStats().Sub(before)
	if st.BytesRead >= ps.Bytes {
		t.Errorf("read %d bytes of a %d-byte object to decode one of %d batches", st.BytesRead, ps.Bytes, fr.NumRecords())
	}
	t.Logf("one batch of %d via ReaderAt: %d GETs, %d of %d bytes", fr.NumRecords(), st.Get, st.BytesRead, ps.Bytes)
	var _ io.ReaderAt = ra
}

// TestSlicedInput writes record batches that are slices (non-zero, unaligned
// offsets), directly encoded (single partition, big batches) and copied
// (hash partitioning), for every compression.
func TestSlicedInput(t *testing.T) {
	ctx := context.Background()
	full := genRecord(memory.DefaultAllocator, 0, 5000)
	defer full.Release()
	allRows := rowStrings(full)
	for _, comp := range []shuffle.Compression{shuffle.CompressionZstd, shuffle.CompressionLZ4, shuffle.CompressionNone} {
		for _, part := range []plan.Partitioning{
			{Kind: plan.PartitionSingle, Count: 1},
			{Kind: plan.PartitionHash, Keys: []int{4}, Count: 3},
		} {
			t.Run(fmt.Sprintf("%s/%s", comp, part.Kind), func(t *testing.T) {
				job := newJob(t)
				w := shuffle.NewWriter(bucket, shuffle.AttemptPrefix("", job, 0, 0, 0), testSchema, part, shuffle.WriterOptions{Compression: comp, BatchRows: 1000})
				var want []string
				for _, r := range [][2]int64{{3, 1500}, {1501, 1502}, {1777, 4999}} {
					sl := full.NewSlice(r[0], r[1])
					want = append(want, allRows[r[0]:r[1]]...)
					if err := w.Write(ctx, sl); err != nil {
						t.Fatal(err)
					}
					sl.Release()
				}
				m, err := w.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := readRefs(t, bucket, m.Refs())
				if !reflect.DeepEqual(sortedCopy(got), sortedCopy(want)) {
					t.Fatalf("read %d rows, wrote %d: contents differ", len(got), len(want))
				}
			})
		}
	}
}
