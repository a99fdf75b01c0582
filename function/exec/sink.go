package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

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
	return &writeOp{in: in, node: n, sink: opts.Sink, opts: opts, schema: arrow.NewSchema(fs, nil)}, nil
}

func (w *writeOp) Schema() *arrow.Schema { return w.node.Schema.Arrow() }
func (w *writeOp) Close() error          { return w.in.Close() }

func (w *writeOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if w.done {
		return nil, io.EOF
	}
	w.done = true
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
	kb := array.NewStringBuilder(w.opts.Mem)
	defer kb.Release()
	kb.Append(key)
	rb := array.NewInt64Builder(w.opts.Mem)
	defer rb.Release()
	rb.Append(rows)
	k, r := kb.NewArray(), rb.NewArray()
	defer k.Release()
	defer r.Release()
	return array.NewRecordBatch(w.Schema(), []arrow.Array{k, r}, 1), nil
}
