package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/sluicedb/sluice/planner/plan"
)

// ParquetScan reads the columns n.Scan.Columns of some row groups of one
// Parquet file, converts them to engine types and emits batches of about
// BatchRows rows. Row groups whose statistics prove n.Scan.Filter false are
// skipped (see Pruned).
type ParquetScan struct {
	n       *plan.Node
	schema  *arrow.Schema
	opts    Options
	src     *countingReader
	pf      *file.Reader
	rr      pqarrow.RecordReader
	fr      *pqarrow.FileReader
	leaves  []int // the file columns read
	readCol []int // output column -> column of the record reader
	outT    []plan.DataType
	table   string

	ahead     prefetcher // the source's read-ahead, when it has one
	rowGroups []int
	pruned    int
	// ranges are TakeRange's conjuncts (col >= lo AND col <= hi), tested
	// on the row groups' statistics at start; rangePruned counts the row
	// groups they left unread.
	ranges      []*plan.Expr
	rangePruned int
	zeroRows    int64 // zero-column scans: rows still to emit

	md        *metadata.FileMetaData
	colLeaves []int   // per output column, its leaf for statistics (-1: the file lacks it, or it is nested)
	colRead   [][]int // per output column, the leaves read for it (nil: the file lacks it)
	// paths: per output column, the struct fields it is under its file
	// column (nil: none; see parquet_paths.go).
	paths [][]string
	// sparse marks the output columns read with only some fields of
	// their elements (plan.Scan.Fields): the others are NULL.
	sparse []bool
	// rawDecimal: per record-reader column, the decimal type of an INT64
	// decimal read as its raw int64 values (rawDecimals); nil: none.
	rawDecimal []arrow.DataType
	src0       parquet.ReaderAtSeeker
	started    bool
	deleted    map[int64]bool // positions in the file of deleted rows
	// dictOut marks the output columns handed over as dictionary arrays
	// when the file's chunks are dictionary-only (EmitDictionaries);
	// dictSchema is the schema of such batches.
	dictOut    []bool
	dictSchema *arrow.Schema
	dictMask   []bool // the columns dictSchema makes dictionaries
	isDict     []bool // scratch
	cur        int    // index in rowGroups of the next row read
	curOff     int64  // its offset in that row group
	done       bool
	closed     bool
	late       *lateState         // late materialization (parquet_late.go); nil: off
	blooms     []*plan.BloomProbe // runtime filters' Bloom filters to test late (TakeBloom)
}

// prefetcher is a source that can read ahead the byte ranges it is told
// will be read (objstore.ReaderAt), and stop doing so.
type prefetcher interface {
	Prefetch(ranges [][2]int64)
	Close() error
}

// chunkRanges lists the byte ranges (offset, length) of the column chunks
// of leaves in rowGroups, in the order they are read, as arrow-go's
// RowGroupReader.GetColumnPageReader computes them.
func chunkRanges(md *metadata.FileMetaData, rowGroups, leaves []int) [][2]int64 {
	var out [][2]int64
	for _, rg := range rowGroups {
		rgm := md.RowGroup(rg)
		for _, l := range leaves {
			col, err := rgm.ColumnChunk(l)
			if err != nil {
				continue
			}
			start := col.DataPageOffset()
			if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && start > col.DictionaryPageOffset() {
				start = col.DictionaryPageOffset()
			}
			out = append(out, [2]int64{start, col.TotalCompressedSize()})
		}
	}
	return out
}

// countingReader counts the bytes read from the file and remembers
// whether a read failed: a decoding error without a failed read means the
// file itself is not valid Parquet.
type countingReader struct {
	r parquet.ReaderAtSeeker
	n atomic.Int64
	// ioErr is set once a read failed (not io.EOF): a decoding error
	// after it is the storage's fault, not a corrupt file.
	ioErr atomic.Bool
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	if err != nil && (err != io.EOF || n < len(p)) {
		c.ioErr.Store(true)
	}
	return n, err
}

// decodeErr classes an error of opening the file: corrupt input (SL106,
// not retried) unless a read failed, which is the storage's fault.
func (c *countingReader) decodeErr(err error) error {
	if c.ioErr.Load() || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return plan.WithCode(plan.CodeCorruptInput, err)
}

// viewer is a source that can hand out bytes it already holds without
// copying them (objstore.ReaderAt.View).
type viewer interface {
	View(off, n int64) ([]byte, error)
}

// view returns the n bytes at off: shared with the source when it is a
// viewer, else read into a fresh buffer. The caller must not modify them.
func (c *countingReader) view(off, n int64) ([]byte, error) {
	var b []byte
	var err error
	if v, ok := c.r.(viewer); ok {
		b, err = v.View(off, n)
	} else {
		b = make([]byte, n)
		var k int
		k, err = c.r.ReadAt(b, off)
		b = b[:k]
	}
	c.n.Add(int64(len(b)))
	if err != nil && (err != io.EOF || int64(len(b)) < n) {
		c.ioErr.Store(true)
	}
	if err == io.EOF && int64(len(b)) == n {
		err = nil
	}
	return b, err
}

