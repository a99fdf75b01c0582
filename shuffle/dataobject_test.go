package shuffle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// readParts reads partitions parts of every manifest (in the order a
// consumer task's input lists them: partition by partition, then task by
// task) and returns the rows, the read stats and the GETs MinIO saw.
func readParts(t *testing.T, ms []*shuffle.Manifest, parts []int, opts shuffle.ReadOptions) ([]string, *shuffle.ReadStats, int64) {
	t.Helper()
	var refs []shuffle.ObjectRef
	for _, p := range parts {
		for _, m := range ms {
			if ps, ok := m.Partition(p); ok {
				refs = append(refs, ps.Ref())
			}
		}
	}
	st := &shuffle.ReadStats{}
	opts.Stats = st
	if opts.Schema == nil {
		opts.Schema = testSchema
	}
	before := bucketStats()
	var rows []string
	err := shuffle.ReadObjectsWith(context.Background(), bucket, refs, opts, func(rec arrow.RecordBatch) error {
		rows = append(rows, rowStrings(rec)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, st, bucketStats().Sub(before).Get
}

// wantRows reads the same partitions one object at a time (whole data
// objects through arrow-go's FileReader, filtered by partition hash), the
// oracle of readParts.
func wantRows(t *testing.T, ms []*shuffle.Manifest, parts []int, part plan.Partitioning) []string {
	t.Helper()
	want := map[int]bool{}
	for _, p := range parts {
		want[p] = true
	}
	var rows []string
	for _, m := range ms {
		data, err := bucket.Get(context.Background(), m.Object)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := ipc.NewFileReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < fr.NumRecords(); i++ {
			rec, err := fr.RecordBatch(i)
			if err != nil {
				t.Fatal(err)
			}
			cols := make([]arrow.Array, len(part.Keys))
			for j, k := range part.Keys {
				cols[j] = rec.Column(k)
			}
			h := make([]uint64, rec.NumRows())
			if err := shuffle.HashColumns(cols, h); err != nil {
				t.Fatal(err)
			}
			all := rowStrings(rec)
			for r, x := range h {
				if want[int(x%uint64(part.Count))] {
					rows = append(rows, all[r])
				}
			}
		}
		fr.Close()
	}
	return rows
}

func TestRangedAndMergedReads(t *testing.T) {
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 16}
	job := newJob(t)
	var ms []*shuffle.Manifest
	for task := 0; task < 4; task++ {
		m, _ := writeAttempt(t, bucket, shuffle.SpreadAttemptPrefix("r", 2, job, 1, task, 0), part,
			shuffle.WriterOptions{BatchRows: 500}, [][2]int{{task * 3000, 3000}})
		if len(m.Partitions) != 16 {
			t.Fatalf("task %d: %d non-empty partitions, want 16", task, len(m.Partitions))
		}
		ms = append(ms, m)
	}
	cases := []struct {
		name  string
		parts []int
		opts  shuffle.ReadOptions
		gets  int64 // GETs expected
	}{
		// Adjacent partitions, as after coalescing: one GET per object.
		{"adjacent merged", []int{4, 5, 6, 7}, shuffle.ReadOptions{}, 4},
		{"one partition", []int{9}, shuffle.ReadOptions{}, 4},
		// Not adjacent: one GET per partition and object.
		{"gaps", []int{1, 3, 10}, shuffle.ReadOptions{}, 12},
		// Every partition: the runs cover the object between header and
		// footer, one GET per object.
		{"all", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, shuffle.ReadOptions{}, 4},
		// A tiny request cap: merging stops at it and a partition bigger
		// than it is fetched in pieces, in parallel.
		{"capped", []int{4, 5}, shuffle.ReadOptions{MaxRequestBytes: 1000}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, st, gets := readParts(t, ms, c.parts, c.opts)
			if want := wantRows(t, ms, c.parts, part); !reflect.DeepEqual(sortedCopy(got), sortedCopy(want)) {
				t.Fatalf("read %d rows, want %d", len(got), len(want))
			}
			if st.Requests.Load() != gets {
				t.Errorf("reader counted %d GETs, MinIO %d", st.Requests.Load(), gets)
			}
			var bytesWanted int64
			for _, m := range ms {
				for _, p := range c.parts {
					ps, _ := m.Partition(p)
					bytesWanted += ps.Bytes
				}
			}
			if st.Bytes.Load() != bytesWanted {
				t.Errorf("fetched %d bytes, the partitions have %d", st.Bytes.Load(), bytesWanted)
			}
			switch {
			case c.gets >= 0 && gets != c.gets:
				t.Errorf("%d GETs, want %d", gets, c.gets)
			case c.gets < 0 && gets < bytesWanted/1000:
				t.Errorf("%d GETs for %d bytes with a 1000-byte cap", gets, bytesWanted)
			}
		})
	}
}

// slowBucket delays the first ranged GET of every range it sees.
type slowBucket struct {
	objstore.Bucket
	delay time.Duration
	slow  atomic.Int64
	seen  map[int64]bool
	mu    chan struct{}
}

func (s *slowBucket) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.mu <- struct{}{}
	first := !s.seen[off]
	s.seen[off] = true
	<-s.mu
	if first {
		s.slow.Add(1)
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Bucket.GetRange(ctx, key, off, n)
}

func TestSlowRangedGetIsSentAgain(t *testing.T) {
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 4}
	job := newJob(t)
	m, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix("", job, 0, 0, 0), part, shuffle.WriterOptions{}, [][2]int{{0, 2000}})
	sb := &slowBucket{Bucket: bucket, delay: time.Minute, seen: map[int64]bool{}, mu: make(chan struct{}, 1)}
	st := &shuffle.ReadStats{}
	var rows int64
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := shuffle.ReadObjectsWith(ctx, sb, m.Refs(), shuffle.ReadOptions{Schema: testSchema, HedgeAfter: 20 * time.Millisecond, Stats: st},
		func(rec arrow.RecordBatch) error { rows += rec.NumRows(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if rows != m.Rows || sb.slow.Load() != 1 || st.Hedged.Load() != 1 || st.Requests.Load() != 2 {
		t.Fatalf("rows %d of %d; slow GETs %d, hedged %d, requests %d (want 1 merged GET sent again once)",
			rows, m.Rows, sb.slow.Load(), st.Hedged.Load(), st.Requests.Load())
	}
}

func TestWriterSpillsAndConcatenates(t *testing.T) {
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{4}, Count: 8}
	job := newJob(t)
	batches := [][2]int{}
	for i := 0; i < 20; i++ {
		batches = append(batches, [2]int{i * 1000, 1000})
	}
	ap := shuffle.AttemptPrefix("", job, 0, 0, 0)
	ctx := context.Background()
	dir := t.TempDir()
	w := shuffle.NewWriter(bucket, ap, testSchema, part, shuffle.WriterOptions{
		Compression: shuffle.CompressionNone, BatchRows: 300, MaxBufferedBytes: 64 << 10, SpillDir: dir})
	var written []string
	for _, bt := range batches {
		rec := genRecord(memory.DefaultAllocator, bt[0], bt[1])
		written = append(written, rowStrings(rec)...)
		if err := w.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	spilled := w.Spilled()
	m, err := w.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if spilled < m.Bytes/2 {
		t.Fatalf("spilled %d of %d bytes with a 64 KiB budget", spilled, m.Bytes)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("spill files left behind: %v", left)
	}
	got, _ := readRefs(t, bucket, m.Refs())
	if !reflect.DeepEqual(sortedCopy(got), sortedCopy(written)) {
		t.Fatalf("read %d rows after spilling, wrote %d", len(got), len(written))
	}
	// Still one valid Arrow IPC file.
	data, err := bucket.Get(ctx, m.Object)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for i := 0; i < fr.NumRecords(); i++ {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
	}
	fr.Close()
	if n != int64(len(written)) {
		t.Fatalf("FileReader read %d rows, want %d", n, len(written))
	}
}

// An attempt whose manifest never landed is invisible: statistics skip it,
// ListJob flags it, and of two finished attempts the committed one (the
// first to commit, named by the coordinator) is the one counted.
func TestUncommittedAndDuplicateAttempts(t *testing.T) {
	ctx := context.Background()
	job := newJob(t)
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 4}
	// Task 0: attempt 0 died before its manifest (data object only).
	fb := &recordingBucket{Bucket: bucket, failOn: shuffle.ManifestName}
	w := shuffle.NewWriter(fb, shuffle.SpreadAttemptPrefix("u", 2, job, 3, 0, 0), testSchema, part, shuffle.WriterOptions{})
	rec := genRecord(memory.DefaultAllocator, 0, 500)
	if err := w.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if _, err := w.Close(ctx); err == nil {
		t.Fatal("Close with a failing manifest upload succeeded")
	}
	// Attempts 1 and 2 both finished (a hedged duplicate), different rows.
	m1, _ := writeAttempt(t, bucket, shuffle.SpreadAttemptPrefix("u", 2, job, 3, 0, 1), part, shuffle.WriterOptions{}, [][2]int{{0, 300}})
	m2, _ := writeAttempt(t, bucket, shuffle.SpreadAttemptPrefix("u", 2, job, 3, 0, 2), part, shuffle.WriterOptions{}, [][2]int{{0, 700}})

	st, err := shuffle.StatsFromListing(ctx, bucket, "u", job, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Attempts[0] != 1 || st.Rows != m1.Rows {
		t.Fatalf("without commit info: attempt %d, %d rows; want the lowest finished attempt 1 with %d", st.Attempts[0], st.Rows, m1.Rows)
	}
	st, err = shuffle.StatsFromListing(ctx, bucket, "u", job, 3, map[int]int{0: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != m2.Rows {
		t.Fatalf("committed attempt 2: %d rows, want %d", st.Rows, m2.Rows)
	}
	for _, ps := range st.Sorted() {
		for _, r := range ps.Objects {
			if r.Key != m2.Object {
				t.Errorf("partition %d refers to %s, not the committed attempt's object", ps.Partition, r.Key)
			}
		}
	}
	if _, err := shuffle.StatsFromListing(ctx, bucket, "u", job, 3, map[int]int{0: 0}); !errors.Is(err, shuffle.ErrMissing) {
		t.Fatalf("an uncommitted attempt named as committed: %v", err)
	}
	entries, err := shuffle.ListJob(ctx, bucket, "u", job)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range entries {
		notes = append(notes, fmt.Sprintf("a%d data=%v manifest=%v parts=%d %s", e.Attempt, e.Data, e.Manifest, e.Partitions, e.Note))
	}
	want := []string{
		"a0 data=true manifest=false parts=0 no manifest",
		"a1 data=true manifest=false parts=4 ",
		"a1 data=false manifest=true parts=0 ",
		"a2 data=true manifest=false parts=4 ",
		"a2 data=false manifest=true parts=0 ",
	}
	if !reflect.DeepEqual(notes, want) {
		t.Fatalf("ListJob:\n%q\nwant\n%q", notes, want)
	}
}

func TestSpreadKeys(t *testing.T) {
	seen := map[string]bool{}
	for task := 0; task < 64; task++ {
		ap := shuffle.SpreadAttemptPrefix("w", 2, "j", 3, task, 1)
		for _, key := range []string{shuffle.DataKey(ap), shuffle.ManifestKey(ap), shuffle.DataKey(ap) + "#5"} {
			if err := objstore.ValidateKey(key); err != nil {
				t.Fatal(err)
			}
			k, err := shuffle.ParseKey(key)
			if err != nil {
				t.Fatal(err)
			}
			if k.Prefix != "w" || k.Job != "j" || k.Stage != 3 || k.Task != task || k.Attempt != 1 || k.AttemptPrefix() != ap || len(k.Spread) != 2 {
				t.Fatalf("ParseKey(%q) = %+v", key, k)
			}
		}
		if k, _ := shuffle.ParseKey(shuffle.DataKey(ap) + "#5"); k.Part != 5 || !k.Data {
			t.Fatalf("partition ID parsed as %+v", k)
		}
		seen[shuffle.Spread("j", 3, task, 2)] = true
		if got := shuffle.SpreadAttemptPrefix("w", 0, "j", 3, task, 1); got != shuffle.AttemptPrefix("w", "j", 3, task, 1) {
			t.Fatalf("spread 0 = %q", got)
		}
	}
	if len(seen) < 32 {
		t.Errorf("64 tasks fell into %d spread prefixes", len(seen))
	}
	for _, bad := range []string{"jobs/j/stage-0/task-0/a0/data.arrow#x", "jobs/j/stage-0/task-0/a0/_manifest.json#1", "jobs/j/stage-0/xyz/task-0/a0/data.arrow"} {
		if _, err := shuffle.ParseKey(bad); !errors.Is(err, shuffle.ErrInvalidKey) {
			t.Errorf("ParseKey(%q) = %v", bad, err)
		}
	}
}

// TestArrowJSReadsDataObject reads a zstd data object with the apache-arrow
// JavaScript library (npm, with the fzstd codec registered), installed into
// .tmp/arrowjs at the repository root. (The codec copies what fzstd returns:
// arrow JS needs 8-byte aligned buffers and fzstd may return a view at an odd
// offset.)
func TestArrowJSReadsDataObject(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the apache-arrow JS cross-read needs node and npm")
	}
	root, _ := filepath.Abs("..")
	dir := filepath.Join(root, ".tmp", "arrowjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "apache-arrow", "package.json")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "apache-arrow@21", "fzstd@0.1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install apache-arrow fzstd: %v\n%s", err, out)
		}
	}
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1}, Count: 5}
	job := newJob(t)
	m, _ := writeAttempt(t, bucket, shuffle.AttemptPrefix("", job, 0, 0, 0), part, shuffle.WriterOptions{BatchRows: 400, Compression: shuffle.CompressionZstd}, [][2]int{{0, 5000}})
	data, err := bucket.Get(context.Background(), m.Object)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "data.arrow")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
