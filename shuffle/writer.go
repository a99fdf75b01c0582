package shuffle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Compression names an IPC body compression codec.
type Compression string

const (
	CompressionZstd Compression = "zstd"
	CompressionLZ4  Compression = "lz4"
	CompressionNone Compression = "none"
)

// WriterOptions tune a Writer. Zero values get defaults.
type WriterOptions struct {
	// Compression of the IPC bodies; default zstd.
	Compression Compression
	// ZstdLevel is the zstd compression level (1 to 22, as zstd's; 0:
	// DefaultZstdLevel).
	ZstdLevel int
	// BatchRows is the number of rows buffered per partition before they
	// are encoded as one IPC record batch; default 65536.
	BatchRows int
	// MaxBufferedRows bounds the rows held in all partitions' builders
	// together; past it every partition is encoded. Default 1<<20.
	MaxBufferedRows int
	// UploadConcurrency is the number of part objects uploaded at once by
	// Close; default 4.
	UploadConcurrency int
	// Allocator for builders and IPC encoding; default memory.DefaultAllocator.
	Allocator memory.Allocator
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.Compression == "" {
		o.Compression = CompressionZstd
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 64 << 10
	}
	if o.MaxBufferedRows <= 0 {
		o.MaxBufferedRows = 1 << 20
	}
	if o.UploadConcurrency <= 0 {
		o.UploadConcurrency = 4
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	return o
}

// Writer writes one task attempt's output: it partitions rows, encodes each
// non-empty partition as an Arrow IPC file in memory and, at Close, uploads
// the part objects and then the manifest.
//
// Rows are partitioned by HashColumns over the key columns modulo Count
// for plan.PartitionHash; for plan.PartitionSingle and
// plan.PartitionBroadcast every row goes to partition 0. A Writer is not
// safe for concurrent use.
//
// Memory: each partition buffers up to BatchRows rows in Arrow builders
// (MaxBufferedRows over all partitions), then encodes them as one
// compressed record batch appended to the partition's in-memory IPC file;
// the encoded files (the attempt's whole compressed output) are held until
// Close uploads them. All partitions share one compressor.
type Writer struct {
	b      objstore.Bucket
	prefix string
	info   KeyInfo
	schema *arrow.Schema
	part   plan.Partitioning
	nparts int
	opts   WriterOptions
	apps   []appender

	parts    []*partBuf
	enc      *batchEncoder // encodes every partition's batches
	buffered int           // rows in builders
	hashes   []uint64
	idx      [][]int32
	keyCols  []arrow.Array
	all      []int32 // 0..n-1, for single-partition writes

	err    error // sticky
	closed bool
}

type partBuf struct {
	bld     *array.RecordBuilder
	n       int // rows in bld
	flushes int // batches encoded from bld
	file    partFile
}

// NewWriter returns a writer of the attempt whose prefix (see
// AttemptPrefix) is attemptPrefix. Errors in the arguments surface from
// the first Write or Close.
func NewWriter(b objstore.Bucket, attemptPrefix string, schema *arrow.Schema, p plan.Partitioning, opts WriterOptions) *Writer {
	w := &Writer{b: b, prefix: attemptPrefix, schema: schema, part: p, opts: opts.withDefaults()}
	w.err = w.init()
	return w
}

func (w *Writer) init() error {
	info, err := ParseAttemptPrefix(w.prefix)
	if err != nil {
		return fmt.Errorf("shuffle: writer: %w", err)
	}
	w.info = info
	if w.schema == nil {
		return errors.New("shuffle: writer: nil schema")
	}
	switch w.part.Kind {
	case plan.PartitionHash:
		if w.part.Count <= 0 {
			return fmt.Errorf("shuffle: writer: hash partitioning with count %d", w.part.Count)
		}
		for _, k := range w.part.Keys {
			if k < 0 || k >= w.schema.NumFields() {
				return fmt.Errorf("shuffle: writer: partition key column %d out of range (schema has %d columns)", k, w.schema.NumFields())
			}
			if t := w.schema.Field(k).Type; !HashSupported(t) {
				return fmt.Errorf("shuffle: writer: cannot hash key column %d of type %s", k, t)
			}
		}
		w.nparts = w.part.Count
	case plan.PartitionSingle, plan.PartitionBroadcast:
		w.nparts = 1
	default:
		return fmt.Errorf("shuffle: writer: unsupported partitioning kind %q", w.part.Kind)
	}
	for _, f := range w.schema.Fields() {
		a, err := appenderFor(f.Type)
		if err != nil {
			return fmt.Errorf("shuffle: writer: column %q: %w", f.Name, err)
		}
		w.apps = append(w.apps, a)
	}
	enc, err := newBatchEncoder(w.schema, w.opts.Compression, w.opts.ZstdLevel, w.opts.Allocator)
	if err != nil {
		return fmt.Errorf("shuffle: writer: %w", err)
	}
	w.enc = enc
	w.parts = make([]*partBuf, w.nparts)
	w.idx = make([][]int32, w.nparts)
	return nil
}

// NumPartitions returns the number of output partitions.
func (w *Writer) NumPartitions() int { return w.nparts }

// Write partitions the rows of rec. rec must have the writer's schema; the
// writer does not keep a reference to it.
func (w *Writer) Write(ctx context.Context, rec arrow.RecordBatch) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("shuffle: writer: Write after Close or Abort")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !rec.Schema().Equal(w.schema) {
		w.err = fmt.Errorf("shuffle: writer: record schema %s differs from the writer's %s", rec.Schema(), w.schema)
		return w.err
	}
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	if w.nparts == 1 {
		if n >= w.opts.BatchRows {
			// A big batch goes straight to the encoder, after what is
			// buffered.
			if err := w.flush(0); err != nil {
				return w.setErr(err)
			}
			return w.setErr(w.encode(0, rec))
		}
		for len(w.all) < n {
			w.all = append(w.all, int32(len(w.all)))
		}
		return w.setErr(w.appendRows(0, rec, w.all[:n]))
	}

	if cap(w.hashes) < n {
		w.hashes = make([]uint64, n)
	}
	h := w.hashes[:n]
	w.keyCols = w.keyCols[:0]
	for _, k := range w.part.Keys {
		w.keyCols = append(w.keyCols, rec.Column(k))
	}
	if err := HashColumns(w.keyCols, h); err != nil {
		return w.setErr(err)
	}
	for p := range w.idx {
		w.idx[p] = w.idx[p][:0]
	}
	np := uint64(w.nparts)
	for i, x := range h {
		p := x % np
		w.idx[p] = append(w.idx[p], int32(i))
	}
	for p, idx := range w.idx {
		if len(idx) == 0 {
			continue
		}
		if err := w.appendRows(p, rec, idx); err != nil {
			return w.setErr(err)
		}
	}
	return nil
}