func (c *countingReader) Seek(offset int64, whence int) (int64, error) {
	return c.r.Seek(offset, whence)
}

func (c *countingReader) Read(p []byte) (int, error) {
	if rd, ok := c.r.(io.Reader); ok {
		n, err := rd.Read(p)
		c.n.Add(int64(n))
		return n, err
	}
	return 0, fmt.Errorf("reader does not support Read")
}

// NewParquetScan opens a scan of the Parquet file r for the scan node n.
// rowGroups lists the row groups to read (nil: all). The returned operator
// is a *ParquetScan; its Close closes r when r is an io.Closer.
func NewParquetScan(ctx context.Context, r parquet.ReaderAtSeeker, n *plan.Node, rowGroups []int, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if n == nil || n.Scan == nil {
		return nil, fmt.Errorf("exec: parquet scan: node has no scan description")
	}
	if len(n.Schema) != len(n.Scan.Columns) {
		return nil, fmt.Errorf("exec: parquet scan of %s: %d columns for a schema of %d fields", n.Scan.Table, len(n.Scan.Columns), len(n.Schema))
	}
	s := &ParquetScan{n: n, schema: n.Schema.Arrow(), opts: opts, src: &countingReader{r: r}, table: n.Scan.Table}
	fail := func(format string, args ...any) (Operator, error) {
		s.Close()
		return nil, fmt.Errorf("exec: parquet scan of %s: %s", s.table, fmt.Sprintf(format, args...))
	}
	pf, err := file.NewParquetReader(s.src, file.WithReadProps(parquet.NewReaderProperties(memory.NewGoAllocator())))
	if err != nil {
		return nil, s.src.decodeErr(fmt.Errorf("exec: parquet scan of %s: open: %w", s.table, err))
	}
	s.pf = pf
	md := pf.MetaData()
	sch := md.Schema

	// Resolve columns by name (exact, then case-insensitive), or by
	// Iceberg field id (-1: the file lacks the column, which reads NULL).
	leaves := make([]int, len(n.Scan.Columns))
	byID := fieldIDLeaves(sch, n.Scan.FieldIDs)
	for i, name := range n.Scan.Columns {
		if byID != nil {
			idx, ok := byID[n.Scan.FieldIDs[i]]
			if !ok {
				idx = -1
			}
			leaves[i] = idx
			s.outT = append(s.outT, n.Schema[i].Type)
			if idx >= 0 {
				s.colRead = append(s.colRead, []int{idx})
			} else {
				s.colRead = append(s.colRead, nil)
			}
			continue
		}
		s.outT = append(s.outT, n.Schema[i].Type)
		if i < len(n.Scan.Paths) && len(n.Scan.Paths[i]) > 0 {
			// A struct field: the leaves under it only.
			if s.paths == nil {
				s.paths = make([][]string, len(n.Scan.Columns))
			}
			s.paths[i] = n.Scan.Paths[i]
			pl, stat, err := pathLeaves(sch, name, n.Scan.Paths[i])
			if err != nil {
				return fail("column %q: %v", n.Scan.ColumnName(i), err)
			}
			if pl == nil {
				return fail("column %q not found in file", name)
			}
			if n.Schema[i].Type.IsNested() {
				stat = -1
			}
			leaves[i] = stat // the leaf's statistics are the field's values'
			s.colRead = append(s.colRead, pl)
			continue
		}
		if n.Schema[i].Type.IsNested() {
			// Every leaf of the top-level field (a LIST, MAP or STRUCT).
			nl := nestedLeaves(sch, name)
			if nl == nil {
				return fail("column %q not found in file", name)
			}
			leaves[i] = -1 // no statistics for a nested column
			s.colRead = append(s.colRead, nl)
			continue
		}
		idx := sch.ColumnIndexByName(name)
		if idx < 0 {
			for j := 0; j < sch.NumColumns(); j++ {
				if strings.EqualFold(sch.Column(j).Path(), name) {
					idx = j
					break
				}
			}
		}
		if idx < 0 {
			return fail("column %q not found in file", name)
		}
		if len(sch.Column(idx).ColumnPath()) != 1 {
			return fail("column %q is nested in the file but not in the table", name)
		}
		leaves[i] = idx
		s.colRead = append(s.colRead, []int{idx})
	}

	if len(n.Scan.Fields) > 0 && byID == nil {
		// Lists of structs read with some of their elements' fields:
		// only the leaves under those.
		m, err := pqarrow.NewSchemaManifest(sch, nil, &pqarrow.ArrowReadProperties{})
		if err != nil {
			return fail("schema: %v", err)
		}
		for i, fs := range n.Scan.Fields {
			if fs == nil || s.colRead[i] == nil {
				continue
			}
			var path []string
			if s.paths != nil {
				path = s.paths[i]
			}
			if ls, ok := elemFieldLeaves(m, n.Scan.Columns[i], path, fs); ok {
				if s.sparse == nil {
					s.sparse = make([]bool, len(n.Scan.Columns))
				}
				s.colRead[i], s.sparse[i] = ls, true
			}
		}
	}

	// fieldLeaf resolves a struct field of a column that a filter names
	// (s.a over s read whole) to its leaf, for its statistics.
	fieldLeafs := map[string]int{}
	fieldLeaf := func(c int, path []string) int {
		if byID != nil || c < 0 || c >= len(n.Scan.Columns) || !s.outT[c].IsNested() {
			return -1
		}
		if s.paths != nil && s.paths[c] != nil {
			path = append(slices.Clone(s.paths[c]), path...)
		}
		key := fmt.Sprintf("%d %q", c, path)
		if l, ok := fieldLeafs[key]; ok {
			return l
		}
		_, stat, err := pathLeaves(sch, n.Scan.Columns[c], path)
		if err != nil {
			stat = -1
		}
		fieldLeafs[key] = stat
		return stat
	}

	// Row groups to read, minus those the statistics rule out.
	nrg := md.NumRowGroups()
	if rowGroups == nil {
		rowGroups = make([]int, nrg)
		for i := range rowGroups {
			rowGroups[i] = i
		}
	}
	for _, rg := range rowGroups {
		if rg < 0 || rg >= nrg {
			return fail("row group %d out of range (file has %d)", rg, nrg)
		}
		if n.Scan.Filter != nil && !mayMatch(n.Scan.Filter, &rgStats{md: md.RowGroup(rg), leaves: leaves, outT: s.outT, field: fieldLeaf}) {
			s.pruned++
			continue
		}
		s.rowGroups = append(s.rowGroups, rg)
	}
	s.md, s.colLeaves, s.src0 = md, leaves, r
	if len(s.rowGroups) == 0 {
		s.done = true
	}
	return s, nil
}

