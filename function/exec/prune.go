package exec

import (
	"bytes"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/sluicedb/sluice/planner/plan"
)

// Row-group pruning: a row group is skipped when its column statistics
// prove the scan filter cannot be TRUE for any row. Understood: AND / OR of
// comparisons column <op> literal (either side), IN lists of literals over a
// column, constant FALSE/NULL; on int64, decimal, date and string columns.
// Anything else keeps the row group.

type rgStats struct {
	md     *metadata.RowGroupMetaData
	leaves []int           // output column -> parquet leaf
	outT   []plan.DataType // output column -> engine type
	cache  map[int]*colRange
	// field, when set, resolves a struct field of an output column
	// (struct_extract chains in the filter) to the leaf whose statistics
	// are its values' (-1: none); fcache keeps their ranges by leaf.
	field  func(col int, path []string) int
	fcache map[int]*colRange
}

// colRange is what the statistics of one column chunk tell.
type colRange struct {
	ok       bool // min/max known
	allNull  bool
	isStr    bool
	min, max int64 // int-like values (decimals unscaled at scale)
	scale    int
	smin     []byte
	smax     []byte
}

func (r *rgStats) col(c int) *colRange {
	if cr, ok := r.cache[c]; ok {
		return cr
	}
	if r.cache == nil {
		r.cache = map[int]*colRange{}
	}
	if c < 0 || c >= len(r.leaves) || r.leaves[c] < 0 {
		cr := &colRange{}
		r.cache[c] = cr
		return cr
	}
	cr := r.leafRange(r.leaves[c], r.outT[c])
	r.cache[c] = cr
	return cr
}

// operand is the range of a comparison's column side: an output column,
// or a struct field of one (struct_extract chain); ok false for another
// expression.
func (r *rgStats) operand(e *plan.Expr) (*colRange, bool) {
	if e.Op == plan.OpColumn {
		return r.col(e.Col), true
	}
	c, path, ok := structField(e)
	if !ok || r.field == nil || e.Type.IsNested() {
		return nil, false
	}
	leaf := r.field(c, path)
	if leaf < 0 {
		return &colRange{}, true
	}
	if cr, ok := r.fcache[leaf]; ok {
		return cr, true
	}
	if r.fcache == nil {
		r.fcache = map[int]*colRange{}
	}
	cr := r.leafRange(leaf, e.Type)
	r.fcache[leaf] = cr
	return cr, true
}

// structField reports whether e is a struct field of a column,
// struct_extract(...struct_extract(column, 'f1')..., 'fn'), and returns the
// column and f1..fn.
func structField(e *plan.Expr) (int, []string, bool) {
	var path []string
	for e.Op == plan.OpFunc && e.Func == "struct_extract" && len(e.Args) == 2 {
		l := e.Args[1]
		if l.Op != plan.OpLiteral || l.Value == nil || l.Value.Null || l.Type.ID != plan.String {
			return 0, nil, false
		}
		path = append([]string{l.Value.S}, path...)
		e = e.Args[0]
	}
	if len(path) == 0 || e.Op != plan.OpColumn {
		return 0, nil, false
	}
	return e.Col, path, true
}

// leafRange reads the statistics of leaf as values of engine type want.
func (r *rgStats) leafRange(leaf int, want plan.DataType) *colRange {
	cr := &colRange{}
	cc, err := r.md.ColumnChunk(leaf)
	if err != nil {
		return cr
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		return cr
	}
	if st.HasNullCount() && st.NullCount() >= r.md.NumRows() && r.md.NumRows() > 0 {
		cr.allNull = true
	}
	if !st.HasMinMax() {
		return cr
	}
	lt := st.Descr().LogicalType()
	dec, isDec := lt.(schema.DecimalLogicalType)
	if isDec {
		cr.scale = int(dec.Scale())
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		if want.ID != plan.Int64 && want.ID != plan.Decimal && want.ID != plan.Date {
			return cr
		}
		cr.min, cr.max = int64(s.Min()), int64(s.Max())
		if it, ok := lt.(schema.IntLogicalType); ok && !it.IsSigned() {
			cr.min, cr.max = int64(uint32(s.Min())), int64(uint32(s.Max()))
		}
		cr.ok = true
	case *metadata.Int64Statistics:
		if want.ID != plan.Int64 && want.ID != plan.Decimal {
			return cr
		}
		if it, ok := lt.(schema.IntLogicalType); ok && !it.IsSigned() {
			return cr
		}
		cr.min, cr.max = s.Min(), s.Max()
		cr.ok = true
	case *metadata.ByteArrayStatistics:
		if isDec {
			return decRange(cr, s.Min(), s.Max())
		}
		if want.ID != plan.String {
			return cr
		}
		cr.isStr, cr.smin, cr.smax, cr.ok = true, s.Min(), s.Max(), true
	case *metadata.FixedLenByteArrayStatistics:
		if isDec {
			return decRange(cr, s.Min(), s.Max())
		}
	}
	return cr
}

