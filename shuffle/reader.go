package shuffle

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// ObjectRef names one shuffle object to read and what it should be. Bytes,
// Rows and Checksum are checked when set (non-zero, non-empty).
type ObjectRef struct {
	Key      string `json:"key"`
	Bytes    int64  `json:"bytes,omitempty"`
	Rows     int64  `json:"rows,omitempty"`
	Checksum string `json:"checksum,omitempty"`
}

// ReadOptions tune ReadObjectsWith. Zero values get defaults.
type ReadOptions struct {
	// Prefetch is the number of objects downloaded ahead of the one being
	// decoded (and so the number held in memory at once); default 2.
	Prefetch int
	// Schema, when set, is checked against every object's schema.
	Schema *arrow.Schema
	// Allocator for decompressed buffers; default memory.DefaultAllocator.
	Allocator memory.Allocator
}

// ReadObjects reads the objects in order and calls fn for each record
// batch. A batch is valid only during its fn call (Retain it to keep it).
// The caller passes only committed attempts' objects.
//
// A missing object gives a *MissingError (ErrMissing); an object whose
// size, checksum or row count differs from its ref, or that does not decode
// as an Arrow IPC file, gives a *CorruptError (ErrCorrupt): in both cases
// the caller can re-run the producing task. An error of fn stops the read
// and is returned as is.
func ReadObjects(ctx context.Context, b objstore.Bucket, refs []ObjectRef, fn func(arrow.RecordBatch) error) error {
	return ReadObjectsWith(ctx, b, refs, ReadOptions{}, fn)
}

// ReadObjectsWith is ReadObjects with options.
func ReadObjectsWith(ctx context.Context, b objstore.Bucket, refs []ObjectRef, opts ReadOptions, fn func(arrow.RecordBatch) error) error {
	if len(refs) == 0 {
		return nil
	}
	if opts.Prefetch <= 0 {
		opts.Prefetch = 2
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type fetched struct {
		data []byte
		err  error
	}
	results := make([]chan fetched, len(refs))
	for i := range results {
		results[i] = make(chan fetched, 1)
	}
	// slots bounds the objects held: downloading, waiting or being decoded.
	slots := make(chan struct{}, opts.Prefetch)
	go func() {
		for i := range refs {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func(i int) {
				data, err := fetchObject(ctx, b, refs[i])
				results[i] <- fetched{data, err}
			}(i)
		}
	}()
	for i, ref := range refs {
		var r fetched
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return r.err
		}
		err := decodeObject(ref, r.data, opts, fn)
		<-slots
		if err != nil {
			return err
		}
	}
	return nil
}

// fetchObject downloads and verifies one object.
func fetchObject(ctx context.Context, b objstore.Bucket, ref ObjectRef) ([]byte, error) {
	data, err := b.Get(ctx, ref.Key)
	if err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			return nil, &MissingError{Key: ref.Key, Err: err}
		}
		return nil, fmt.Errorf("shuffle: reading %s: %w", ref.Key, err)
	}
	if ref.Bytes > 0 && int64(len(data)) != ref.Bytes {
		return nil, &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("size %d, want %d", len(data), ref.Bytes)}
	}
	if ref.Checksum != "" {
		ok, err := verifyChecksum(ref.Checksum, data)
		if err != nil {
			return nil, fmt.Errorf("shuffle: %s: %w", ref.Key, err)
		}
		if !ok {
			return nil, &CorruptError{Key: ref.Key, Reason: fmt.Sprintf("checksum mismatch (want %s, got %s)", ref.Checksum, Checksum(data))}
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
		if ref.Checksum == "" {
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

// Cat decodes any shuffle part object (any Arrow IPC file) and calls fn
// for each record batch, without verification. For `sluice shuffle cat`.
func Cat(ctx context.Context, b objstore.Bucket, key string, fn func(arrow.RecordBatch) error) error {
	if info, err := ParseKey(key); err == nil && info.Manifest {
		return fmt.Errorf("shuffle: %s is a manifest (JSON), not an Arrow object; use ReadManifest", key)
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
