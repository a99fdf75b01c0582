package shuffle

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// ObjectRef names what a task reads of one shuffle object: the whole
// object (manifest version 1), or, when Offset > 0, output partition Part
// of a data object, the bytes [Offset, Offset+Bytes). Bytes, Rows and
// Checksum are checked when set (non-zero, non-empty).
type ObjectRef struct {
	Key      string `json:"key"`
	Part     int    `json:"part,omitempty"`
	Offset   int64  `json:"offset,omitempty"`
	Bytes    int64  `json:"bytes,omitempty"`
	Rows     int64  `json:"rows,omitempty"`
	Checksum Sum    `json:"checksum,omitempty"`
}

// Ranged reports whether the ref is a byte range of a data object.
func (r ObjectRef) Ranged() bool { return r.Offset > 0 }

// ID identifies what the ref reads: the key of a whole object, or
// "<data key>#<partition>" (ParseKey takes both apart). Missing and
// corrupt errors name it, and repairs replace refs by it.
func (r ObjectRef) ID() string {
	if !r.Ranged() {
		return r.Key
	}
	return r.Key + "#" + strconv.Itoa(r.Part)
}

// DefaultMaxRequestBytes caps the bytes of one ranged GET.
const DefaultMaxRequestBytes = 16 << 20

// ReadOptions tune ReadObjectsWith. Zero values get defaults.
type ReadOptions struct {
	// Prefetch is the number of reads (a whole object, or a merged run of
	// partitions of one data object) fetched ahead of the one being
	// decoded, and so about the number held in memory at once; default 3.
	Prefetch int
	// MaxRequestBytes caps one ranged GET: adjacent partitions of a data
	// object are merged into one request up to it, and a bigger partition
	// is fetched as several requests in parallel. Default 16 MiB.
	MaxRequestBytes int64
	// HedgeAfter is the base deadline of a ranged GET (plus one second per
	// 8 MiB requested): a request still running past it is sent again
	// (twice at most) and the first answer wins. Default 2s; negative
	// turns it off.
	HedgeAfter time.Duration
	// Schema is the schema of the objects. It is required for ranged refs
	// (a partition's bytes carry no schema message) and checked against
	// every whole object's schema.
	Schema *arrow.Schema
	// Allocator for decompressed buffers; default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Stats, when set, counts the GETs issued and the bytes fetched.
	Stats *ReadStats
}

// ReadStats counts what a read fetched.
type ReadStats struct {
	Requests atomic.Int64 // GETs (hedged duplicates included)
	Hedged   atomic.Int64 // duplicate GETs sent for slow requests
	Bytes    atomic.Int64 // bytes received
}

// ReadObjects reads the refs and calls fn for each record batch. A batch
// is valid only during its fn call (Retain it to keep it). The caller
// passes only committed attempts' refs.
//
// Ranged refs of one data object are read together, in offset order, and
// adjacent ones are merged into one ranged GET (up to 4 MiB for the
// first, then up to twice the one before, at most MaxRequestBytes);
// objects are read in the order their first ref appears. So batches come
// in ref order within an object, not across objects.
//
// A missing object gives a *MissingError (ErrMissing); an object or
// partition whose size, checksum or row count differs from its ref, or that
// does not decode as Arrow IPC, gives a *CorruptError (ErrCorrupt): in both
// cases the error's Key is the ref's ID and the caller can re-run the
// producing task. An error of fn stops the read and is returned as is.
func ReadObjects(ctx context.Context, b objstore.Bucket, refs []ObjectRef, fn func(arrow.RecordBatch) error) error {
	return ReadObjectsWith(ctx, b, refs, ReadOptions{}, fn)
}

// readUnit is one fetch: a whole object, or the bytes [off, off+n) of a
// data object covering refs (adjacent partitions, in offset order).
type readUnit struct {
	key    string
	whole  bool
	off, n int64
	refs   []ObjectRef
}

// firstRequestBytes caps the first merged read of a ReadObjects call; each
// next one may be twice the one before, up to MaxRequestBytes. The first
// partitions decode while the bigger requests behind them are still on
// the wire, instead of after one MaxRequestBytes request (a 17 MB read of
// sixteen partitions of one object: median 114-160 ms in 16 MiB requests,
// 67-94 ms starting at 4 MiB, two cores shared with MinIO), and a big read
// still takes few requests.
const firstRequestBytes = 4 << 20

