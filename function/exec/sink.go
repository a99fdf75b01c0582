package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// FileSink is where a KindWrite node puts its file: the task runtime
// implements it over the job's bucket.
type FileSink interface {
	// PutFile stores body at key in the job's bucket.
	PutFile(ctx context.Context, key string, body []byte) error
	// Writer names the running task: its job id and task number.
	Writer() (job string, task int)
}

// writeOp is the table writer (plan.KindWrite): it writes every row of its
// input as one file and then yields one row (file key, rows), or nothing
// when the input had no rows.
type writeOp struct {
	in     Operator
	node   *plan.Node
	sink   FileSink
	opts   Options
	schema *arrow.Schema // of the written file: the input's, renamed
	done   bool

	// A partitioned write (plan.Write.PartitionBy): the partition columns'
	// positions, the other columns' (the files'), the files' schema, and
	// the written files, one per folder, in order of their first row.
	partCols   []int
	dataCols   []int
	fileSchema *arrow.Schema
	parts      map[string]*partFile
	order      []string
	out        []written
}

// partFile is the file of one partition folder being written.
type partFile struct {
	buf  bytes.Buffer
	fw   FileWriter
	rows int64
}

// written is a file put, for the output rows.
type written struct {
	key  string
	rows int64
}

// NewWrite builds a KindWrite node over in; opts.Sink must be set.
func NewWrite(in Operator, n *plan.Node, opts Options) (Operator, error) {
	if opts.Sink == nil {
		return nil, errors.New("exec: write: the task has no file sink")
	}
	ins := in.Schema()
	if len(n.Write.Columns) != ins.NumFields() {
		return nil, fmt.Errorf("exec: write: %d column names for %d columns", len(n.Write.Columns), ins.NumFields())
	}
	fs := make([]arrow.Field, ins.NumFields())
	for i := range fs {
		fs[i] = ins.Field(i)
		fs[i].Name = n.Write.Columns[i]
	}
	w := &writeOp{in: in, node: n, sink: opts.Sink, opts: opts, schema: arrow.NewSchema(fs, nil)}
	if len(n.Write.PartitionBy) > 0 {
		w.partCols = n.Write.PartitionColumns()
		part := map[int]bool{}
		for _, c := range w.partCols {
			if c < 0 {
				return nil, fmt.Errorf("exec: write: a PARTITION_BY column is not among %v", n.Write.Columns)
			}
			part[c] = true
		}
		var kept []arrow.Field
		for i, f := range fs {
			if !part[i] {
				kept = append(kept, f)
				w.dataCols = append(w.dataCols, i)
			}
		}
		w.fileSchema = arrow.NewSchema(kept, nil)
	}
	return w, nil
}

func (w *writeOp) Schema() *arrow.Schema { return w.node.Schema.Arrow() }
func (w *writeOp) Close() error          { return w.in.Close() }

func (w *writeOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if w.done {
		return nil, io.EOF
	}
	w.done = true
	if w.partCols != nil {
		return w.writePartitioned(ctx)
	}
	var buf bytes.Buffer
	fw, err := NewFileWriter(&buf, w.schema, w.node.Write)
	if err != nil {
		return nil, err
	}
	var rows int64
	for {
		rec, err := w.in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		renamed := array.NewRecordBatch(w.schema, rec.Columns(), rec.NumRows())
		rows += rec.NumRows()
		err = fw.Write(renamed)
		renamed.Release()
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("exec: write %s: %w", w.node.Write.Format, err)
		}
	}
	if err := fw.Close(); err != nil {
		return nil, fmt.Errorf("exec: write %s: %w", w.node.Write.Format, err)
	}
	if rows == 0 {
		// No file for an empty task: the statement's commit step writes
		// one empty file when the whole result is empty.
		return nil, io.EOF
	}
	job, task := w.sink.Writer()
	key := w.node.Write.Key(job, task)
	if err := w.sink.PutFile(ctx, key, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("exec: write %s: %w", key, err)
	}
	return w.result([]written{{key, rows}}), nil
}

