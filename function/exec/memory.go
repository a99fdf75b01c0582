package exec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/shuffle/kernel"
)

// MemoryPool accounts the bytes held by the memory-hungry operators of one
// task (hash tables, sort buffers, join build sides, window partitions)
// against one limit, in the manner of Spark's TaskMemoryManager or
// DataFusion's MemoryPool: every operator holds a reservation it grows and
// shrinks as it buffers data. An operator that can spill (sort, hash
// aggregate, hash and nested-loop join) asks whether a growth fits and, when it does not,
// writes what it holds to a spill file (Arrow IPC stream) in the pool's
// directory and frees its reservation. Without a spill directory, or once
// the spill space is used up, a growth past the limit fails with a
// *MemoryLimitError naming the operator and the budget.
//
// The pool also records the task's peak accounted bytes and the bytes and
// files it spilled, which the task reports in its result.
type MemoryPool struct {
	limit      int64
	dir        string
	spillLimit int64

	used       atomic.Int64
	peak       atomic.Int64
	onDisk     atomic.Int64 // bytes of spill files not yet removed
	spillBytes atomic.Int64
	spills     atomic.Int64
	seq        atomic.Int64
}

// NewMemoryPool returns a pool of limit bytes (<= 0: DefaultMemoryLimit)
// spilling into dir ("" disables spill) with at most spillLimit bytes of
// spill files at once (0: no bound).
func NewMemoryPool(limit int64, dir string, spillLimit int64) *MemoryPool {
	if limit <= 0 {
		limit = DefaultMemoryLimit
	}
	return &MemoryPool{limit: limit, dir: dir, spillLimit: spillLimit}
}

// Limit is the pool's budget in bytes.
func (p *MemoryPool) Limit() int64 { return p.limit }

// Peak is the most bytes the pool's reservations held at once.
func (p *MemoryPool) Peak() int64 { return p.peak.Load() }

// SpillBytes is the total size of the spill files written.
func (p *MemoryPool) SpillBytes() int64 { return p.spillBytes.Load() }

// SpillCount is the number of spill files written.
func (p *MemoryPool) SpillCount() int64 { return p.spills.Load() }

// SpillDiskBytes is the size of the spill files still on disk.
func (p *MemoryPool) SpillDiskBytes() int64 { return p.onDisk.Load() }

// CanSpill reports whether operators may spill to disk.
func (p *MemoryPool) CanSpill() bool {
	return p.dir != "" && (p.spillLimit <= 0 || p.onDisk.Load() < p.spillLimit)
}

// MemoryLimitError reports that an operator needed more memory than the
// task's budget allows and could not spill.
type MemoryLimitError struct {
	Operator string // "aggregate", "sort", ...
	Limit    int64  // the task's budget in bytes
	Used     int64  // bytes the task would have held
	// Reason says why spilling did not help ("" for an operator that
	// cannot spill).
	Reason string
}