// planReads groups refs into fetches; see ReadObjects.
func planReads(refs []ObjectRef, maxReq int64) []readUnit {
	var order []string
	byKey := map[string][]ObjectRef{}
	var units []readUnit
	for _, r := range refs {
		if !r.Ranged() {
			order = append(order, "") // a whole object, in place
			units = append(units, readUnit{key: r.Key, whole: true, n: r.Bytes, refs: []ObjectRef{r}})
			continue
		}
		if _, seen := byKey[r.Key]; !seen {
			order = append(order, r.Key)
		}
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	var out []readUnit
	wi := 0
	limit := min(maxReq, firstRequestBytes) // merge cap of the next unit
	for _, k := range order {
		if k == "" {
			out = append(out, units[wi])
			wi++
			continue
		}
		rs := byKey[k]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Offset < rs[j].Offset })
		var cur *readUnit
		for _, r := range rs {
			if cur != nil && r.Offset == cur.off+cur.n && cur.n+r.Bytes <= limit {
				cur.n += r.Bytes
				cur.refs = append(cur.refs, r)
				continue
			}
			if cur != nil {
				limit = min(2*limit, maxReq)
			}
			out = append(out, readUnit{key: k, off: r.Offset, n: r.Bytes, refs: []ObjectRef{r}})
			cur = &out[len(out)-1]
		}
	}
	return out
}