// start prepares the reading of the row groups left to read (after
// FoldStats took its own): called by the first Next.
func (s *ParquetScan) start(ctx context.Context) error {
	s.started = true
	s.pruneRanges()
	if len(s.rowGroups) == 0 {
		s.done = true
		return nil
	}
	md, opts := s.md, s.opts
	if !slices.ContainsFunc(s.colRead, func(l []int) bool { return l != nil }) {
		for _, rg := range s.rowGroups {
			first, n := s.rowGroupStart(rg), md.RowGroup(rg).NumRows()
			s.zeroRows += n
			for p := range s.deleted {
				if p >= first && p < first+n {
					s.zeroRows--
				}
			}
		}
		return nil
	}

	// Distinct top-level fields in first-use order, each named by its
	// first leaf (the record reader returns one column per field, in this
	// order); output columns map onto them (-1: a column the file lacks,
	// all NULL). all is every leaf read.
	var uniq, all []int
	pos := map[int]int{} // top-level field -> record reader column
	s.late = s.planLate()
	for i, ls := range s.colRead {
		if ls == nil {
			s.readCol = append(s.readCol, -1)
			continue
		}
		if s.late != nil && s.late.byOut[i] >= 0 {
			s.readCol = append(s.readCol, -1) // decoded late
			continue
		}
		root := md.Schema.Root().FieldIndexByField(md.Schema.ColumnRoot(ls[0]))
		if _, ok := pos[root]; !ok {
			pos[root] = len(uniq)
			uniq = append(uniq, ls[0])
		}
		for _, l := range ls {
			if !slices.Contains(all, l) {
				all = append(all, l)
			}
		}
		s.readCol = append(s.readCol, pos[root])
	}
	if s.late != nil && len(uniq) == 0 {
		// Every column is decoded by the fast path: batches are cut by
		// row count.
		for _, rg := range s.rowGroups {
			s.late.left += md.RowGroup(rg).NumRows()
		}
		if p, ok := s.src0.(prefetcher); ok {
			var leaves []int
			for _, c := range s.late.cols {
				leaves = append(leaves, c.leaf)
			}
			p.Prefetch(chunkRanges(md, s.rowGroups, leaves))
			s.ahead = p
		}
		return nil
	}
	props := pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchRows)}
	for _, l := range uniq {
		if len(md.Schema.Column(l).ColumnPath()) == 1 && dictionaryOnly(md, s.rowGroups, l) {
			// Read the indices and each dictionary once, then gather the
			// strings (toEngineLayout): far cheaper than arrow-go
			// appending every value to a builder.
			props.SetReadDict(l, true)
		}
	}
	fr, err := pqarrow.NewFileReader(s.pf, props, opts.Mem)
	if err != nil {
		return fmt.Errorf("exec: parquet scan of %s: %w", s.table, err)
	}
	if s.sparse != nil || s.paths != nil {
		pruneMaps(fr.Manifest, all)
	}
	s.rawDecimal = rawDecimals(fr.Manifest, md, uniq)
	rr, err := fr.GetRecordReader(ctx, all, s.rowGroups)
	if err != nil {
		return fmt.Errorf("exec: parquet scan of %s: %w", s.table, err)
	}
	s.rr, s.fr, s.leaves = rr, fr, all
	if p, ok := s.src0.(prefetcher); ok {
		// Fetch the column chunks ahead, coalesced, several at a time:
		// the record reader asks for them one by one and would wait for
		// each request's first byte.
		ranges := all
		if s.late != nil {
			ranges = slices.Clone(all)
			for _, c := range s.late.cols {
				ranges = append(ranges, c.leaf)
			}
		}
		p.Prefetch(chunkRanges(md, s.rowGroups, ranges))
		s.ahead = p
	}
	return nil
}

