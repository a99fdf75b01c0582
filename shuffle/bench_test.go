package shuffle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
	}
	return n
}

// BenchmarkWriteRead measures a shuffle round trip (hash-partitioned write
// of one task's output + Close, then a read of every object) against the
// real MinIO server, and, in the same run, raw Put and Get of the very
// bytes the shuffle stored (same concurrency: 4 uploads, 2 downloads in
// flight). Metrics:
//
//	logical-MB/s  in-memory Arrow bytes shuffled per second (write+read)
//	shuffle-MB/s  stored bytes per second through the shuffle (write+read)
//	raw-MB/s      the same stored bytes per second through raw Put+Get
//	ratio         shuffle-MB/s / raw-MB/s (1 = the shuffle costs no more than moving its bytes)
//	compress      logical bytes / stored bytes
func BenchmarkWriteRead(b *testing.B) {
	const rows = 400_000
	cases := []struct {
		name  string
		parts int
		comp  shuffle.Compression
	}{
		{"hash16-zstd", 16, shuffle.CompressionZstd},
		{"hash16-zstd3", 16, "zstd3"},
		{"hash16-lz4", 16, shuffle.CompressionLZ4},
		{"hash16-none", 16, shuffle.CompressionNone},
		{"single-zstd", 1, shuffle.CompressionZstd},
	}
	var recs []arrow.RecordBatch
	var logical int64
	for start := 0; start < rows; start += 64 << 10 {
		n := min(64<<10, rows-start)
		rec := genRecord(memory.DefaultAllocator, start, n)
		recs = append(recs, rec)
		logical += recordBytes(rec)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	ctx := context.Background()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1, 4}, Count: c.parts}
			if c.parts == 1 {
				part = plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}
			}
			job := newJob(b)
			var shuffleDur, rawDur time.Duration
			var stored int64
			for i := 0; i < b.N; i++ {
				ap := shuffle.AttemptPrefix("bench", job, 0, i, 0)
				start := time.Now()
				opts := shuffle.WriterOptions{Compression: c.comp}
				if c.comp == "zstd3" {
					opts = shuffle.WriterOptions{Compression: shuffle.CompressionZstd, ZstdLevel: 3}
				}
				w := shuffle.NewWriter(bucket, ap, testSchema, part, opts)
				for _, rec := range recs {
					if err := w.Write(ctx, rec); err != nil {
						b.Fatal(err)
					}
				}
				m, err := w.Close(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				err = shuffle.ReadObjects(ctx, bucket, m.Refs(), func(rec arrow.RecordBatch) error {
					n += rec.NumRows()
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				shuffleDur += time.Since(start)
				if n != rows {
					b.Fatalf("read %d rows, want %d", n, rows)
				}
				stored += m.ObjectBytes

				// Raw: the same objects' bytes, Put and Get back.
				b.StopTimer()
				// One data object holds every partition: move it and the
				// manifest once each (not once per partition).
				keys := []string{m.Object, shuffle.ManifestKey(ap)}
				objs := make([][]byte, len(keys))
				for j, k := range keys {
					if objs[j], err = bucket.Get(ctx, k); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				start = time.Now()
				rawPrefix := fmt.Sprintf("bench-raw/%s/%d/", job, i)
				if err := parallelDo(len(objs), 4, func(j int) error {
					return bucket.Put(ctx, fmt.Sprintf("%sobj-%d", rawPrefix, j), objs[j])
				}); err != nil {
					b.Fatal(err)
				}
				if err := parallelDo(len(objs), 2, func(j int) error {
					_, err := bucket.Get(ctx, fmt.Sprintf("%sobj-%d", rawPrefix, j))
					return err
				}); err != nil {
					b.Fatal(err)
				}
				rawDur += time.Since(start)
				b.StopTimer()
				bucket.DeletePrefix(ctx, ap)
				bucket.DeletePrefix(ctx, rawPrefix)
				b.StartTimer()
			}
			mb := func(bytes int64, d time.Duration) float64 { return float64(bytes) / 1e6 / d.Seconds() }
			shuffleMBs := mb(stored, shuffleDur)
			rawMBs := mb(stored, rawDur)
			b.ReportMetric(mb(logical*int64(b.N), shuffleDur), "logical-MB/s")
			b.ReportMetric(shuffleMBs, "shuffle-MB/s")
			b.ReportMetric(rawMBs, "raw-MB/s")
			b.ReportMetric(shuffleMBs/rawMBs, "ratio")
			b.ReportMetric(float64(logical*int64(b.N))/float64(stored), "compress")
		})
	}
}

// parallelDo runs f(0..n-1) on conc goroutines and returns the first error.
func parallelDo(n, conc int, f func(int) error) error {
	errs := make(chan error, n)
	sem := make(chan struct{}, conc)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			errs <- f(i)
		}(i)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkCPU isolates the shuffle's own CPU cost (hash, partition,
// encode, compress, checksum, decode) with an in-memory bucket.
func BenchmarkCPU(b *testing.B) {
	const rows = 400_000
	var recs []arrow.RecordBatch
	var logical int64
	for start := 0; start < rows; start += 64 << 10 {
		rec := genRecord(memory.DefaultAllocator, start, min(64<<10, rows-start))
		recs = append(recs, rec)
		logical += recordBytes(rec)
	}
	ctx := context.Background()
	mem := objstore.NewMem("bench")
	for _, c := range []struct {
		name string
		comp shuffle.Compression
	}{{"zstd", shuffle.CompressionZstd}, {"lz4", shuffle.CompressionLZ4}, {"none", shuffle.CompressionNone}} {
		part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{1, 4}, Count: 16}
		b.Run("write/"+c.name, func(b *testing.B) {
			b.SetBytes(logical)
			for i := 0; i < b.N; i++ {
				w := shuffle.NewWriter(mem, shuffle.AttemptPrefix("", "cpu", 0, i, 0), testSchema, part, shuffle.WriterOptions{Compression: c.comp})
				for _, rec := range recs {
					if err := w.Write(ctx, rec); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Close(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		w := shuffle.NewWriter(mem, shuffle.AttemptPrefix("", "cpu-read", 0, 0, 0), testSchema, part, shuffle.WriterOptions{Compression: c.comp})
		for _, rec := range recs {
			w.Write(ctx, rec)
		}
		m, err := w.Close(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("read/"+c.name, func(b *testing.B) {
			b.SetBytes(logical)
			for i := 0; i < b.N; i++ {
				if err := shuffle.ReadObjects(ctx, mem, m.Refs(), func(arrow.RecordBatch) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