func (e *MemoryLimitError) Error() string {
	s := fmt.Sprintf("exec: %s: memory limit exceeded: needs %d bytes, task memory budget %d bytes", e.Operator, e.Used, e.Limit)
	if e.Used <= 0 { // nothing held at the time (a spill file failing to close)
		s = fmt.Sprintf("exec: %s: memory limit exceeded: task memory budget %d bytes", e.Operator, e.Limit)
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s + "; " + e.Hint()
}

// Hint says what a user can change so that the operator fits: the
// function's memory (a task's budget is half of it), the spill space, or,
// for an operator that holds what it cannot spill, how many tasks its
// input is spread over (more --partitions, and a lower
// --target-partition-bytes so that adaptive coalescing does not pack them
// back together).
func (e *MemoryLimitError) Hint() string {
	const mem = "raise --function-memory (a task's budget is half of it)"
	switch r := e.Reason; {
	case strings.HasPrefix(r, "spill disk full"):
		return "hint: free space on the spill disk, or " + mem
	case strings.HasPrefix(r, "spill space of"):
		return "hint: raise " + SpillLimitEnvName + " on the functions, or " + mem
	case r == "no spill directory":
		return "hint: let the functions spill to disk (a spill directory), or " + mem
	case strings.HasPrefix(r, tooDeepReason):
		return "hint: " + mem + " (more tasks do not split one group)"
	case strings.HasSuffix(r, resultAloneReason):
		return "hint: " + mem + " (the result is one value: more tasks do not help)"
	case strings.HasPrefix(r, windowPartitionReason):
		return "hint: add PARTITION BY keys that split the window's rows into smaller partitions, or " + mem
	}
	return "hint: " + mem + ", or spread the " + e.Operator + "'s input over more tasks: a higher --partitions and a lower --target-partition-bytes"
}

// SpillLimitEnvName is the environment variable that bounds a function's
// spill bytes (function.SpillLimitEnv; named here for the error hint).
const SpillLimitEnvName = "SLUICE_SPILL_LIMIT"

// Unwrap makes errors.Is(err, ErrMemoryLimit) true.
func (e *MemoryLimitError) Unwrap() error { return ErrMemoryLimit }

// reservation is one operator's share of a MemoryPool.
type reservation struct {
	p    *MemoryPool
	op   string
	held int64
}

func (p *MemoryPool) reserve(op string) *reservation { return &reservation{p: p, op: op} }

// set changes the bytes held by r to n and fails if the task then exceeds
// its budget (the new amount stays accounted until release).
func (r *reservation) set(n int64) error {
	if r == nil || r.p == nil {
		return nil
	}
	used := r.p.used.Add(n - r.held)
	r.held = n
	if used > r.p.limit {
		reason := ""
		if r.p.dir == "" {
			reason = "no spill directory"
		} else if r.p.spillLimit > 0 && r.p.onDisk.Load() >= r.p.spillLimit {
			reason = fmt.Sprintf("spill space of %d bytes used up", r.p.spillLimit)
		}
		return &MemoryLimitError{Operator: r.op, Limit: r.p.limit, Used: used, Reason: reason}
	}
	r.p.notePeak(used)
	return nil
}

// fits reports whether r may hold n bytes within the budget.
func (r *reservation) fits(n int64) bool {
	if r == nil || r.p == nil {
		return true
	}
	return r.p.used.Load()-r.held+n <= r.p.limit
}

// room is the most bytes r could hold now within the budget.
func (r *reservation) room() int64 {
	if r == nil || r.p == nil {
		return 1<<63 - 1
	}
	return r.p.limit - (r.p.used.Load() - r.held)
}

// spill reports whether r should spill instead of holding n bytes: n does
// not fit, spilling is possible, and the operator holds something worth
// spilling.
//
// The pool's peak then records the bytes the operator held at that moment
// (over the budget by the batch that did not fit): they were in memory.
func (r *reservation) spill(n int64) bool {
	if r == nil || r.p == nil || r.fits(n) || !r.p.CanSpill() {
		return false
	}
	r.p.notePeak(r.p.used.Load() - r.held + n)
	return true
}

func (p *MemoryPool) notePeak(used int64) {
	for {
		pk := p.peak.Load()
		if used <= pk || p.peak.CompareAndSwap(pk, used) {
			return
		}
	}
}

func (r *reservation) release() {
	if r == nil || r.p == nil {
		return
	}
	r.p.used.Add(-r.held)
	r.held = 0
}

// ---- spill files ------------------------------------------------------------

// spillFile is one file of record batches written by an operator: an
// Arrow IPC stream, read back once and removed.
type spillFile struct {
	p      *MemoryPool
	op     string
	schema *arrow.Schema
	path   string
	f      *os.File
	buf    *bufio.Writer
	cw     countingWriter
	w      *ipc.Writer
	size   int64
	rows   int64
	done   bool

	mu      sync.Mutex
	removed bool
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// newSpill creates a spill file for batches of schema.
func (p *MemoryPool) newSpill(op string, schema *arrow.Schema, mem memory.Allocator) (*spillFile, error) {
	if p.dir == "" {
		return nil, &MemoryLimitError{Operator: op, Limit: p.limit, Used: p.used.Load(), Reason: "no spill directory"}
	}
	f, err := os.CreateTemp(p.dir, fmt.Sprintf("spill-%d-*.arrows", p.seq.Add(1)))
	if err != nil {
		return nil, p.spillError(op, "create spill file", err)
	}
	s := &spillFile{p: p, op: op, schema: schema, path: f.Name(), f: f}
	s.buf = bufio.NewWriterSize(f, 256<<10)
	s.cw.w = s.buf
	s.w = ipc.NewWriter(&s.cw, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	p.spills.Add(1)
	return s, nil
}

// write appends rec; it fails once the pool's spill space is used up.
func (s *spillFile) write(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	before := s.cw.n
	if err := s.w.Write(rec); err != nil {
		return s.p.spillError(s.op, "write spill file", err)
	}
	d := s.cw.n - before
	s.size += d
	s.rows += rec.NumRows()
	s.p.spillBytes.Add(d)
	disk := s.p.onDisk.Add(d)
	if s.p.spillLimit > 0 && disk > s.p.spillLimit {
		return &MemoryLimitError{Operator: s.op, Limit: s.p.limit, Used: s.p.used.Load(),
			Reason: fmt.Sprintf("spill space of %d bytes used up", s.p.spillLimit)}
	}
	return nil
}

// finish closes the file for writing.
func (s *spillFile) finish() error {
	if s.done {
		return nil
	}
	s.done = true
	err := s.w.Close()
	if e := s.buf.Flush(); err == nil {
		err = e
	}
	if e := s.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return s.p.spillError(s.op, "close spill file", err)
	}
	return nil
}

// spillError is the error of spill file I/O. A full disk (ENOSPC, EDQUOT)
// is the task's memory limit, as a spill limit used up is: the operator
// could not spill what did not fit (CodeMemoryLimit, never retried, where
// an uncoded error would be retried as infrastructure trouble).
func (p *MemoryPool) spillError(op, what string, err error) error {
	if DiskFull(err) {
		return &MemoryLimitError{Operator: op, Limit: p.limit, Used: p.used.Load(),
			Reason: fmt.Sprintf("spill disk full: %s: %v", what, err)}
	}
	return fmt.Errorf("exec: %s: %s: %w", op, what, err)
}

// DiskFull reports whether err is a local file system out of space or
// quota.
func DiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// remove deletes the file (idempotent).
func (s *spillFile) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return
	}
	s.removed = true
	if !s.done {
		s.done = true
		s.w.Close()
		s.f.Close()
	}
	os.Remove(s.path)
	s.p.onDisk.Add(-s.size)
}