// nestedLeaves returns the leaves of the top-level field named name (as
// written, else regardless of case), nil when the file has none.
func nestedLeaves(sch *schema.Schema, name string) []int {
	root := sch.Root()
	fi := root.FieldIndexByName(name)
	if fi < 0 {
		for j := 0; j < root.NumFields(); j++ {
			if strings.EqualFold(root.Field(j).Name(), name) {
				fi = j
				break
			}
		}
	}
	if fi < 0 {
		return nil
	}
	node := root.Field(fi)
	var out []int
	for j := 0; j < sch.NumColumns(); j++ {
		if sch.ColumnRoot(j) == node {
			out = append(out, j)
		}
	}
	return out
}

// rawDecimals makes the reader hand decimal columns stored as INT64 over
// as their raw int64 values (zero-copy), which are the engine's decimal64
// layout, instead of widening each to a decimal128 that the scan narrows
// back. It returns, per column of the record reader (uniq's order), the
// decimal type to relabel such a column with (nil for the others).
func rawDecimals(m *pqarrow.SchemaManifest, md *metadata.FileMetaData, uniq []int) []arrow.DataType {
	var out []arrow.DataType
	for i := range m.Fields {
		f := &m.Fields[i]
		if !f.IsLeaf() || f.Field == nil {
			continue
		}
		pos := slices.Index(uniq, f.ColIndex)
		dt, ok := f.Field.Type.(*arrow.Decimal128Type)
		if pos < 0 || !ok || dt.Precision > plan.MaxDecimal64Precision || md.Schema.Column(f.ColIndex).PhysicalType() != parquet.Types.Int64 {
			continue
		}
		if out == nil {
			out = make([]arrow.DataType, len(uniq))
		}
		nf := *f.Field
		nf.Type = arrow.PrimitiveTypes.Int64
		f.Field = &nf
		out[pos] = &arrow.Decimal64Type{Precision: dt.Precision, Scale: dt.Scale}
	}
	return out
}

// dictionaryOnly reports whether leaf is a BYTE_ARRAY column whose data
// pages are all dictionary-encoded in every row group of rowGroups (a
// chunk that fell back to plain pages would be re-dictionaried value by
// value on a dictionary read).
func dictionaryOnly(md *metadata.FileMetaData, rowGroups []int, leaf int) bool {
	if md.Schema.Column(leaf).PhysicalType() != parquet.Types.ByteArray {
		return false
	}
	for _, rg := range rowGroups {
		cc, err := md.RowGroup(rg).ColumnChunk(leaf)
		if err != nil || !cc.HasDictionaryPage() {
			return false
		}
		stats := cc.EncodingStats()
		if len(stats) == 0 {
			// No page statistics (DuckDB writes none): the chunk's
			// encodings must all be dictionary or level encodings, so
			// no page of it is plain.
			for _, e := range cc.Encodings() {
				switch e {
				case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict, parquet.Encodings.RLE, parquet.Encodings.BitPacked:
				default:
					return false
				}
			}
			continue
		}
		for _, st := range stats {
			if pt := st.PageType.String(); pt != "DATA_PAGE" && pt != "DATA_PAGE_V2" {
				continue
			}
			if st.Encoding != parquet.Encodings.RLEDict && st.Encoding != parquet.Encodings.PlainDict {
				return false
			}
		}
	}
	return true
}