func decRange(cr *colRange, lo, hi []byte) *colRange {
	a, ok1 := beInt64(lo)
	b, ok2 := beInt64(hi)
	if ok1 && ok2 {
		cr.min, cr.max, cr.ok = a, b, true
	}
	return cr
}

// beInt64 decodes a big-endian two's complement integer of up to 16 bytes
// that fits in an int64.
func beInt64(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if len(b) > 8 {
		sign := byte(0)
		if b[len(b)-8]&0x80 != 0 {
			sign = 0xff
		}
		for _, c := range b[:len(b)-8] {
			if c != sign {
				return 0, false
			}
		}
		b = b[len(b)-8:]
	}
	v := int64(int8(b[0]))
	for _, c := range b[1:] {
		v = v<<8 | int64(c)
	}
	return v, true
}

// mayMatch reports whether e can be TRUE for some row of the row group.
func mayMatch(e *plan.Expr, st *rgStats) bool {
	if e == nil {
		return true
	}
	switch e.Op {
	case plan.OpAnd:
		for _, a := range e.Args {
			if !mayMatch(a, st) {
				return false
			}
		}
		return true
	case plan.OpOr:
		for _, a := range e.Args {
			if mayMatch(a, st) {
				return true
			}
		}
		return len(e.Args) == 0
	case plan.OpLiteral:
		if e.Type.ID == plan.Null || (e.Type.ID == plan.Bool && e.Value != nil && (e.Value.Null || !e.Value.B)) || e.Value == nil {
			return false
		}
		return true
	case plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		if len(e.Args) != 2 {
			return true
		}
		col, lit, op := e.Args[0], e.Args[1], e.Op
		if col.Op == plan.OpLiteral && lit.Op != plan.OpLiteral {
			col, lit, op = lit, col, op.Flipped()
		}
		if lit.Op != plan.OpLiteral {
			return true
		}
		cr, ok := st.operand(col)
		if !ok {
			return true
		}
		return cr.may(op, lit)
	case plan.OpIn:
		if e.Negated || len(e.Args) < 2 {
			return true
		}
		cr, ok := st.operand(e.Args[0])
		if !ok {
			return true
		}
		for _, l := range e.Args[1:] {
			if l.Op != plan.OpLiteral || cr.may(plan.OpEq, l) {
				return true
			}
		}
		return false
	}
	return true
}

// may reports whether column <op> lit can be TRUE for some value in range.
func (cr *colRange) may(op plan.Op, lit *plan.Expr) bool {
	if cr.allNull {
		return false // comparisons with NULL are never TRUE
	}
	if lit.Value == nil || lit.Value.Null || lit.Type.ID == plan.Null {
		return false
	}
	if !cr.ok {
		return true
	}
	var lo, hi int
	if cr.isStr {
		if lit.Type.ID != plan.String {
			return true
		}
		v := []byte(lit.Value.S)
		lo, hi = bytes.Compare(cr.smin, v), bytes.Compare(cr.smax, v)
	} else {
		switch lit.Type.ID {
		case plan.Int64, plan.Decimal, plan.Date:
		default:
			return true
		}
		if lit.Value.H != 0 {
			return true // a literal beyond int64: no pruning
		}
		v := lit.Value.I
		mn, mx := cr.min, cr.max
		ls := decScale(lit.Type)
		var ok bool
		if v, mn, mx, ok = commonScale(v, ls, mn, mx, cr.scale); !ok {
			return true
		}
		lo, hi = cmpI(mn, v), cmpI(mx, v)
	}
	switch op {
	case plan.OpEq:
		return lo <= 0 && hi >= 0
	case plan.OpNe:
		return !(lo == 0 && hi == 0)
	case plan.OpLt:
		return lo < 0
	case plan.OpLe:
		return lo <= 0
	case plan.OpGt:
		return hi > 0
	case plan.OpGe:
		return hi >= 0
	}
	return true
}

func cmpI(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// commonScale brings a literal (scale ls) and a range (scale cs) to the
// larger scale; ok is false on overflow.
func commonScale(v int64, ls int, mn, mx int64, cs int) (int64, int64, int64, bool) {
	if ls == cs {
		return v, mn, mx, true
	}
	if ls > plan.MaxDecimal64Precision || cs > plan.MaxDecimal64Precision || ls < 0 || cs < 0 {
		return 0, 0, 0, false
	}
	var o1, o2, o3 bool
	if ls < cs {
		v, o1 = mulChk(v, plan.Pow10[cs-ls], false)
	} else {
		m := plan.Pow10[ls-cs]
		mn, o2 = mulChk(mn, m, false)
		mx, o3 = mulChk(mx, m, false)
	}
	return v, mn, mx, !(o1 || o2 || o3)
}