const fs = require('fs');
const arrow = require('apache-arrow');
const fzstd = require('fzstd');
arrow.compressionRegistry.set(arrow.CompressionType.ZSTD, { decode: (b) => new Uint8Array(fzstd.decompress(b)) });
const reader = arrow.RecordBatchReader.from(fs.readFileSync(process.argv[1]));
const out = { batches: [], sum: 0, nulls: 0, strings: 0 };
for (const batch of reader) {
  out.batches.push(batch.numRows);
  const col = batch.getChild('i');
  for (let r = 0; r < batch.numRows; r++) {
    const v = col.get(r);
    if (v === null) { out.nulls++; } else { out.sum += Number(v); }
  }
  const s = batch.getChild('s');
  for (let r = 0; r < batch.numRows; r++) { const v = s.get(r); if (v !== null) out.strings += v.length; }
}
console.log(JSON.stringify(out));
`
	cmd := exec.Command(node, "-e", script, file)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("apache-arrow JS could not read the data object: %v\n%s", err, out)
	}
	var js struct {
		Batches []int64
		Sum     int64
		Nulls   int64
		Strings int64
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &js); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// The oracle: the same file through arrow-go.
	fr, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	var batches []int64
	var sum, nulls, strs int64
	for i := 0; i < fr.NumRecords(); i++ {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, rec.NumRows())
		col := rec.Column(1).(*array.Int64)
		for r := 0; r < col.Len(); r++ {
			if col.IsNull(r) {
				nulls++
			} else {
				sum += col.Value(r)
			}
		}
		s := rec.Column(4).(*array.String)
		for r := 0; r < s.Len(); r++ {
			if s.IsValid(r) {
				strs += int64(len(s.Value(r)))
			}
		}
	}
	if !reflect.DeepEqual(js.Batches, batches) || js.Sum != sum || js.Nulls != nulls || js.Strings != strs {
		t.Fatalf("apache-arrow JS read batches %v sum %d nulls %d strings %d; arrow-go %v %d %d %d",
			js.Batches, js.Sum, js.Nulls, js.Strings, batches, sum, nulls, strs)
	}
	// The batches are the partitions' runs, in partition order.
	var perPart []int64
	for _, ps := range m.Partitions {
		perPart = append(perPart, ps.Rows)
	}
	var total int64
	for _, b := range batches {
		total += b
	}
	if total != m.Rows || len(perPart) != 5 || !sort.SliceIsSorted(m.Partitions, func(i, j int) bool { return m.Partitions[i].Partition < m.Partitions[j].Partition }) {
		t.Fatalf("rows %d of %d, partitions %v", total, m.Rows, perPart)
	}
}

// TestParallelEncodeSameObject: partitions encoded by several workers at
// once (WriterOptions.EncodeWorkers) give the very bytes one worker gives,
// with every codec, with and without spilling, and read back as written.
func TestParallelEncodeSameObject(t *testing.T) {
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{4}, Count: 8}
	cases := []struct {
		name     string
		comp     shuffle.Compression
		maxBytes int64
	}{
		{"none", shuffle.CompressionNone, 0},
		{"lz4", shuffle.CompressionLZ4, 0},
		{"zstd", shuffle.CompressionZstd, 0},
		{"lz4, spilling", shuffle.CompressionLZ4, 32 << 10},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := newJob(t)
			var objs [][]byte
			var written []string
			for i, workers := range []int{1, 3, 8} {
				ap := shuffle.AttemptPrefix("", job, 0, 0, i)
				w := shuffle.NewWriter(bucket, ap, testSchema, part, shuffle.WriterOptions{Compression: tc.comp, BatchRows: 700,
					MaxBufferedRows: 2500, MaxBufferedBytes: tc.maxBytes, SpillDir: t.TempDir(), EncodeWorkers: workers})
				var rows []string
				for b := 0; b < 12; b++ {
					rec := genRecord(memory.DefaultAllocator, b*900, 900)
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
				data, err := bucket.Get(ctx, m.Object)
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, data)
				got, _ := readRefs(t, bucket, m.Refs())
				if !reflect.DeepEqual(sortedCopy(got), sortedCopy(rows)) {
					t.Fatalf("%d workers: read %d rows, wrote %d", workers, len(got), len(rows))
				}
				written = rows
			}
			for i := 1; i < len(objs); i++ {
				if !bytes.Equal(objs[i], objs[0]) {
					t.Errorf("object %d (%d bytes) differs from the one-worker object (%d bytes)", i, len(objs[i]), len(objs[0]))
				}
			}
			if len(written) == 0 {
				t.Fatal("nothing written")
			}
		})
	}
}

// TestWriterStreamsLargeObject: on a bucket that streams uploads (S3, 5 MiB
// parts), the data object leaves in parts while later partitions are still
// encoded (a multipart upload), and it is byte for byte the object a
// bucket that stores it at Close gets, with or without spilled runs; every
// row reads back.
func TestWriterStreamsLargeObject(t *testing.T) {
	ctx := context.Background()
	streaming, err := objstore.NewS3(ctx, objstore.S3Config{Endpoint: server.Endpoint, AccessKey: server.AccessKey,
		SecretKey: server.SecretKey, Bucket: "shuffle-test", StreamPartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer objstore.Close(streaming)
	held := struct{ objstore.Bucket }{streaming} // hides NewUpload: one PUT at Close
	recs, _ := lineitemBatches(t, 16)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var written []string
	for _, r := range recs {
		written = append(written, rowStrings(r)...)
	}
	schema := recs[0].Schema()
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 8}
	for _, c := range []struct {
		name     string
		maxBytes int64
	}{{"in memory", 0}, {"spilling", 4 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			job := newJob(t)
			var objs [][]byte
			for i, b := range []objstore.Bucket{held, streaming} {
				ap := shuffle.AttemptPrefix("", job, 0, 0, i)
				before := streaming.Stats()
				w := shuffle.NewWriter(b, ap, schema, part, shuffle.WriterOptions{
					Compression: shuffle.CompressionNone, MaxBufferedBytes: c.maxBytes, SpillDir: t.TempDir()})
				for _, r := range recs {
					if err := w.Write(ctx, r); err != nil {
						t.Fatal(err)
					}
				}
				m, err := w.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if m.ObjectBytes < 12<<20 {
					t.Fatalf("object of %d bytes: too small to stream", m.ObjectBytes)
				}
				if i == 1 && streaming.Stats().Sub(before).Put < 4 {
					t.Errorf("streamed object of %d bytes sent in %d PUTs, want at least 3 parts and the manifest",
						m.ObjectBytes, streaming.Stats().Sub(before).Put)
				}
				data, err := streaming.Get(ctx, m.Object)
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, data)
				var got []string
				if err := shuffle.ReadObjectsWith(ctx, streaming, m.Refs(), shuffle.ReadOptions{Schema: schema}, func(rec arrow.RecordBatch) error {
					got = append(got, rowStrings(rec)...)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(sortedCopy(got), sortedCopy(written)) {
					t.Fatalf("bucket %d: read %d rows, wrote %d", i, len(got), len(written))
				}
			}
			if !bytes.Equal(objs[0], objs[1]) {
				t.Errorf("streamed object (%d bytes) differs from the one stored at Close (%d bytes)", len(objs[0]), len(objs[1]))
			}
		})
	}
}