// ReadObjectsWith is ReadObjects with options.
func ReadObjectsWith(ctx context.Context, b objstore.Bucket, refs []ObjectRef, opts ReadOptions, fn func(arrow.RecordBatch) error) error {
	if len(refs) == 0 {
		return nil
	}
	if opts.Prefetch <= 0 {
		opts.Prefetch = 3
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.HedgeAfter == 0 {
		opts.HedgeAfter = 2 * time.Second
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	var schemaMsg []byte
	for _, r := range refs {
		if r.Ranged() {
			if opts.Schema == nil {
				// Without the schema, take the first data object's.
				var err error
				if schemaMsg, err = readSchemaMessage(ctx, b, r); err != nil {
					return err
				}
				break
			}
			p := ipc.GetSchemaPayload(opts.Schema, opts.Allocator)
			var buf bytes.Buffer
			_, err := p.WritePayload(&buf)
			p.Release()
			if err != nil {
				return fmt.Errorf("shuffle: encoding schema: %w", err)
			}
			schemaMsg = buf.Bytes()
			break
		}
	}
	units := planReads(refs, opts.MaxRequestBytes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type fetched struct {
		data []byte
		err  error
	}
	results := make([]chan fetched, len(units))
	for i := range results {
		results[i] = make(chan fetched, 1)
	}
	// slots bounds the fetches held: downloading, waiting or being decoded.
	slots := make(chan struct{}, opts.Prefetch)
	go func() {
		for i := range units {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func(i int) {
				var f fetched
				if units[i].whole {
					f.data, f.err = fetchObject(ctx, b, units[i].refs[0], opts.Stats)
				} else {
					f.data, f.err = fetchRange(ctx, b, units[i], opts)
				}
				results[i] <- f
			}(i)
		}
	}()
	for i, u := range units {
		var r fetched
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return r.err
		}
		var err error
		if u.whole {
			err = decodeObject(u.refs[0], r.data, opts, fn)
		} else {
			for _, ref := range u.refs {
				part := r.data[ref.Offset-u.off : ref.Offset-u.off+ref.Bytes]
				if err = verifyRange(ref, part); err != nil {
					break
				}
				if err = decodeRun(ref, schemaMsg, part, opts, fn); err != nil {
					break
				}
			}
		}
		<-slots
		if err != nil {
			return err
		}
	}
	return nil
}

// readSchemaMessage returns the encapsulated schema message at the start
// of ref's data object (one or two ranged GETs).
func readSchemaMessage(ctx context.Context, b objstore.Bucket, ref ObjectRef) ([]byte, error) {
	n := min(ref.Offset, 64<<10)
	for {
		h, err := b.GetRange(ctx, ref.Key, 0, n)
		if err != nil {
			if errors.Is(err, objstore.ErrNotFound) {
				return nil, &MissingError{Key: ref.ID(), Err: err}
			}
			return nil, fmt.Errorf("shuffle: reading the header of %s: %w", ref.Key, err)
		}
		if len(h) < 16 || !bytes.Equal(h[:len(arrowMagic)], arrowMagic) || binary.LittleEndian.Uint32(h[8:]) != continuationMarker {
			return nil, &CorruptError{Key: ref.ID(), Reason: "no Arrow IPC file header"}
		}
		end := 16 + int64(binary.LittleEndian.Uint32(h[12:]))
		if end > ref.Offset {
			return nil, &CorruptError{Key: ref.ID(), Reason: "schema message overlaps the partition"}
		}
		if end <= int64(len(h)) {
			return h[8:end], nil
		}
		n = end
	}
}

// fetchRange downloads the bytes of a unit: one ranged GET, or several in
// parallel when it is bigger than MaxRequestBytes (one big partition).
func fetchRange(ctx context.Context, b objstore.Bucket, u readUnit, opts ReadOptions) ([]byte, error) {
	var buf []byte
	var err error
	if chunks := int((u.n + opts.MaxRequestBytes - 1) / opts.MaxRequestBytes); chunks <= 1 {
		// One request: its body is the range (no second buffer to
		// allocate, zero and copy into).
		buf, err = hedgedGet(ctx, b, u.key, u.off, u.n, opts)
		if err == nil && int64(len(buf)) < u.n {
			err = errShort{got: int64(len(buf))}
		}
		if err == nil {
			return buf[:u.n], nil
		}
	} else {
		buf = make([]byte, u.n)
		err = forEach(ctx, chunks, 4, func(ctx context.Context, i int) error {
			off := int64(i) * opts.MaxRequestBytes
			n := min(opts.MaxRequestBytes, u.n-off)
			data, err := hedgedGet(ctx, b, u.key, u.off+off, n, opts)
			if err != nil {
				return err
			}
			copy(buf[off:], data)
			if int64(len(data)) < n {
				return errShort{got: off + int64(len(data))}
			}
			return nil
		})
		if err == nil {
			return buf, nil
		}
	}
	// Name the first partition the failure touches.
	ref := u.refs[0]
	var short errShort
	switch {
	case errors.As(err, &short):
		for _, r := range u.refs {
			if r.Offset+r.Bytes > u.off+short.got {
				ref = r
				break
			}
		}
		return nil, &CorruptError{Key: ref.ID(), Reason: fmt.Sprintf("object truncated: range [%d,+%d) ends at %d", u.off, u.n, u.off+short.got)}
	case errors.Is(err, objstore.ErrNotFound):
		return nil, &MissingError{Key: ref.ID(), Err: err}
	case errors.Is(err, objstore.ErrInvalidRange):
		return nil, &CorruptError{Key: ref.ID(), Reason: "object truncated: range past its end", Err: err}
	}
	return nil, fmt.Errorf("shuffle: reading %s: %w", ref.ID(), err)
}

type errShort struct{ got int64 }

func (e errShort) Error() string { return fmt.Sprintf("short read: %d bytes", e.got) }

// hedgedGet is a ranged GET that is sent again (up to twice) when it has
// not answered within its deadline; the first answer wins and the others
// are canceled. An error waits for the requests still running.
func hedgedGet(ctx context.Context, b objstore.Bucket, key string, off, n int64, opts ReadOptions) ([]byte, error) {
	get := func(ctx context.Context) ([]byte, error) {
		if opts.Stats != nil {
			opts.Stats.Requests.Add(1)
		}
		data, err := b.GetRange(ctx, key, off, n)
		if opts.Stats != nil {
			opts.Stats.Bytes.Add(int64(len(data)))
		}
		return data, err
	}
	if opts.HedgeAfter < 0 {
		return get(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		data []byte
		err  error
	}
	answers := make(chan answer, 3)
	send := func() { go func() { d, err := get(ctx); answers <- answer{d, err} }() }
	deadline := opts.HedgeAfter + time.Duration(n/(8<<20))*time.Second
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	send()
	running, sent := 1, 1
	var firstErr error
	for {
		select {
		case a := <-answers:
			running--
			if a.err == nil {
				return a.data, nil
			}
			if firstErr == nil {
				firstErr = a.err
			}
			if running == 0 {
				return nil, firstErr
			}
		case <-timer.C:
			if sent < 3 {
				if opts.Stats != nil {
					opts.Stats.Hedged.Add(1)
				}
				send()
				sent++
				running++
				timer.Reset(deadline)
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// verifyRange checks a partition's bytes against its ref.
func verifyRange(ref ObjectRef, data []byte) error {
	if ref.Checksum == 0 {
		return nil
	}
	if got := SumOf(data); got != ref.Checksum {
		return &CorruptError{Key: ref.ID(), Reason: fmt.Sprintf("checksum mismatch (want %s, got %s)", ref.Checksum, got)}
	}
	return nil
}

// decodeRun decodes a partition's run of record batch messages, read as
// an IPC stream behind the schema message, and calls fn per batch.
func decodeRun(ref ObjectRef, schemaMsg, data []byte, opts ReadOptions, fn func(arrow.RecordBatch) error) error {
	var rd *ipc.Reader
	err := recovered(func() (err error) {
		rd, err = ipc.NewReader(io.MultiReader(bytes.NewReader(schemaMsg), bytes.NewReader(data), bytes.NewReader(eosMarker)),
			ipc.WithAllocator(opts.Allocator))
		return err
	})
	if err != nil {
		return &CorruptError{Key: ref.ID(), Reason: "schema message does not decode", Err: err}
	}
	defer rd.Release()
	var rows int64
	for i := 0; ; i++ {
		var rec arrow.RecordBatch
		var more bool
		err := recovered(func() error {
			more = rd.Next()
			if more {
				rec = rd.RecordBatch()
			}
			return rd.Err()
		})
		if err != nil {
			return &CorruptError{Key: ref.ID(), Reason: fmt.Sprintf("record batch %d does not decode", i), Err: err}
		}
		if !more {
			break
		}
		rows += rec.NumRows()
		if err := fn(rec); err != nil {
			return err
		}
	}
	if ref.Rows > 0 && rows != ref.Rows {
		return &CorruptError{Key: ref.ID(), Reason: fmt.Sprintf("%d rows, want %d", rows, ref.Rows)}
	}
	return nil
}

// fetchObject downloads and verifies one object.
func fetchObject(ctx context.Context, b objstore.Bucket, ref ObjectRef, st *ReadStats) ([]byte, error) {
	data, err := b.Get(ctx, ref.Key)
	if st != nil {
		st.Requests.Add(1)
		st.Bytes.Add(int64(len(data)))
	}
	if err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			return nil, &MissingError{Key: ref.Key, Err: err}
		}
		return nil, fmt.Errorf("shuffle: reading %s: %w", ref.Key, err)
	}
	if ref.Bytes > 0 && int64(len(data)) != ref.Bytes {
		return nil, &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("size %d, want %d", len(data), ref.Bytes)}
	}
	if ref.Checksum != 0 {
		if got := SumOf(data); got != ref.Checksum {
			return nil, &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("checksum mismatch (want %s, got %s)", ref.Checksum, got)}
		}
	}
	return data, nil
}

// decodeObject decodes an IPC file and calls fn per batch, checking the
// row count against ref.Rows when set.
func decodeObject(ref ObjectRef, data []byte, opts ReadOptions, fn func(arrow.RecordBatch) error) error {
	var fr *ipc.FileReader
	err := recovered(func() (err error) {
		fr, err = ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(opts.Allocator))
		return err
	})
	if err != nil {
		return &CorruptError{Key: ref.Key, Reason: "not an Arrow IPC file", Err: err}
	}
	defer fr.Close()
	if opts.Schema != nil && !fr.Schema().Equal(opts.Schema) {
		return &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("schema %s, want %s", fr.Schema(), opts.Schema)}
	}
	var rows int64
	for i := 0; i < fr.NumRecords(); i++ {
		var rec arrow.RecordBatch
		err := recovered(func() (err error) {
			rec, err = fr.RecordBatch(i)
			return err
		})
		if err != nil {
			return &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("record batch %d does not decode", i), Err: err}
		}
		if ref.Checksum == 0 {
			// Unverified bytes: the decoder trusts the batch's metadata
			// (null counts, offsets), which a damaged object may get wrong
			// and kernels then trust in turn. A checksummed object is the
			// bytes our writer produced, so only unverified ones pay this.
			if err := checkStructure(rec); err != nil {
				return &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("record batch %d: %v", i, err)}
			}
		}
		rows += rec.NumRows()
		if err := fn(rec); err != nil {
			return err
		}
	}
	if ref.Rows > 0 && rows != ref.Rows {
		return &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("%d rows, want %d", rows, ref.Rows)}
	}
	return nil
}