// fieldIDLeaves maps the Iceberg field ids of a file's top-level
// primitive columns to their leaves; nil when ids is nil, or when the file
// has no field ids at all (columns are then found by name).
func fieldIDLeaves(sch *schema.Schema, ids []int) map[int]int {
	if ids == nil {
		return nil
	}
	out := map[int]int{}
	for j := 0; j < sch.NumColumns(); j++ {
		c := sch.Column(j)
		if len(c.ColumnPath()) != 1 {
			continue
		}
		if id := c.SchemaNode().FieldID(); id >= 0 {
			out[int(id)] = j
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// SetDeleted makes the scan drop the rows at the given positions of the
// file (Iceberg position deletes, counted from the file's first row). It
// is called before the first Next, and never with FoldStats.
func (s *ParquetScan) SetDeleted(pos map[int64]bool) {
	if len(pos) == 0 || s.md == nil {
		return
	}
	s.deleted = pos
}

// EmitDictionaries makes the scan hand the String columns cols (indexes in
// its schema) over as dictionary arrays (int32 indices into an engine
// String dictionary) where the file's chunks of them are dictionary-only,
// instead of gathering one string per row: for an aggregation that groups
// by them (hashagg_dict.go). It is called before the first Next; a scan
// with deleted rows keeps plain strings.
func (s *ParquetScan) EmitDictionaries(cols []int) bool {
	if s.started || s.deleted != nil {
		return false
	}
	s.dictOut = make([]bool, len(s.outT))
	any := false
	for _, c := range cols {
		if c >= 0 && c < len(s.outT) && s.outT[c].ID == plan.String && !s.outT[c].IsNested() {
			s.dictOut[c], any = true, true
		}
	}
	if !any {
		s.dictOut = nil
	}
	return any
}

// TakeBloom makes the scan test a runtime filter's Bloom filter on its
// column p.Column with the filter's other conjuncts, before it decodes
// the other columns (BloomTaker). It is called before the first Next; a
// scan with deleted rows, or one the adaptive switch turns into one
// pass, leaves it to the Filter above.
func (s *ParquetScan) TakeBloom(p *plan.BloomProbe) bool {
	if s.started || s.deleted != nil || p == nil || p.Column < 0 || p.Column >= len(s.outT) {
		return false
	}
	s.blooms = append(s.blooms, p)
	return true
}

// TakeRange makes the scan skip the row groups whose statistics put
// output column col wholly outside [lo, hi] (values of the column's type),
// unread (RangeTaker). It is called before the first Next. Rows are not
// tested: the caller drops the ones outside the range itself.
func (s *ParquetScan) TakeRange(col int, lo, hi plan.Value) bool {
	if s.started || col < 0 || col >= len(s.outT) || col >= len(s.n.Schema) {
		return false
	}
	t := s.outT[col]
	c := plan.Column(col, s.n.Schema[col].Name, t)
	s.ranges = append(s.ranges, plan.Call(plan.OpAnd, plan.BoolType,
		plan.Call(plan.OpGe, plan.BoolType, c, plan.Literal(lo, t)),
		plan.Call(plan.OpLe, plan.BoolType, c, plan.Literal(hi, t))))
	return true
}

// pruneRanges drops the row groups left to read that a range TakeRange
// gave rules out by their statistics.
func (s *ParquetScan) pruneRanges() {
	if len(s.ranges) == 0 {
		return
	}
	e := s.ranges[0]
	if len(s.ranges) > 1 {
		e = plan.Call(plan.OpAnd, plan.BoolType, s.ranges...)
	}
	kept := make([]int, 0, len(s.rowGroups))
	for _, rg := range s.rowGroups {
		if !mayMatch(e, &rgStats{md: s.md.RowGroup(rg), leaves: s.colLeaves, outT: s.outT}) {
			s.pruned++
			s.rangePruned++
			continue
		}
		kept = append(kept, rg)
	}
	s.rowGroups = kept
}

// JoinRangePruned is the row groups a range from TakeRange left unread
// (JoinRangePruner).
func (s *ParquetScan) JoinRangePruned() int64 { return int64(s.rangePruned) }

// HasFilterOn reports whether the scan tests a Bloom filter on output
// column col, or carries a runtime filter of the plan on it (BloomHolder).
func (s *ParquetScan) HasFilterOn(col int) bool {
	return hasFilterOn(s.n, s.blooms, col)
}

// hasFilterOn reports whether scan node n carries a runtime filter on
// column col, or blooms hold a Bloom filter on it.
func hasFilterOn(n *plan.Node, blooms []*plan.BloomProbe, col int) bool {
	for _, p := range blooms {
		if p.Column == col {
			return true
		}
	}
	if n != nil && n.Scan != nil {
		for _, f := range n.Scan.RuntimeFilters {
			if f.Column == col {
				return true
			}
		}
	}
	return false
}

// HasFilterOn is ParquetScan.HasFilterOn for a scan node n whose files
// an operator of another package opens one after the other.
func HasFilterOn(n *plan.Node, blooms []*plan.BloomProbe, col int) bool {
	return hasFilterOn(n, blooms, col)
}

// engineDictionary returns a dictionary array read from the file in the
// engine's dictionary layout (int32 indices, checked, into a String
// dictionary without NULLs), or nil when it has another shape.
func engineDictionary(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	d, ok := a.(*array.Dictionary)
	if !ok {
		return nil, nil
	}
	ix, ok := d.Indices().(*array.Int32)
	if !ok || d.Dictionary().NullN() > 0 {
		return nil, nil
	}
	vals, err := toEngineLayout(mem, d.Dictionary())
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	if vals.DataType().ID() != arrow.STRING {
		return nil, nil
	}
	nvals := int32(vals.Len())
	vb, voff := validityOf(ix)
	for i, j := range ix.Int32Values() {
		if (j < 0 || j >= nvals) && isValid(vb, voff, i) {
			return nil, fmt.Errorf("dictionary index %d out of range (%d values)", j, nvals)
		}
	}
	return array.NewDictionaryArray(engineDictType, ix, vals), nil
}

// engineDictType is the type of the dictionary arrays a scan emits.
var engineDictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// rowGroupStart is the position in the file of row group rg's first row.
func (s *ParquetScan) rowGroupStart(rg int) int64 {
	var n int64
	for i := 0; i < rg; i++ {
		n += s.md.RowGroup(i).NumRows()
	}
	return n
}

// kept returns the indexes of the rows of the next nrows read that are
// not deleted (nil: all are kept), advancing the position.
func (s *ParquetScan) kept(nrows int) []int32 {
	if s.deleted == nil {
		return nil
	}
	keep := make([]int32, 0, nrows)
	first := s.rowGroupStart(s.rowGroups[min(s.cur, len(s.rowGroups)-1)])
	for r := 0; r < nrows; r++ {
		for s.cur < len(s.rowGroups) && s.curOff >= s.md.RowGroup(s.rowGroups[s.cur]).NumRows() {
			s.cur++
			s.curOff = 0
			if s.cur < len(s.rowGroups) {
				first = s.rowGroupStart(s.rowGroups[s.cur])
			}
		}
		if !s.deleted[first+s.curOff] {
			keep = append(keep, int32(r))
		}
		s.curOff++
	}
	if len(keep) == nrows {
		return nil
	}
	return keep
}

// ErrCorruptFile is matched by the error of a scan whose file does not
// decode (while every read of it succeeded).
var ErrCorruptFile = errors.New("corrupt Parquet file")

// readErr describes a failed read of the record reader: when the bytes
// were read fine, the file is corrupt, and the column whose pages do not
// decode is found by reading each column alone.
func (s *ParquetScan) readErr(ctx context.Context, err error) error {
	if s.src.ioErr.Load() || ctx.Err() != nil {
		return fmt.Errorf("exec: parquet scan of %s: %w", s.table, err)
	}
	for _, leaf := range s.leaves {
		rr, cerr := s.fr.GetRecordReader(ctx, []int{leaf}, s.rowGroups)
		if cerr == nil {
			for rr.Next() {
			}
			cerr = rr.Err()
			rr.Release()
		}
		if s.src.ioErr.Load() {
			break // the storage failed meanwhile: say nothing about pages
		}
		if cerr != nil {
			return plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("exec: parquet scan of %s: %w: corrupt page in column %s: %v", s.table, ErrCorruptFile,
				s.pf.MetaData().Schema.Column(leaf).Path(), cerr))
		}
	}
	return plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("exec: parquet scan of %s: %w: %v", s.table, ErrCorruptFile, err))
}

// Pruned reports how many row groups the scan skipped from statistics.
func (s *ParquetScan) Pruned() int { return s.pruned }

// BytesRead reports the bytes read from the file so far.
func (s *ParquetScan) BytesRead() int64 { return s.src.n.Load() }

// RowGroups lists the row groups the scan reads (after pruning).
func (s *ParquetScan) RowGroups() []int { return s.rowGroups }

func (s *ParquetScan) Schema() *arrow.Schema { return s.schema }

func (s *ParquetScan) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.ahead != nil {
		s.ahead.Close()
	}
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	if s.late != nil {
		for _, d := range s.late.dconj {
			d.release()
		}
		for _, c := range s.late.cols {
			c.release()
			c.closeOwn()
			c.closeSpare()
		}
		s.late.fixed.close()
	}
	if s.pf != nil {
		return s.pf.Close()
	}
	return nil
}