// result is the output batch naming the files written.
func (w *writeOp) result(files []written) arrow.RecordBatch {
	kb := array.NewStringBuilder(w.opts.Mem)
	defer kb.Release()
	rb := array.NewInt64Builder(w.opts.Mem)
	defer rb.Release()
	for _, f := range files {
		kb.Append(f.key)
		rb.Append(f.rows)
	}
	k, r := kb.NewArray(), rb.NewArray()
	defer k.Release()
	defer r.Release()
	return array.NewRecordBatch(w.Schema(), []arrow.Array{k, r}, int64(len(files)))
}

// writePartitioned writes the input's rows into one file per partition
// folder (plan.HiveSegment of each partition column's value, cast to
// text), the partition columns left out, and outputs one row per file.
// The files are built in memory, as the unpartitioned one is.
func (w *writeOp) writePartitioned(ctx context.Context) (arrow.RecordBatch, error) {
	w.parts = map[string]*partFile{}
	mem := w.opts.Mem
	wr := w.node.Write
	for {
		rec, err := w.in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		err = w.splitBatch(mem, rec)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("exec: write %s: %w", wr.Format, err)
		}
	}
	job, task := w.sink.Writer()
	for _, dir := range w.order {
		p := w.parts[dir]
		if err := p.fw.Close(); err != nil {
			return nil, fmt.Errorf("exec: write %s: %w", wr.Format, err)
		}
		key := plan.WriteFileName(wr.Prefix+dir, job, task, wr.Ext())
		if err := w.sink.PutFile(ctx, key, p.buf.Bytes()); err != nil {
			return nil, fmt.Errorf("exec: write %s: %w", key, err)
		}
		w.out = append(w.out, written{key, p.rows})
		delete(w.parts, dir) // its bytes are no longer needed
	}
	if len(w.out) == 0 {
		return nil, io.EOF
	}
	return w.result(w.out), nil
}

// splitBatch appends the rows of rec to the files of their folders.
func (w *writeOp) splitBatch(mem memory.Allocator, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	texts := make([]*array.String, len(w.partCols))
	for i, c := range w.partCols {
		a, err := castArray(mem, rec.Column(c), plan.StringType)
		if err != nil {
			return fmt.Errorf("partition column %s: %w", w.node.Write.Columns[c], err)
		}
		defer a.Release()
		s, ok := a.(*array.String)
		if !ok {
			return fmt.Errorf("partition column %s: its text is %s", w.node.Write.Columns[c], a.DataType())
		}
		texts[i] = s
	}
	rows := map[string][]int32{}
	var dirs []string
	var sb strings.Builder
	for r := 0; r < n; r++ {
		sb.Reset()
		for i, c := range w.partCols {
			sb.WriteString(plan.HiveSegment(w.node.Write.Columns[c], texts[i].Value(r), texts[i].IsNull(r)))
		}
		d := sb.String()
		if _, ok := rows[d]; !ok {
			dirs = append(dirs, d)
		}
		rows[d] = append(rows[d], int32(r))
	}
	data := make([]arrow.Array, len(w.dataCols))
	for i, c := range w.dataCols {
		data[i] = rec.Column(c)
	}
	whole := array.NewRecordBatch(w.fileSchema, data, int64(n))
	defer whole.Release()
	for _, d := range dirs {
		p := w.parts[d]
		if p == nil {
			p = &partFile{}
			fw, err := NewFileWriter(&p.buf, w.fileSchema, w.node.Write)
			if err != nil {
				return err
			}
			p.fw = fw
			w.parts[d] = p
			w.order = append(w.order, d)
		}
		part := whole
		if idx := rows[d]; len(idx) < n {
			t, err := takeRecord(mem, whole, idx)
			if err != nil {
				return err
			}
			defer t.Release()
			part = t
		}
		if err := p.fw.Write(part); err != nil {
			return err
		}
		p.rows += part.NumRows()
	}
	return nil
}