// open returns an operator reading the file's batches back; closing it
// removes the file.
func (s *spillFile) open(mem memory.Allocator) (Operator, error) {
	return s.openReader(mem, false)
}

// reread returns an operator reading the file's batches back that leaves
// the file in place when closed, for a file read more than once (the
// probe side of a block nested-loop join); remove deletes it.
func (s *spillFile) reread(mem memory.Allocator) (Operator, error) {
	return s.openReader(mem, true)
}

func (s *spillFile) openReader(mem memory.Allocator, keep bool) (Operator, error) {
	if err := s.finish(); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fmt.Errorf("exec: %s: open spill file: %w", s.op, err)
	}
	r, err := ipc.NewReader(bufio.NewReaderSize(f, 256<<10), ipc.WithAllocator(mem), ipc.WithSchema(s.schema))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("exec: %s: read spill file: %w", s.op, err)
	}
	return &spillReader{s: s, f: f, r: r, keep: keep}, nil
}

// spillReader reads a spill file back.
type spillReader struct {
	s      *spillFile
	f      *os.File
	r      *ipc.Reader
	keep   bool // Close leaves the file (reread)
	closed bool
}

func (r *spillReader) Schema() *arrow.Schema { return r.s.schema }

func (r *spillReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.closed {
		return nil, io.EOF
	}
	if !r.r.Next() {
		if err := r.r.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("exec: %s: read spill file: %w", r.s.op, err)
		}
		return nil, io.EOF
	}
	rec := r.r.RecordBatch()
	rec.Retain()
	return rec, nil
}

func (r *spillReader) Close() error {
	if !r.closed {
		r.closed = true
		r.r.Release()
		r.f.Close()
		if !r.keep {
			r.s.remove()
		}
	}
	return nil
}

// spillPartitions writes record batches into n spill files by a hash of
// key expressions.
type spillPartitions struct {
	files []*spillFile
}

func (p *MemoryPool) newSpillPartitions(op string, schema *arrow.Schema, mem memory.Allocator, n int) (*spillPartitions, error) {
	sp := &spillPartitions{}
	for i := 0; i < n; i++ {
		f, err := p.newSpill(op, schema, mem)
		if err != nil {
			sp.remove()
			return nil, err
		}
		sp.files = append(sp.files, f)
	}
	return sp, nil
}

// write splits rec by the partition of each row's keys (hashed with a seed
// per spill level, so a partition spilled again splits differently).
func (sp *spillPartitions) write(mem memory.Allocator, rec arrow.RecordBatch, keys []arrow.Array, level int) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	h := make([]uint64, n)
	seed := hashSeed ^ uint64(level+1)*0x9e3779b97f4a7c15
	for i := range h {
		h[i] = seed
	}
	for _, k := range keys {
		if err := hashColumn(k, h); err != nil {
			return err
		}
	}
	np := uint64(len(sp.files))
	sel := make([][]int32, np)
	for i, v := range h {
		q := kernel.Mix(v^seed) % np
		sel[q] = append(sel[q], int32(i))
	}
	for q, rows := range sel {
		if len(rows) == 0 {
			continue
		}
		if len(rows) == n {
			if err := sp.files[q].write(rec); err != nil {
				return err
			}
			continue
		}
		part, err := takeRecord(mem, rec, rows)
		if err != nil {
			return err
		}
		err = sp.files[q].write(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (sp *spillPartitions) remove() {
	if sp == nil {
		return
	}
	for _, f := range sp.files {
		f.remove()
	}
}

// spillFanout is the number of partitions a hash aggregate or hash join
// spills into at each level, and maxSpillLevel how often a partition that
// still does not fit is split again.
const (
	spillFanout   = 16
	maxSpillLevel = 4
)