func (w *Writer) setErr(err error) error {
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

func (w *Writer) partBuf(p int) *partBuf {
	pb := w.parts[p]
	if pb == nil {
		pb = &partBuf{}
		w.parts[p] = pb
	}
	return pb
}

// appendRows copies rows idx of rec into partition p's builder, encoding
// it when it reaches BatchRows (and every partition when the writer holds
// MaxBufferedRows).
func (w *Writer) appendRows(p int, rec arrow.RecordBatch, idx []int32) error {
	pb := w.partBuf(p)
	if pb.bld == nil {
		pb.bld = array.NewRecordBuilder(w.opts.Allocator, w.schema)
	}
	if pb.n == 0 && pb.flushes > 0 {
		// A partition that filled a batch before will likely fill the
		// next: size the builders once instead of growing them.
		pb.bld.Reserve(w.opts.BatchRows)
	}
	for c, app := range w.apps {
		app(rec.Column(c), idx, pb.bld.Field(c))
	}
	pb.n += len(idx)
	w.buffered += len(idx)
	if pb.n >= w.opts.BatchRows {
		if err := w.flush(p); err != nil {
			return err
		}
	}
	if w.buffered >= w.opts.MaxBufferedRows {
		return w.flushAll()
	}
	return nil
}

func (w *Writer) flushAll() error {
	for p := range w.parts {
		if err := w.flush(p); err != nil {
			return err
		}
	}
	return nil
}

// flush encodes partition p's buffered rows as one record batch.
func (w *Writer) flush(p int) error {
	pb := w.parts[p]
	if pb == nil || pb.n == 0 {
		return nil
	}
	rec := pb.bld.NewRecordBatch()
	defer rec.Release()
	w.buffered -= pb.n
	pb.n = 0
	pb.flushes++
	return w.encode(p, rec)
}

func (w *Writer) encode(p int, rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	pb := w.partBuf(p)
	if err := w.enc.encode(rec, &pb.file); err != nil {
		return fmt.Errorf("shuffle: writer: encoding partition %d: %w", p, err)
	}
	return nil
}

// Close encodes what is buffered, uploads every non-empty partition's
// object and then the manifest, and returns the manifest. After an error
// the attempt has no manifest (so it is never read); objects already
// uploaded are left for garbage collection.
func (w *Writer) Close(ctx context.Context) (*Manifest, error) {
	if w.err != nil {
		w.Abort()
		return nil, w.err
	}
	if w.closed {
		return nil, errors.New("shuffle: writer: Close after Close or Abort")
	}
	defer w.Abort()
	m := &Manifest{
		Version:       ManifestVersion,
		Job:           w.info.Job,
		Stage:         w.info.Stage,
		Task:          w.info.Task,
		Attempt:       w.info.Attempt,
		Partitioning:  w.part,
		NumPartitions: w.nparts,
		Compression:   string(w.opts.Compression),
		Schema:        schemaFields(w.schema),
		Partitions:    []PartitionStat{},
	}
	// Partitions are finished one by one and uploaded as soon as they are,
	// so that uploads overlap the encoding of the remaining ones.
	uctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type upload struct {
		key  string
		data []byte
	}
	jobs := make(chan upload)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		upErr error
	)
	for g := 0; g < w.opts.UploadConcurrency; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range jobs {
				if uctx.Err() != nil {
					continue
				}
				if err := w.b.Put(uctx, u.key, u.data); err != nil {
					mu.Lock()
					if upErr == nil {
						upErr = fmt.Errorf("shuffle: writer: uploading %s: %w", u.key, err)
					}
					mu.Unlock()
					cancel()
				}
			}
		}()
	}
	var encErr error
	for p, pb := range w.parts {
		if pb == nil {
			continue
		}
		if encErr = w.flush(p); encErr != nil {
			break
		}
		if pb.file.rows == 0 {
			continue
		}
		data, err := pb.file.finish(w.schema, w.opts.Allocator)
		if err != nil {
			encErr = fmt.Errorf("shuffle: writer: finishing partition %d: %w", p, err)
			break
		}
		key := PartKey(w.prefix, p)
		m.Partitions = append(m.Partitions, PartitionStat{
			Partition: p, Rows: pb.file.rows, Bytes: int64(len(data)), Key: key, Checksum: Checksum(data),
		})
		m.Rows += pb.file.rows
		m.Bytes += int64(len(data))
		select {
		case jobs <- upload{key, data}:
		case <-uctx.Done():
		}
		if uctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
	switch {
	case encErr != nil:
		return nil, encErr
	case upErr != nil:
		return nil, upErr
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("shuffle: writer: %w", err)
	}
	if err := w.b.Put(ctx, ManifestKey(w.prefix), js); err != nil {
		return nil, fmt.Errorf("shuffle: writer: uploading manifest: %w", err)
	}
	return m, nil
}

// Abort releases the writer's memory without writing a manifest. It is
// safe to call after Close (a no-op then) and more than once.
func (w *Writer) Abort() {
	w.closed = true
	for p, pb := range w.parts {
		if pb == nil {
			continue
		}
		if pb.bld != nil {
			pb.bld.Release()
		}
		w.parts[p] = nil
	}
	w.enc = nil
	w.buffered = 0
}

// forEach runs f(0..n-1) on up to conc goroutines and returns the first
// error; after an error the remaining calls are skipped and ctx is
// canceled.
func forEach(ctx context.Context, n, conc int, f func(context.Context, int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for g := 0; g < min(conc, n); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}
