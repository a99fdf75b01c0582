package shuffle_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/local/tpch"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

var shuffleMiB = flag.Int("shuffle-mib", 32, "BenchmarkShuffleThroughput: in-memory MiB of TPC-H lineitem batches shuffled per iteration")

// lineitemBatches returns TPC-H lineitem rows in the engine layout (int32
// widened to int64, decimal(15,2) as decimal64), 64 Ki rows a batch, until
// their in-memory size passes mib MiB: realistic shuffle input (keys,
// prices, dates, low-cardinality flags and free text).
func lineitemBatches(tb testing.TB, mib int) ([]arrow.RecordBatch, int64) {
	tb.Helper()
	mem := memory.DefaultAllocator
	var out []arrow.RecordBatch
	var logical int64
	const sf = 1.0
	stop := fmt.Errorf("enough")
	err := tpch.Generate(context.Background(), tpch.Lineitem, sf, 0, 1, 64<<10, func(rec arrow.RecordBatch) error {
		eng := toEngine(mem, rec)
		out = append(out, eng)
		logical += recordBytes(eng)
		if logical >= int64(mib)<<20 {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		tb.Fatal(err)
	}
	return out, logical
}

func toEngine(mem memory.Allocator, rec arrow.RecordBatch) arrow.RecordBatch {
	fields := make([]arrow.Field, rec.NumCols())
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		fields[i] = rec.Schema().Field(i)
		switch a := c.(type) {
		case *array.Int32:
			b := array.NewInt64Builder(mem)
			for j := 0; j < a.Len(); j++ {
				b.Append(int64(a.Value(j)))
			}
			cols[i], fields[i].Type = b.NewArray(), arrow.PrimitiveTypes.Int64
			b.Release()
		case *array.Decimal128:
			dt := a.DataType().(*arrow.Decimal128Type)
			t := &arrow.Decimal64Type{Precision: dt.Precision, Scale: dt.Scale}
			b := array.NewDecimal64Builder(mem, t)
			for j := 0; j < a.Len(); j++ {
				v := a.Value(j)
				b.Append(decimalLow(v))
			}
			cols[i], fields[i].Type = b.NewArray(), t
			b.Release()
		default:
			c.Retain()
			cols[i] = c
		}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

func decimalLow(v decimal128.Num) decimal.Decimal64 { return decimal.Decimal64(int64(v.LowBits())) }

// BenchmarkShuffleThroughput (make bench-shuffle) moves -shuffle-mib MiB of
// TPC-H lineitem batches through the shuffle (a hash-16 write of one
// task's output and Close, then a read of every partition) on the real
// MinIO server, and in the same iteration the very bytes it stored
// (data object and manifest) by raw PUT and GET on the same client. The
// cases interleave per iteration, so codecs and payload signing are
// compared under the same load. Metrics per case:
//
//	shuffle-MB/s  stored bytes per second through the shuffle (write+read)
//	raw-MB/s      the same stored bytes per second through raw PUT+GET
//	ratio         shuffle-MB/s / raw-MB/s (goal >= 0.8)
//	logical-MB/s  in-memory Arrow bytes shuffled per second
//	compress      logical bytes / stored bytes
func BenchmarkShuffleThroughput(b *testing.B) {
	recs, logical := lineitemBatches(b, *shuffleMiB)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	schema := recs[0].Schema()
	ctx := context.Background()
	type acc struct {
		shuffle, raw time.Duration
		stored       int64
	}
	cases := []struct {
		name string
		comp shuffle.Compression
		sign bool
		b    objstore.Bucket
		acc  acc
	}{
		{name: "lz4-unsigned", comp: shuffle.CompressionLZ4},
		{name: "zstd-unsigned", comp: shuffle.CompressionZstd},
		{name: "lz4-signed", comp: shuffle.CompressionLZ4, sign: true},
		{name: "zstd-signed", comp: shuffle.CompressionZstd, sign: true},
	}
	for i := range cases {
		bk, err := objstore.Open(ctx, objstore.Config{S3: objstore.S3Config{Endpoint: server.Endpoint, AccessKey: server.AccessKey,
			SecretKey: server.SecretKey, Bucket: "shuffle-test", SignPayload: cases[i].sign}})
		if err != nil {
			b.Fatal(err)
		}
		cases[i].b = bk
	}
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 16}
	job := newJob(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for ci := range cases {
			c := &cases[ci]
			ap := shuffle.AttemptPrefix("bench", job, ci, i, 0)
			start := time.Now()
			w := shuffle.NewWriter(c.b, ap, schema, part, shuffle.WriterOptions{Compression: c.comp})
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
			if err := shuffle.ReadObjects(ctx, c.b, m.Refs(), func(rec arrow.RecordBatch) error {
				n += rec.NumRows()
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			c.acc.shuffle += time.Since(start)
			if n != m.Rows {
				b.Fatalf("%s: read %d rows, wrote %d", c.name, n, m.Rows)
			}
			// Raw: the objects the shuffle stored, PUT and GET back.
			b.StopTimer()
			keys := []string{m.Object, shuffle.ManifestKey(ap)}
			objs := make([][]byte, len(keys))
			var size int64
			for j, k := range keys {
				if objs[j], err = c.b.Get(ctx, k); err != nil {
					b.Fatal(err)
				}
				size += int64(len(objs[j]))
			}
			b.StartTimer()
			start = time.Now()
			rawPrefix := fmt.Sprintf("bench-raw/%s/%d/%d/", job, ci, i)
			for j := range objs {
				if err := c.b.Put(ctx, fmt.Sprintf("%sobj-%d", rawPrefix, j), objs[j]); err != nil {
					b.Fatal(err)
				}
			}
			for j := range objs {
				if _, err := c.b.Get(ctx, fmt.Sprintf("%sobj-%d", rawPrefix, j)); err != nil {
					b.Fatal(err)
				}
			}
			c.acc.raw += time.Since(start)
			c.acc.stored += size
			b.StopTimer()
			c.b.DeletePrefix(ctx, ap)
			c.b.DeletePrefix(ctx, rawPrefix)
			b.StartTimer()
		}
	}
	b.StopTimer()
	mb := func(bytes int64, d time.Duration) float64 { return float64(bytes) / 1e6 / d.Seconds() }
	for _, c := range cases {
		s, r := mb(c.acc.stored, c.acc.shuffle), mb(c.acc.stored, c.acc.raw)
		b.ReportMetric(s, c.name+"-shuffle-MB/s")
		b.ReportMetric(r, c.name+"-raw-MB/s")
		b.ReportMetric(s/r, c.name+"-ratio")
		b.ReportMetric(mb(logical*int64(b.N), c.acc.shuffle), c.name+"-logical-MB/s")
		b.ReportMetric(float64(logical*int64(b.N))/float64(c.acc.stored), c.name+"-compress")
		fmt.Printf("\nshuffle %-14s %7.1f MB/s stored (%6.1f MB/s logical), raw PUT+GET %7.1f MB/s, ratio %.2f, compress %.2fx\n",
			c.name, s, mb(logical*int64(b.N), c.acc.shuffle), r, s/r, float64(logical*int64(b.N))/float64(c.acc.stored))
		_ = objstore.Close(c.b)
	}
}

// BenchmarkCodecLineitem is the shuffle's own CPU per codec on TPC-H
// lineitem batches (-shuffle-mib MiB), on an in-memory bucket: write
// (partition, encode, compress, checksum) and read (checksum, decompress,
// decode), with the stored size. -benchtime and -count repeat it; run the
// codecs interleaved (-count 3) to compare them under the same load.
func BenchmarkCodecLineitem(b *testing.B) {
	recs, logical := lineitemBatches(b, *shuffleMiB)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	schema := recs[0].Schema()
	ctx := context.Background()
	mem := objstore.NewMem("bench")
	part := plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 16}
	for _, comp := range []shuffle.Compression{shuffle.CompressionLZ4, shuffle.CompressionZstd, shuffle.CompressionNone} {
		var stored int64
		b.Run("write/"+string(comp), func(b *testing.B) {
			b.SetBytes(logical)
			for i := 0; i < b.N; i++ {
				w := shuffle.NewWriter(mem, shuffle.AttemptPrefix("", "codec-w", 0, i, 0), schema, part, shuffle.WriterOptions{Compression: comp})
				for _, rec := range recs {
					if err := w.Write(ctx, rec); err != nil {
						b.Fatal(err)
					}
				}
				m, err := w.Close(ctx)
				if err != nil {
					b.Fatal(err)
				}
				stored = m.ObjectBytes
				mem.DeletePrefix(ctx, shuffle.AttemptPrefix("", "codec-w", 0, i, 0))
			}
			b.ReportMetric(float64(stored)/1e6, "stored-MB")
			b.ReportMetric(float64(logical)/float64(stored), "compress")
		})
		w := shuffle.NewWriter(mem, shuffle.AttemptPrefix("", "codec-r", 0, 0, 0), schema, part, shuffle.WriterOptions{Compression: comp})
		for _, rec := range recs {
			if err := w.Write(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
		m, err := w.Close(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("read/"+string(comp), func(b *testing.B) {
			b.SetBytes(logical)
			for i := 0; i < b.N; i++ {
				if err := shuffle.ReadObjects(ctx, mem, m.Refs(), func(arrow.RecordBatch) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
		mem.DeletePrefix(ctx, shuffle.AttemptPrefix("", "codec-r", 0, 0, 0))
	}
}