// checkStructure checks what the decoder takes on trust: every column's
// null count equals its validity bitmap's, and offsets stay within the
// data (the arrays' Validate). Values are not checked.
func checkStructure(rec arrow.RecordBatch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed column: %v", r)
		}
	}()
	for c, col := range rec.Columns() {
		if v, ok := col.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("column %d: %w", c, err)
			}
		}
		if col.DataType().ID() == arrow.NULL {
			continue
		}
		nulls := col.Len()
		if bm := col.NullBitmapBytes(); len(bm) > 0 {
			if (col.Data().Offset()+col.Len()+7)/8 > len(bm) {
				return fmt.Errorf("column %d: validity bitmap of %d bytes for %d rows", c, len(bm), col.Len())
			}
			nulls = col.Len() - bitutil.CountSetBits(bm, col.Data().Offset(), col.Len())
		} else {
			nulls = 0
		}
		if nulls != col.NullN() {
			return fmt.Errorf("column %d: null count %d, validity bitmap has %d", c, col.NullN(), nulls)
		}
	}
	return nil
}

// recovered runs f, turning a panic of the IPC decoder on malformed input
// into an error.
func recovered(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder panic: %v", r)
		}
	}()
	return f()
}

// Cat decodes a shuffle object (any Arrow IPC file: a data object holds
// every partition of its attempt) and calls fn for each record batch,
// without verification; a partition ID "<data key>#<p>" (ObjectRef.ID)
// decodes only that partition, checked against its manifest. For `sluice
// shuffle cat`.
func Cat(ctx context.Context, b objstore.Bucket, key string, fn func(arrow.RecordBatch) error) error {
	info, err := ParseKey(key)
	if err == nil && info.Manifest {
		return fmt.Errorf("shuffle: %s is a manifest (JSON), not an Arrow object; use ReadManifest", key)
	}
	if err == nil && info.Data && info.Part >= 0 {
		return catPartition(ctx, b, info, fn)
	}
	data, err := b.Get(ctx, key)
	if err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			return &MissingError{Key: key, Err: err}
		}
		return fmt.Errorf("shuffle: reading %s: %w", key, err)
	}
	return decodeObject(ObjectRef{Key: key}, data, ReadOptions{Allocator: memory.DefaultAllocator}, fn)
}