func (s *ParquetScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.started && !s.done && !s.closed {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	if s.done || s.closed {
		return nil, io.EOF
	}
	if s.late != nil {
		return s.nextLate(ctx)
	}
	if s.rr == nil { // zero columns: row counts only
		if s.zeroRows == 0 {
			s.done = true
			return nil, io.EOF
		}
		k := min(s.zeroRows, int64(s.opts.BatchRows))
		s.zeroRows -= k
		var cols []arrow.Array
		for _, f := range s.schema.Fields() { // columns the file lacks
			cols = append(cols, array.MakeArrayOfNull(s.opts.Mem, f.Type, int(k)))
		}
		out := array.NewRecordBatch(s.schema, cols, k)
		releaseAll(cols)
		return out, nil
	}
	for {
		if !s.rr.Next() {
			s.done = true
			if err := s.rr.Err(); err != nil {
				return nil, s.readErr(ctx, err)
			}
			return nil, io.EOF
		}
		rec := s.rr.RecordBatch()
		nrows := int(rec.NumRows())
		if nrows == 0 {
			continue
		}
		keep := s.kept(nrows)
		if keep != nil && len(keep) == 0 {
			continue
		}
		cols := make([]arrow.Array, len(s.readCol))
		if s.dictOut != nil {
			s.isDict = slices.Grow(s.isDict[:0], len(cols))[:len(cols)]
			clear(s.isDict)
		}
		for i, rc := range s.readCol {
			if rc < 0 {
				cols[i] = array.MakeArrayOfNull(s.opts.Mem, s.schema.Field(i).Type, nrows)
				continue
			}
			in := rec.Column(rc)
			if s.paths != nil && s.paths[i] != nil {
				f, err := extractPath(s.opts.Mem, in, s.paths[i])
				if err != nil {
					releaseAll(cols)
					return nil, fmt.Errorf("exec: parquet scan of %s: column %q: %w", s.table, s.n.Scan.ColumnName(i), err)
				}
				in = f
				defer f.Release()
			}
			if s.dictOut != nil && s.dictOut[i] && keep == nil {
				d, err := engineDictionary(s.opts.Mem, in)
				if err != nil {
					releaseAll(cols)
					return nil, fmt.Errorf("exec: parquet scan of %s: column %q: %w", s.table, s.n.Scan.Columns[i], err)
				}
				if d != nil {
					cols[i] = d
					s.isDict[i] = true
					continue
				}
			}
			if s.rawDecimal != nil && s.rawDecimal[rc] != nil {
				dt := s.rawDecimal[rc]
				in = relabel(in, dt)
				defer in.Release()
			}
			c, err := s.toEngineCol(i, in)
			if err != nil {
				releaseAll(cols)
				return nil, fmt.Errorf("exec: parquet scan of %s: column %q: %w", s.table, s.n.Scan.Columns[i], err)
			}
			cols[i] = c
		}
		schema := s.schema
		if s.dictOut != nil {
			schema = s.batchSchema(s.isDict)
		}
		out, err := conformRecord(s.opts.Mem, schema, cols, nrows)
		if err != nil {
			return nil, fmt.Errorf("exec: parquet scan of %s: %w", s.table, err)
		}
		if keep != nil {
			kept, err := takeRecord(s.opts.Mem, out, keep)
			out.Release()
			if err != nil {
				return nil, fmt.Errorf("exec: parquet scan of %s: %w", s.table, err)
			}
			return kept, nil
		}
		return out, nil
	}
}

// batchSchema is the schema of a batch whose columns isDict are
// dictionary arrays: the scan's own when there is none, else made once per
// set of such columns.
func (s *ParquetScan) batchSchema(isDict []bool) *arrow.Schema {
	if !slices.Contains(isDict, true) {
		return s.schema
	}
	if s.dictSchema != nil && slices.Equal(isDict, s.dictMask) {
		return s.dictSchema
	}
	fields := s.schema.Fields()
	for i, d := range isDict {
		if d {
			fields[i].Type = engineDictType
		}
	}
	md := s.schema.Metadata()
	s.dictSchema, s.dictMask = arrow.NewSchema(fields, &md), slices.Clone(isDict)
	return s.dictSchema
}

// ---- conversion to engine types ---------------------------------------------

// toEngineCol converts output column i as read to its engine type.
func (s *ParquetScan) toEngineCol(i int, in arrow.Array) (arrow.Array, error) {
	if s.sparse != nil && s.sparse[i] {
		return toEngineSparse(s.opts.Mem, in, s.outT[i])
	}
	return toEngine(s.opts.Mem, in, s.outT[i])
}

// toEngine converts an array as read from a file to engine type t.
func toEngine(mem memory.Allocator, a arrow.Array, t plan.DataType) (arrow.Array, error) {
	if t.IsNested() {
		return nestedToEngine(mem, a, t)
	}
	e, err := toEngineLayout(mem, a)
	if err != nil {
		return nil, err
	}
	defer e.Release()
	et := typeOfArrow(e.DataType())
	if sameType(et, t) || et.ID == plan.Null {
		return conform(mem, e, t.Arrow())
	}
	return castArray(mem, e, t)
}

// toEngineLayout converts a to the engine layout of its own type.
func toEngineLayout(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	n := a.Len()
	widen := func(x func(i int) int64) arrow.Array {
		buf, out := newFixed[int64](mem, n)
		for i := range out {
			out[i] = x(i)
		}
		return makeArray(arrow.PrimitiveTypes.Int64, n, copyValidity(mem, a), buf)
	}
	switch tt := a.DataType().(type) {
	case *arrow.BooleanType, *arrow.Int64Type, *arrow.Float64Type, *arrow.Date32Type, *arrow.StringType,
		*arrow.Decimal64Type, *arrow.NullType:
		a.Retain()
		return a, nil
	case *arrow.BinaryType:
		return relabel(a, arrow.BinaryTypes.String), nil
	case *arrow.Int8Type:
		x := values[int8](a)
		return widen(func(i int) int64 { return int64(x[i]) }), nil
	case *arrow.Int16Type:
		x := values[int16](a)
		return widen(func(i int) int64 { return int64(x[i]) }), nil
	case *arrow.Int32Type:
		x := values[int32](a)
		return widen(func(i int) int64 { return int64(x[i]) }), nil
	case *arrow.Uint8Type:
		x := values[uint8](a)
		return widen(func(i int) int64 { return int64(x[i]) }), nil
	case *arrow.Uint16Type:
		x := values[uint16](a)
		return widen(func(i int) int64 { return int64(x[i]) }), nil
	case *arrow.Uint32Type:
		x := values[uint32](a)
		return widen(func(i int) int64 { return int64(x[i]) }), nil
	case *arrow.Uint64Type:
		x := values[uint64](a)
		vb, voff := validityOf(a)
		for i, v := range x {
			if v > math.MaxInt64 && isValid(vb, voff, i) {
				return nil, fmt.Errorf("%w: uint64 value %d does not fit int64", ErrIntegerOverflow, v)
			}
		}
		return widen(func(i int) int64 { return int64(x[i]) }), nil
	case *arrow.Float32Type:
		x := values[float32](a)
		buf, out := newFixed[float64](mem, n)
		for i := range out {
			out[i] = float64(x[i])
		}
		return makeArray(arrow.PrimitiveTypes.Float64, n, copyValidity(mem, a), buf), nil
	case *arrow.Date64Type:
		x := values[int64](a)
		buf, out := newFixed[int32](mem, n)
		for i := range out {
			ms := x[i]
			d := ms / 86400000
			if ms%86400000 < 0 {
				d--
			}
			out[i] = int32(d)
		}
		return makeArray(arrow.FixedWidthTypes.Date32, n, copyValidity(mem, a), buf), nil
	case *arrow.Decimal32Type:
		x := values[int32](a)
		buf, out := newFixed[int64](mem, n)
		for i := range out {
			out[i] = int64(x[i])
		}
		return makeArray(&arrow.Decimal64Type{Precision: tt.Precision, Scale: tt.Scale}, n, copyValidity(mem, a), buf), nil
	case *arrow.Decimal128Type:
		if tt.Precision > plan.MaxDecimal64Precision {
			a.Retain() // wide decimals keep the 128-bit layout
			return a, nil
		}
		nums := a.(*array.Decimal128).Values()
		vb, voff := validityOf(a)
		buf, out := newFixed[int64](mem, n)
		for i, v := range nums {
			lo, hi := int64(v.LowBits()), v.HighBits()
			if hi != lo>>63 && isValid(vb, voff, i) {
				buf.Release()
				return nil, fmt.Errorf("%w: decimal128 value out of 64-bit range", plan.ErrDecimalOverflow)
			}
			out[i] = lo
		}
		return makeArray(&arrow.Decimal64Type{Precision: tt.Precision, Scale: tt.Scale}, n, copyValidity(mem, a), buf), nil
	case *arrow.TimestampType:
		return timestampToMicros(mem, a, tt)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		d := a.Data()
		offs := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+n+1]
		if offs[n]-offs[0] > math.MaxInt32 {
			return nil, fmt.Errorf("string column chunk exceeds 2 GiB")
		}
		obuf, o32 := newFixed[int32](mem, n+1)
		base := offs[0]
		for i, o := range offs {
			o32[i] = int32(o - base)
		}
		var data []byte
		if len(d.Buffers()) > 2 && d.Buffers()[2] != nil {
			data = d.Buffers()[2].Bytes()[base:offs[n]]
		}
		dbuf := newBuf(mem, len(data))
		copy(dbuf.Bytes(), data)
		return makeArray(arrow.BinaryTypes.String, n, copyValidity(mem, a), obuf, dbuf), nil
	case arrow.ExtensionType:
		if !plan.IsUUID(tt) {
			break
		}
		// A UUID as its canonical text: 8-4-4-4-12 lower-case hex digits.
		st := a.(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
		sb := newStrBuilder(mem, n, n*36)
		var buf [36]byte
		for i := 0; i < n; i++ {
			if st.IsNull(i) {
				sb.appendEmpty()
				continue
			}
			sb.append(uuidText(buf[:], st.Value(i)))
		}
		return sb.finish(copyValidity(mem, a))
	case *arrow.DictionaryType:
		dict := a.(*array.Dictionary)
		vals, err := toEngineLayout(mem, dict.Dictionary())
		if err != nil {
			return nil, err
		}
		defer vals.Release()
		idx := make([]int32, n)
		vb, voff := validityOf(a)
		nvals := vals.Len()
		if i32, ok := dict.Indices().(*array.Int32); ok {
			raw := i32.Int32Values()
			for i, j := range raw {
				switch {
				case !isValid(vb, voff, i):
					idx[i] = -1
				case j < 0 || int(j) >= nvals:
					return nil, fmt.Errorf("dictionary index %d out of range (%d values)", j, nvals)
				default:
					idx[i] = j
				}
			}
			return takeNullable(mem, vals, idx)
		}
		for i := 0; i < n; i++ {
			if !isValid(vb, voff, i) {
				idx[i] = -1
				continue
			}
			j := dict.GetValueIndex(i)
			if j < 0 || j >= nvals {
				return nil, fmt.Errorf("dictionary index %d out of range (%d values)", j, nvals)
			}
			idx[i] = int32(j)
		}
		return takeNullable(mem, vals, idx)
	}
	return nil, fmt.Errorf("unsupported column type %s", a.DataType())
}

// uuidText writes the canonical text of the 16-byte UUID u into buf (36
// bytes) and returns it.
func uuidText(buf []byte, u []byte) []byte {
	const hex = "0123456789abcdef"
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf[j] = '-'
			j++
		}
		buf[j], buf[j+1] = hex[c>>4], hex[c&15]
		j += 2
	}
	return buf[:36]
}
