package shuffle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
	"github.com/sluicedb/sluice/shuffle/objstore"
	"github.com/zeebo/xxh3"
)

// Compression names an IPC body compression codec.
type Compression string

const (
	CompressionZstd Compression = "zstd"
	CompressionLZ4  Compression = "lz4"
	CompressionNone Compression = "none"
)

// DefaultCompression is the codec of a writer that names none. Chosen by
// measurement (docs/architecture.md, Performance): on TPC-H lineitem
// batches lz4 encodes ~2x faster than zstd level 1 for 1.4x the bytes, and
// moves as many or more rows per second through MinIO.
const DefaultCompression = CompressionLZ4

// ParseCompression returns the codec named s ("" is DefaultCompression).
// Readers handle every codec whatever the default: each object's batches
// say how their buffers are compressed.
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(strings.ToLower(s)); c {
	case "":
		return DefaultCompression, nil
	case CompressionLZ4, CompressionZstd, CompressionNone:
		return c, nil
	}
	return "", fmt.Errorf("shuffle: unknown codec %q (want lz4, zstd or none)", s)
}

// WriterOptions tune a Writer. Zero values get defaults.
type WriterOptions struct {
	// Compression of the IPC bodies; default DefaultCompression.
	Compression Compression
	// ZstdLevel is the zstd compression level (1 to 22, as zstd's; 0:
	// DefaultZstdLevel).
	ZstdLevel int
	// BatchRows is the number of rows buffered per partition before they
	// are encoded as one IPC record batch; default 65536.
	BatchRows int
	// BatchBytes is the in-memory size of a partition's buffered rows
	// past which they are encoded as one record batch before BatchRows;
	// default 1 MiB. Batches of wide rows stay this small, so that a
	// partition's early rows are encoded (in the background, see
	// EncodeWorkers) while later ones are partitioned.
	BatchBytes int
	// MaxBufferedRows bounds the rows held in all partitions' builders
	// together; past it every partition is encoded. Default 1<<20.
	MaxBufferedRows int
	// MaxBufferedBytes bounds the encoded bytes held in memory over all
	// partitions; past it the biggest partitions' runs move to the spill
	// file until half of it is left. Default 64 MiB.
	MaxBufferedBytes int64
	// SpillDir is where the spill file is created; default os.TempDir()
	// (a function's /tmp on Lambda).
	SpillDir string
	// UploadConcurrency is the number of parts of a multipart upload sent
	// at once by the object store (S3); kept for compatibility, unused by
	// the in-memory store.
	UploadConcurrency int
	// Allocator for builders and IPC encoding; default memory.DefaultAllocator.
	Allocator memory.Allocator
	// EncodeWorkers is how many partitions are encoded (and compressed)
	// at once when every partition is flushed (MaxBufferedRows, Close);
	// default GOMAXPROCS. Above 1, a partition's batch that fills during
	// Write is also encoded on a goroutine of its own while Write goes on
	// partitioning. 1 encodes everything on the caller's goroutine.
	EncodeWorkers int
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.Compression == "" {
		o.Compression = DefaultCompression
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 64 << 10
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 1 << 20
	}
	if o.MaxBufferedRows <= 0 {
		o.MaxBufferedRows = 1 << 20
	}
	if o.UploadConcurrency <= 0 {
		o.UploadConcurrency = 4
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = 64 << 20
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.EncodeWorkers <= 0 {
		o.EncodeWorkers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Writer writes one task attempt's output: it partitions rows, encodes them
// as Arrow IPC record batches per partition and, at Close, uploads one data
// object (an Arrow IPC file holding every non-empty partition as a
// contiguous run of batches, in partition order) and then the manifest.
//
// Rows are partitioned by HashColumns over the key columns modulo Count
// for plan.PartitionHash; for plan.PartitionSingle and
// plan.PartitionBroadcast every row goes to partition 0. A Writer is not
// safe for concurrent use.
//
// Memory: each partition buffers up to BatchRows rows in column builders
// (MaxBufferedRows over all partitions), then encodes them as one
// compressed record batch appended to the partition's in-memory run. When
// the runs held pass MaxBufferedBytes, the biggest are appended to a local
// spill file (SpillDir) until half of that is left; Close then streams the
// object from the header, each partition's spilled segments and in-memory
// tail, and the footer, without copying it (a seekable reader, so that a
// failed upload is retried; S3 turns a big one into a multipart upload).
// All partitions share one compressor.
type Writer struct {
	b      objstore.Bucket
	prefix string
	info   KeyInfo
	schema *arrow.Schema
	part   plan.Partitioning
	nparts int
	opts   WriterOptions

	parts    []*partBuf
	enc      *batchEncoder   // encodes every partition's batches
	encs     []*batchEncoder // flushAll's workers' encoders (encs[0] is enc)
	buffered int             // rows in partitions' builders
	hashes   []uint64
	idx      [][]int32
	keyCols  []arrow.Array
	all      []int32 // 0..n-1, for single-partition writes

	// bg encodes batches that fill during Write (EncodeWorkers > 1): jobs
	// go to EncodeWorkers goroutines and their messages join the runs in
	// the order the jobs were submitted, on the caller's goroutine
	// (collect).
	bg       chan *encodeJob
	bgDone   chan struct{} // closed when the goroutine has stopped
	inflight []*encodeJob  // submitted, not collected yet, in order

	held      int64    // encoded bytes in partitions' in-memory runs
	spill     *os.File // nil until the first spill
	spillEnd  int64
	spilledTo int64 // bytes ever spilled

	err    error // sticky
	closed bool
}

// Spilled returns the bytes the writer moved to its spill file so far.
func (w *Writer) Spilled() int64 { return w.spilledTo }

type partBuf struct {
	cols     []*kernel.Builder // one per column (nil until the first row)
	n        int               // rows in cols
	lastRows int               // rows of the last batch finished (0: none yet)
	file     partFile
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
		if !kernel.TakeSupported(f.Type) {
			return fmt.Errorf("shuffle: writer: column %q: unsupported column type %s", f.Name, f.Type)
		}
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

// appendRows copies rows idx of rec into partition p's builders (the
// take kernel shared with the executor), encoding them when they reach
// BatchRows (and every partition when the writer holds MaxBufferedRows).
func (w *Writer) appendRows(p int, rec arrow.RecordBatch, idx []int32) error {
	pb := w.partBuf(p)
	if pb.cols == nil {
		pb.cols = make([]*kernel.Builder, w.schema.NumFields())
		for c, f := range w.schema.Fields() {
			b, err := kernel.NewBuilder(w.opts.Allocator, f.Type)
			if err != nil {
				return fmt.Errorf("shuffle: writer: column %q: %w", f.Name, err)
			}
			pb.cols[c] = b
		}
	}
	if pb.n == 0 && pb.lastRows > 0 {
		// A partition that filled a batch before will likely fill the
		// next as full: size the builders once instead of growing them.
		for _, b := range pb.cols {
			b.Reserve(pb.lastRows)
		}
	}
	for c, b := range pb.cols {
		if err := b.Append(rec.Column(c), idx); err != nil {
			return fmt.Errorf("shuffle: writer: column %q: %w", w.schema.Field(c).Name, err)
		}
	}
	pb.n += len(idx)
	w.buffered += len(idx)
	if pb.n >= w.opts.BatchRows || pb.bytes() >= w.opts.BatchBytes {
		if err := w.flushFull(p); err != nil {
			return err
		}
	}
	if w.buffered >= w.opts.MaxBufferedRows {
		return w.flushAll(nil)
	}
	return nil
}

// flushAll encodes every partition's buffered rows. Partitions are
// independent (their own builders and runs), so up to EncodeWorkers of
// them are encoded and compressed at once, each worker with its own
// encoder, in waves in partition order: the bytes held, and spilling, are
// settled after each wave, so the memory bound is passed by at most one
// wave's output. After each wave, done (when not nil) is called with the
// number of leading partitions whose runs are final.
func (w *Writer) flushAll(done func(upTo int) error) error {
	if err := w.collect(true); err != nil {
		return err
	}
	var ps []int
	for p, pb := range w.parts {
		if pb != nil && pb.n > 0 {
			ps = append(ps, p)
		}
	}
	workers := min(w.opts.EncodeWorkers, len(ps))
	if workers <= 1 {
		for _, p := range ps {
			if err := w.flush(p); err != nil {
				return err
			}
			if done != nil {
				if err := done(p + 1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for len(w.encs) < workers {
		if len(w.encs) == 0 {
			w.encs = append(w.encs, w.enc)
			continue
		}
		enc, err := newBatchEncoder(w.schema, w.opts.Compression, w.opts.ZstdLevel, w.opts.Allocator)
		if err != nil {
			return fmt.Errorf("shuffle: writer: %w", err)
		}
		w.encs = append(w.encs, enc)
	}
	recs := make([]arrow.RecordBatch, workers)
	errs := make([]error, workers)
	grew := make([]int, workers)
	for len(ps) > 0 {
		wave := ps[:min(workers, len(ps))]
		ps = ps[len(wave):]
		for i, p := range wave {
			recs[i] = w.finish(p)
		}
		var wg sync.WaitGroup
		for i, p := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pf := &w.parts[p].file
				before := pf.mem
				if err := w.encs[i].encode(recs[i], pf); err != nil {
					errs[i] = fmt.Errorf("shuffle: writer: encoding partition %d: %w", p, err)
				}
				grew[i] = int(pf.mem - before)
			}()
		}
		wg.Wait()
		for i := range wave {
			recs[i].Release()
			w.held += int64(grew[i])
		}
		if err := errors.Join(errs[:len(wave)]...); err != nil {
			return err
		}
		if w.held > w.opts.MaxBufferedBytes {
			if err := w.spillRuns(); err != nil {
				return err
			}
		}
		if done != nil {
			if err := done(wave[len(wave)-1] + 1); err != nil {
				return err
			}
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
	rec := w.finish(p)
	defer rec.Release()
	return w.encode(p, rec)
}

// finish returns partition p's buffered rows as a record batch and empties
// its builders.
func (w *Writer) finish(p int) arrow.RecordBatch {
	pb := w.parts[p]
	cols := make([]arrow.Array, len(pb.cols))
	for c, b := range pb.cols {
		cols[c] = b.Finish()
	}
	rec := array.NewRecordBatch(w.schema, cols, int64(pb.n))
	for _, c := range cols {
		c.Release()
	}
	w.buffered -= pb.n
	pb.lastRows = pb.n
	pb.n = 0
	return rec
}

func (w *Writer) encode(p int, rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if err := w.collect(true); err != nil { // the partition's earlier batches first
		return err
	}
	pb := w.partBuf(p)
	before := pb.file.mem
	if err := w.enc.encode(rec, &pb.file); err != nil {
		return fmt.Errorf("shuffle: writer: encoding partition %d: %w", p, err)
	}
	w.held += pb.file.mem - before
	if w.held > w.opts.MaxBufferedBytes {
		return w.spillRuns()
	}
	return nil
}

// bytes returns the in-memory size of the partition's buffered rows.
func (pb *partBuf) bytes() int {
	n := 0
	for _, b := range pb.cols {
		n += b.Bytes()
	}
	return n
}

// encodeJob is one batch encoded in the background.
type encodeJob struct {
	p    int
	rec  arrow.RecordBatch
	part partFile // the encoded message (one block)
	err  error
	done chan struct{}
}

// flushFull encodes partition p's buffered rows, which filled a batch:
// in the background when there are cores for it, else here.
func (w *Writer) flushFull(p int) error {
	if w.opts.EncodeWorkers <= 1 {
		return w.flush(p)
	}
	if err := w.collect(false); err != nil {
		return err
	}
	if w.bg == nil {
		// EncodeWorkers goroutines, each with its encoder; a job queued
		// per worker: the rows held beyond the builders are at most two
		// batches a worker.
		encs := make([]*batchEncoder, w.opts.EncodeWorkers)
		for i := range encs {
			enc, err := newBatchEncoder(w.schema, w.opts.Compression, w.opts.ZstdLevel, w.opts.Allocator)
			if err != nil {
				return fmt.Errorf("shuffle: writer: %w", err)
			}
			encs[i] = enc
		}
		w.bg, w.bgDone = make(chan *encodeJob, len(encs)), make(chan struct{})
		var wg sync.WaitGroup
		for _, enc := range encs {
			wg.Add(1)
			go func(jobs <-chan *encodeJob) {
				defer wg.Done()
				for j := range jobs {
					if err := enc.encode(j.rec, &j.part); err != nil {
						j.err = fmt.Errorf("shuffle: writer: encoding partition %d: %w", j.p, err)
					}
					j.rec.Release()
					close(j.done)
				}
			}(w.bg)
		}
		go func(done chan<- struct{}) {
			wg.Wait()
			close(done)
		}(w.bgDone)
	}
	j := &encodeJob{p: p, rec: w.finish(p), done: make(chan struct{})}
	w.inflight = append(w.inflight, j)
	w.bg <- j
	return nil
}

// collect moves the messages of the background jobs that are done (all of
// them, waiting, when wait is set) to their partitions' runs, in the order
// the jobs were submitted.
func (w *Writer) collect(wait bool) error {
	for len(w.inflight) > 0 {
		j := w.inflight[0]
		if wait {
			<-j.done
		} else {
			select {
			case <-j.done:
			default:
				return nil
			}
		}
		w.inflight[0] = nil
		w.inflight = w.inflight[1:]
		if j.err != nil {
			return j.err
		}
		// The job's run is one message, placed at the end of the partition's.
		b := j.part.blocks[0]
		w.partBuf(j.p).file.add(j.part.chunks[0], b.meta, b.body, j.part.rows)
		w.held += j.part.mem
		if w.held > w.opts.MaxBufferedBytes {
			if err := w.spillRuns(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stopBackground stops the background encoder (its queued jobs are
// encoded and dropped).
func (w *Writer) stopBackground() {
	if w.bg != nil {
		close(w.bg)
		<-w.bgDone
		w.bg, w.inflight = nil, nil
	}
}

// spillError is the error of spill file I/O: a full disk (ENOSPC, EDQUOT)
// is the task's memory limit (plan.CodeMemoryLimit: the output did not fit
// in memory nor on disk), not infrastructure trouble to retry.
func spillError(what string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return plan.Errorf(plan.CodeMemoryLimit, "shuffle: writer: %s: spill disk full: %w", what, err)
	}
	return fmt.Errorf("shuffle: writer: %s: %w", what, err)
}

// spillRuns appends the biggest in-memory runs to the spill file until at
// most half of MaxBufferedBytes is held.
func (w *Writer) spillRuns() error {
	if w.spill == nil {
		f, err := os.CreateTemp(w.opts.SpillDir, "sluice-shuffle-*.spill")
		if err != nil {
			return spillError("creating spill file", err)
		}
		w.spill = f
	}
	order := make([]int, 0, len(w.parts))
	for p, pb := range w.parts {
		if pb != nil && pb.file.mem > 0 && !pb.file.sent {
			order = append(order, p)
		}
	}
	sort.Slice(order, func(i, j int) bool { return w.parts[order[i]].file.mem > w.parts[order[j]].file.mem })
	for _, p := range order {
		if w.held <= w.opts.MaxBufferedBytes/2 {
			break
		}
		pf := &w.parts[p].file
		var n int64
		for _, c := range pf.chunks {
			k, err := w.spill.WriteAt(c, w.spillEnd+n)
			n += int64(k)
			if err != nil {
				return spillError(fmt.Sprintf("spilling partition %d", p), err)
			}
		}
		pf.segs = append(pf.segs, [2]int64{w.spillEnd, n})
		pf.spilled += n
		w.spillEnd += n
		w.spilledTo += n
		w.held -= n
		pf.chunks, pf.mem = nil, 0 // free them
	}
	return nil
}

// Close encodes what is buffered, uploads the attempt's data object (when
// it has rows) and then the manifest, and returns the manifest. After an
// error the attempt has no manifest (so it is never read); a data object
// already uploaded is left for garbage collection.
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
	if err := w.collect(true); err != nil {
		return nil, err
	}
	key := DataKey(w.prefix)
	hasRows := false
	for _, pb := range w.parts {
		if pb != nil && (pb.n > 0 || pb.file.rows > 0) {
			hasRows = true
			break
		}
	}
	if hasRows { // else nothing is buffered either: no object
		if err := w.upload(ctx, key, m); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
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

// upload encodes what is buffered and stores the data object, each
// partition's run handed to the upload as soon as it and every partition
// before it are encoded (the bytes are sent while the rest is encoded
// when the bucket streams), and fills m's partitions.
func (w *Writer) upload(ctx context.Context, key string, m *Manifest) (err error) {
	up, err := objstore.StartUpload(ctx, w.b, key)
	if err != nil {
		return fmt.Errorf("shuffle: writer: uploading %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			up.Abort()
		}
	}()
	header := w.enc.fileHeader()
	if err := up.Append(bytes.NewReader(header), int64(len(header))); err != nil {
		return fmt.Errorf("shuffle: writer: uploading %s: %w", key, err)
	}
	pos := int64(len(header))
	var blocks []fileBlock
	next := 0 // the first partition not handed over
	send := func(upTo int) error {
		for ; next < upTo; next++ {
			pb := w.parts[next]
			if pb == nil || pb.file.rows == 0 {
				continue
			}
			pf := &pb.file
			var run objstore.Segments
			for _, seg := range pf.segs {
				run.Add(io.NewSectionReader(w.spill, seg[0], seg[1]), seg[1])
			}
			for _, c := range pf.chunks {
				run.Add(bytes.NewReader(c), int64(len(c)))
			}
			pf.sent = true
			h := xxh3.New()
			for _, seg := range pf.segs {
				if _, err := io.Copy(h, io.NewSectionReader(w.spill, seg[0], seg[1])); err != nil {
					return fmt.Errorf("shuffle: writer: reading back spilled partition %d: %w", next, err)
				}
			}
			for _, c := range pf.chunks {
				h.Write(c)
			}
			sum := Sum(h.Sum64())
			if err := up.Append(&run, run.Size()); err != nil {
				return fmt.Errorf("shuffle: writer: uploading %s: %w", key, err)
			}
			for _, b := range pf.blocks {
				b.offset += pos
				blocks = append(blocks, b)
			}
			m.Partitions = append(m.Partitions, PartitionStat{
				Partition: next, Rows: pf.rows, Offset: pos, Bytes: run.Size(), Key: key, Checksum: sum})
			m.Rows += pf.rows
			m.Bytes += run.Size()
			pos += run.Size()
		}
		return nil
	}
	if err := w.flushAll(send); err != nil {
		return err
	}
	if err := send(w.nparts); err != nil {
		return err
	}
	trailer, err := fileTrailer(w.schema, w.opts.Allocator, blocks)
	if err != nil {
		return fmt.Errorf("shuffle: writer: footer: %w", err)
	}
	if err := up.Append(bytes.NewReader(trailer), int64(len(trailer))); err != nil {
		return fmt.Errorf("shuffle: writer: uploading %s: %w", key, err)
	}
	size, err := up.Commit(ctx)
	if err != nil {
		return fmt.Errorf("shuffle: writer: uploading %s: %w", key, err)
	}
	if want := pos + int64(len(trailer)); size != want {
		return fmt.Errorf("shuffle: writer: uploading %s: stored %d bytes, want %d", key, size, want)
	}
	m.Object, m.ObjectBytes = key, size
	return nil
}

// Abort releases the writer's memory and spill file without writing a
// manifest. It is safe to call after Close (a no-op then) and more than
// once.
func (w *Writer) Abort() {
	w.closed = true
	w.stopBackground()
	for p, pb := range w.parts {
		if pb == nil {
			continue
		}
		for _, b := range pb.cols {
			b.Release()
		}
		w.parts[p] = nil
	}
	if w.spill != nil {
		name := w.spill.Name()
		_ = w.spill.Close()
		_ = os.Remove(name)
		w.spill = nil
	}
	w.enc, w.encs = nil, nil
	w.buffered = 0
	w.held = 0
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