// catPartition decodes one partition of a data object: its manifest gives
// the range, the object's header (up to the first partition) the schema.
func catPartition(ctx context.Context, b objstore.Bucket, info KeyInfo, fn func(arrow.RecordBatch) error) error {
	m, err := ReadManifest(ctx, b, info.AttemptPrefix())
	if err != nil {
		return err
	}
	ps, ok := m.Partition(info.Part)
	if !ok {
		if info.Part >= m.NumPartitions {
			return fmt.Errorf("shuffle: partition %d out of range: the attempt has %d partitions", info.Part, m.NumPartitions)
		}
		return nil // an empty partition
	}
	if len(m.Partitions) == 0 || m.Partitions[0].Offset < 16 {
		return fmt.Errorf("shuffle: %s: manifest version %d has no partition ranges", ps.Key, m.Version)
	}
	header, err := b.GetRange(ctx, ps.Key, 0, m.Partitions[0].Offset)
	if err != nil {
		return fmt.Errorf("shuffle: reading the header of %s: %w", ps.Key, err)
	}
	if int64(len(header)) != m.Partitions[0].Offset || !bytes.Equal(header[:len(arrowMagic)], arrowMagic) {
		return &CorruptError{Key: ps.Key, Reason: "no Arrow IPC file header"}
	}
	ref := ps.Ref()
	data, err := fetchRange(ctx, b, readUnit{key: ref.Key, off: ref.Offset, n: ref.Bytes, refs: []ObjectRef{ref}},
		ReadOptions{MaxRequestBytes: DefaultMaxRequestBytes, HedgeAfter: -1})
	if err != nil {
		return err
	}
	if err := verifyRange(ref, data); err != nil {
		return err
	}
	return decodeRun(ref, header[8:], data, ReadOptions{Allocator: memory.DefaultAllocator}, fn)
}
