package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// ---- LIKE -------------------------------------------------------------------

// likePattern is a compiled LIKE pattern: parts split at '%' (runs of '%'
// collapsed). parts[0] must be a prefix, parts[last] a suffix, and the
// middle parts occur in order without overlap (greedy leftmost matching is
// exact because each part matches a fixed number of characters). '_'
// matches one UTF-8 character.
type likePattern struct {
	parts      [][]byte
	noPercent  bool // exact match (possibly with '_')
	underscore bool
	// fast paths
	kind   likeKind
	lit    []byte
	litStr string
	// needle is a literal every match contains (the longest part of a
	// pattern without '_'), searched for across a whole column at once
	// (matchColumn); nil for patterns a row-by-row test answers as fast.
	needle []byte
}

type likeKind uint8

const (
	likeGeneral  likeKind = iota
	likeExact             // 'abc'
	likePrefix            // 'abc%'
	likeSuffix            // '%abc'
	likeContains          // '%abc%'
	likeAll               // '%'
)

func compileLike(p string) *likePattern {
	lp := &likePattern{underscore: strings.IndexByte(p, '_') >= 0}
	raw := strings.Split(p, "%")
	lp.noPercent = len(raw) == 1
	// collapse empty middle parts (from '%%')
	parts := [][]byte{[]byte(raw[0])}
	for i := 1; i < len(raw)-1; i++ {
		if raw[i] != "" {
			parts = append(parts, []byte(raw[i]))
		}
	}
	if len(raw) > 1 {
		parts = append(parts, []byte(raw[len(raw)-1]))
	}
	lp.parts = parts
	if lp.underscore {
		return lp
	}
	switch {
	case lp.noPercent:
		lp.kind, lp.lit = likeExact, parts[0]
	case len(parts) == 2 && len(parts[0]) == 0 && len(parts[1]) == 0:
		lp.kind = likeAll
	case len(parts) == 2 && len(parts[1]) == 0:
		lp.kind, lp.lit = likePrefix, parts[0]
	case len(parts) == 2 && len(parts[0]) == 0:
		lp.kind, lp.lit = likeSuffix, parts[1]
	case len(parts) == 3 && len(parts[0]) == 0 && len(parts[2]) == 0:
		lp.kind, lp.lit = likeContains, parts[1]
	}
	lp.litStr = string(lp.lit)
	if lp.kind == likeContains || lp.kind == likeGeneral {
		for _, part := range parts {
			if len(part) > len(lp.needle) {
				lp.needle = part
			}
		}
	}
	return lp
}

// matchColumn sets bit i of out for every row i < n of a string column
// (offsets offs into data) that matches. With a needle it searches the
// column's bytes for it in one pass (memchr-style, bytes.Index over the
// whole buffer rather than once per row) and tests only the rows a hit
// falls in: a row without the needle cannot match. A hit that runs past
// its row's end means the row has no occurrence at or after it (nor
// before, since the search returns the first), so the row is skipped.
func (lp *likePattern) matchColumn(offs []int32, data []byte, n int, out []byte) {
	nd := lp.needle
	if len(nd) == 0 || n == 0 {
		for i := 0; i < n; i++ {
			if lp.match(data[offs[i]:offs[i+1]]) {
				out[i>>3] |= 1 << (uint(i) & 7)
			}
		}
		return
	}
	hi := int(offs[n])
	r := 0
	for pos := int(offs[0]); pos < hi; {
		k := indexPair(data[pos:hi], nd)
		if k < 0 {
			return
		}
		p := pos + k
		for int(offs[r+1]) <= p {
			r++
		}
		end := int(offs[r+1])
		if p+len(nd) <= end && (lp.kind == likeContains || lp.match(data[offs[r]:end])) {
			out[r>>3] |= 1 << (uint(r) & 7)
		}
		pos = end
	}
}

func (lp *likePattern) match(s []byte) bool {
	switch lp.kind {
	case likeExact:
		return string(s) == lp.litStr
	case likePrefix:
		return len(s) >= len(lp.lit) && string(s[:len(lp.lit)]) == lp.litStr
	case likeSuffix:
		return len(s) >= len(lp.lit) && string(s[len(s)-len(lp.lit):]) == lp.litStr
	case likeContains:
		return bytes.Contains(s, lp.lit)
	case likeAll:
		return true
	}
	if !lp.underscore {
		return lp.matchPlain(s)
	}
	return lp.matchGeneral(s)
}

// matchPlain: parts without '_'.
func (lp *likePattern) matchPlain(s []byte) bool {
	parts := lp.parts
	first, last := parts[0], parts[len(parts)-1]
	if len(s) < len(first)+len(last) || !bytes.HasPrefix(s, first) || !bytes.HasSuffix(s, last) {
		return false
	}
	pos, end := len(first), len(s)-len(last)
	for _, p := range parts[1 : len(parts)-1] {
		i := bytes.Index(s[pos:end], p)
		if i < 0 {
			return false
		}
		pos += i + len(p)
	}
	return true
}

// matchAt matches pattern part p (with '_') at byte position i of s and
// returns the end position, or -1.
func matchAt(s []byte, i int, p []byte) int {
	for _, c := range p {
		if i >= len(s) {
			return -1
		}
		if c == '_' {
			if s[i] < utf8.RuneSelf {
				i++
			} else {
				_, sz := utf8.DecodeRune(s[i:])
				i += sz
			}
			continue
		}
		if s[i] != c {
			return -1
		}
		i++
	}
	return i
}

func (lp *likePattern) matchGeneral(s []byte) bool {
	parts := lp.parts
	if lp.noPercent {
		return matchAt(s, 0, parts[0]) == len(s)
	}
	pos := matchAt(s, 0, parts[0])
	if pos < 0 {
		return false
	}
	for _, p := range parts[1 : len(parts)-1] {
		found := false
		for i := pos; i <= len(s); {
			if e := matchAt(s, i, p); e >= 0 {
				pos, found = e, true
				break
			}
			if i == len(s) {
				break
			}
			if s[i] < utf8.RuneSelf {
				i++
			} else {
				_, sz := utf8.DecodeRune(s[i:])
				i += sz
			}
		}
		if !found {
			return false
		}
	}
	last := parts[len(parts)-1]
	// The last part matches exactly its number of characters at the end.
	chars := utf8.RuneCount(last)
	start := len(s)
	for k := 0; k < chars; k++ {
		if start == 0 {
			return false
		}
		_, sz := utf8.DecodeLastRune(s[:start])
		start -= sz
	}
	return start >= pos && matchAt(s, start, last) == len(s)
}

// indexPair is bytes.Index(s, nd) for long s: it tests eight positions
// at a time for the needle's first and last bytes (SWAR: a zero byte of
// (word at i ^ first) | (word at i+len-1 ^ last) is a candidate) and
// compares the whole needle only there, so a needle whose first byte is
// common (an 's' in English text) costs no call per occurrence of it.
// The zero-byte test may flag a byte above a true zero (borrow); every
// flagged position is verified, lowest first, so the first match wins.
func indexPair(s, nd []byte) int {
	const lo8, hi8 = 0x0101010101010101, 0x8080808080808080
	l := len(nd)
	if l < 2 || len(s) < 64 {
		return bytes.Index(s, nd)
	}
	first, last := uint64(nd[0])*lo8, uint64(nd[l-1])*lo8
	i := 0
	for ; i+l-1+8 <= len(s); i += 8 {
		t := (binary.LittleEndian.Uint64(s[i:]) ^ first) | (binary.LittleEndian.Uint64(s[i+l-1:]) ^ last)
		for z := (t - lo8) &^ t & hi8; z != 0; z &= z - 1 {
			j := i + bits.TrailingZeros64(z)>>3
			if string(s[j:j+l]) == string(nd) {
				return j
			}
		}
	}
	if k := bytes.Index(s[i:], nd); k >= 0 {
		return i + k
	}
	return -1
}

func (ev *evaluator) like(e *plan.Expr, a, p vec) (arrow.Array, error) {
	if a.scalar() || a.arr.DataType().ID() != arrow.STRING {
		return nil, fmt.Errorf("LIKE operand of type %s, want string", a.t)
	}
	n := ev.n
	offs, data := strOffsets(a.arr)
	buf, out := newBitmap(ev.mem, n)
	if p.scalar() {
		compileLike(p.lit.S).matchColumn(offs, data, n, out)
	} else {
		if p.arr.DataType().ID() != arrow.STRING {
			buf.Release()
			return nil, fmt.Errorf("LIKE pattern of type %s, want string", p.t)
		}
		poffs, pdata := strOffsets(p.arr)
		var cache *likePattern
		var cached string
		for i := 0; i < n; i++ {
			pat := pdata[poffs[i]:poffs[i+1]]
			if cache == nil || string(pat) != cached {
				cached = string(pat)
				cache = compileLike(cached)
			}
			if cache.match(data[offs[i]:offs[i+1]]) {
				out[i>>3] |= 1 << (uint(i) & 7)
			}
		}
	}
	if e.Negated {
		for i := range out {
			out[i] = ^out[i]
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, n, andValidity(ev.mem, n, a.arr, arrOf(p)), buf), nil
}

// ---- SUBSTRING --------------------------------------------------------------

// substrRange computes the character range [start, end) of SUBSTRING over a
// string of size characters, following DuckDB: a 1-based offset, a negative
// offset counts from the end, offset 0 starts one character before the
// first, a negative length takes characters before the offset.
func substrRange(size, offset, length int64) (int64, int64) {
	if length == 0 {
		return 0, 0
	}
	var start int64
	switch {
	case offset > 0:
		start = min(size, offset-1)
	case offset < 0:
		start = max(size+offset, 0)
	default:
		start = 0
		length--
		if length <= 0 {
			return 0, 0
		}
	}
	var end int64
	if length > 0 {
		if start > math.MaxInt64-length {
			end = size
		} else {
			end = min(size, start+length)
		}
	} else {
		end = start
		if start < math.MinInt64-length {
			start = 0
		} else {
			start = max(0, start+length)
		}
	}
	if start >= end {
		return 0, 0
	}
	return start, end
}

func isASCII(b []byte) bool {
	for len(b) >= 8 {
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if x&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runeOffset returns the byte offset of character k (0-based) of s.
func runeOffset(s []byte, k int64) int {
	i := 0
	for ; k > 0 && i < len(s); k-- {
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, sz := utf8.DecodeRune(s[i:])
			i += sz
		}
	}
	return i
}

func (ev *evaluator) substring(args []vec) (arrow.Array, error) {
	n := ev.n
	str, err := ev.materialize(retained(args[0]))
	if err != nil {
		return nil, err
	}
	defer str.Release()
	if str.DataType().ID() != arrow.STRING {
		return nil, fmt.Errorf("SUBSTRING operand of type %s, want string", str.DataType())
	}
	intArg := func(v vec) (func(i int) int64, error) {
		if v.t.ID != plan.Int64 {
			return nil, fmt.Errorf("SUBSTRING position/length of type %s, want int64", v.t)
		}
		if v.scalar() {
			c := v.lit.I
			return func(int) int64 { return c }, nil
		}
		x := values[int64](v.arr)
		return func(i int) int64 { return x[i] }, nil
	}
	startOf, err := intArg(args[1])
	if err != nil {
		return nil, err
	}
	lenOf := func(int) int64 { return math.MaxUint32 }
	if len(args) > 2 {
		if lenOf, err = intArg(args[2]); err != nil {
			return nil, err
		}
	}
	offs, data := strOffsets(str)
	ascii := isASCII(data[offs[0]:offs[n]])
	arrs := []arrow.Array{str}
	for _, a := range args[1:] {
		arrs = append(arrs, arrOf(a))
	}
	valid := andValidity(ev.mem, n, arrs...)
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	sb := newStrBuilder(ev.mem, n, int(offs[n]-offs[0]))
	for i := 0; i < n; i++ {
		if vb != nil && !bit(vb, i) {
			sb.appendEmpty()
			continue
		}
		s := data[offs[i]:offs[i+1]]
		if ascii {
			b, e := substrRange(int64(len(s)), startOf(i), lenOf(i))
			sb.append(s[b:e])
			continue
		}
		size := int64(utf8.RuneCount(s))
		b, e := substrRange(size, startOf(i), lenOf(i))
		bs := runeOffset(s, b)
		es := bs + runeOffset(s[bs:], e-b)
		sb.append(s[bs:es])
	}
	return sb.finish(valid)
}

// retained returns v with an extra reference (for materialize, which
// consumes its argument).
func retained(v vec) vec {
	if v.arr != nil {
		v.arr.Retain()
	}
	return v
}

// ---- IN ---------------------------------------------------------------------

func (ev *evaluator) in(e *plan.Expr, args []vec) (arrow.Array, error) {
	a := args[0]
	list := args[1:]
	for _, l := range list {
		if !l.scalar() {
			return ev.inByEquality(e, args)
		}
	}
	m, err := ev.inMatcherFor(e, a, list)
	if err != nil {
		return nil, err
	}
	return ev.inApply(e, a, m), nil
}

// inLiterals reports whether every entry of IN list e is a literal (so
// its matcher may be kept between batches).
func inLiterals(e *plan.Expr) bool {
	for _, x := range e.Args[1:] {
		if x.Op != plan.OpLiteral {
			return false
		}
	}
	return len(e.Args) > 1
}

// evalInCached evaluates IN list e of literals with the matcher kept in
// the evaluator's cache, evaluating the list's literals only to build it.
func (ev *evaluator) evalInCached(e *plan.Expr) (vec, error) {
	a, err := ev.eval(e.Args[0])
	if err != nil {
		return vec{}, err
	}
	defer a.release()
	if a.arr == nil {
		return ev.evalGeneric(e)
	}
	m, ok := ev.cache.in[e]
	if !ok || m.t != a.t || m.layout != layoutOf(a.arr) {
		list := make([]vec, 0, len(e.Args)-1)
		for _, x := range e.Args[1:] {
			v, err := ev.eval(x)
			if err != nil {
				return vec{}, err
			}
			list = append(list, v)
		}
		if m, err = ev.inMatcherFor(e, a, list); err != nil {
			return vec{}, fmt.Errorf("%s: %w", opName(e), err)
		}
	}
	arr := ev.inApply(e, a, m)
	return vec{arr: arr, t: plan.BoolType}, nil
}

// inApply evaluates x IN (list) with list's matcher m.
func (ev *evaluator) inApply(e *plan.Expr, a vec, m *inMatcher) arrow.Array {
	n := ev.n
	buf, out := newBitmap(ev.mem, n)
	m.match(a.arr, n, out)
	var valid *memory.Buffer
	if m.hasNull {
		// not found and the list has a NULL: the result is NULL.
		var vb []byte
		valid, vb = newOnes(ev.mem, n)
		if ab, aoff := validityOf(a.arr); ab != nil {
			bitutil.CopyBitmap(ab, aoff, n, vb, 0)
		}
		for i := range out {
			vb[i] &= out[i]
		}
	} else {
		valid = copyValidity(ev.mem, a.arr)
	}
	if e.Negated {
		for i := range out {
			out[i] = ^out[i]
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, n, valid, buf)
}

// inMatcher is an IN list of literals brought to its operand's type once:
// match sets the bit of each row whose value is in the list; hasNull: the
// list holds a NULL.
type inMatcher struct {
	t       plan.DataType
	layout  kind
	hasNull bool
	match   func(arr arrow.Array, n int, out []byte)
}

// inMatcherFor returns e's matcher for operand a: from the evaluator's
// cache when one was built for a's type, else built from the literals
// (cast to a's type) and kept in the cache.
func (ev *evaluator) inMatcherFor(e *plan.Expr, a vec, list []vec) (*inMatcher, error) {
	lay := layoutOf(a.arr)
	if ev.cache != nil {
		if m, ok := ev.cache.in[e]; ok && m.t == a.t && m.layout == lay {
			return m, nil
		}
	}
	m := &inMatcher{t: a.t, layout: lay}
	// Bring the literals to the operand's type.
	lits := make([]plan.Value, 0, len(list))
	for _, l := range list {
		if l.isNull() {
			m.hasNull = true
			continue
		}
		c, err := ev.castVec(l, a.t)
		if err != nil {
			return nil, fmt.Errorf("IN list value %s: %w", l.lit.Format(l.t), err)
		}
		if c.isNull() {
			m.hasNull = true
			continue
		}
		lits = append(lits, c.lit)
	}
	switch lay {
	case kInt64:
		set := make([]int64, len(lits))
		for i, l := range lits {
			set[i] = l.I
		}
		in := newIntSet(set)
		m.match = func(arr arrow.Array, _ int, out []byte) { in.mark(values[int64](arr), out) }
	case kDate:
		set := make([]int32, len(lits))
		for i, l := range lits {
			set[i] = int32(l.I)
		}
		in := newIntSet(set)
		m.match = func(arr arrow.Array, _ int, out []byte) { in.mark(values[int32](arr), out) }
	case kDec128:
		set := make([]num, len(lits))
		for i, l := range lits {
			set[i] = l.Dec128()
		}
		in := newIntSet(set)
		m.match = func(arr arrow.Array, _ int, out []byte) { in.mark(values[num](arr), out) }
	case kFloat64:
		set := make(map[float64]struct{}, len(lits))
		for _, l := range lits {
			set[l.F] = struct{}{}
		}
		m.match = func(arr arrow.Array, _ int, out []byte) {
			for i, v := range values[float64](arr) {
				if _, ok := set[v]; ok {
					setBit(out, i)
				}
			}
		}
	case kString:
		if len(lits) <= 8 {
			strs := make([]string, len(lits))
			for i, l := range lits {
				strs[i] = l.S
			}
			m.match = func(arr arrow.Array, n int, out []byte) {
				offs, data := strOffsets(arr)
				for i := 0; i < n; i++ {
					s := data[offs[i]:offs[i+1]]
					for _, c := range strs {
						if len(c) == len(s) && string(s) == c {
							setBit(out, i)
							break
						}
					}
				}
			}
		} else {
			set := make(map[string]struct{}, len(lits))
			for _, l := range lits {
				set[l.S] = struct{}{}
			}
			m.match = func(arr arrow.Array, n int, out []byte) {
				offs, data := strOffsets(arr)
				for i := 0; i < n; i++ {
					if _, ok := set[string(data[offs[i]:offs[i+1]])]; ok {
						setBit(out, i)
					}
				}
			}
		}
	case kBool:
		var hasT, hasF bool
		for _, l := range lits {
			hasT = hasT || l.B
			hasF = hasF || !l.B
		}
		m.match = func(arr arrow.Array, n int, out []byte) {
			bs, off := bitsOf(arr)
			for i := 0; i < n; i++ {
				if v := bit(bs, off+i); (v && hasT) || (!v && hasF) {
					setBit(out, i)
				}
			}
		}
	default:
		return nil, fmt.Errorf("IN over values of type %s", a.arr.DataType())
	}
	if ev.cache != nil {
		if ev.cache.in == nil {
			ev.cache.in = map[*plan.Expr]*inMatcher{}
		}
		ev.cache.in[e] = m
	}
	return m, nil
}

// intSet is an IN list of integers (or decimals): a short list is
// scanned, a longer one looked up in a hash set.
type intSet[T int64 | int32 | num] struct {
	list []T
	set  map[T]struct{}
}

func newIntSet[T int64 | int32 | num](vals []T) intSet[T] {
	if len(vals) <= 16 {
		return intSet[T]{list: vals}
	}
	m := make(map[T]struct{}, len(vals))
	for _, c := range vals {
		m[c] = struct{}{}
	}
	return intSet[T]{set: m}
}

// mark sets the bit of each of vals found in the set.
func (s intSet[T]) mark(vals []T, out []byte) {
	if s.set == nil {
		for i, v := range vals {
			for _, c := range s.list {
				if v == c {
					out[i>>3] |= 1 << (uint(i) & 7)
					break
				}
			}
		}
		return
	}
	for i, v := range vals {
		if _, ok := s.set[v]; ok {
			out[i>>3] |= 1 << (uint(i) & 7)
		}
	}
}

// inByEquality evaluates x IN (a, b, ...) with non-literal list entries as
// x = a OR x = b OR ...
func (ev *evaluator) inByEquality(e *plan.Expr, args []vec) (arrow.Array, error) {
	var acc arrow.Array
	for _, l := range args[1:] {
		var eq arrow.Array
		var err error
		if l.isNull() {
			eq = makeNulls(ev.mem, arrow.FixedWidthTypes.Boolean, ev.n)
		} else if eq, err = ev.compare(plan.OpEq, args[0], l); err != nil {
			if acc != nil {
				acc.Release()
			}
			return nil, err
		}
		if acc == nil {
			acc = eq
			continue
		}
		next, err := logicKernel(ev.mem, true, acc, eq, ev.n)
		acc.Release()
		eq.Release()
		if err != nil {
			return nil, err
		}
		acc = next
	}
	if !e.Negated {
		return acc, nil
	}
	defer acc.Release()
	return ev.not(vec{arr: acc, t: plan.BoolType})
}

// ---- EXTRACT ----------------------------------------------------------------

func (ev *evaluator) extract(e *plan.Expr, v vec) (arrow.Array, error) {
	a := v.arr
	if a.DataType().ID() == arrow.TIMESTAMP {
		return ev.extractTimestamp(strings.ToLower(e.Field), a)
	}
	if a.DataType().ID() != arrow.DATE32 {
		return nil, fmt.Errorf("EXTRACT from %s, want date", a.DataType())
	}
	field := strings.ToLower(e.Field)
	x := values[int32](a)
	buf, out := newFixed[int64](ev.mem, ev.n)
	switch field {
	case "year":
		for i, d := range x {
			y, _, _ := civilFromDays(int64(d))
			out[i] = y
		}
	case "month":
		for i, d := range x {
			_, m, _ := civilFromDays(int64(d))
			out[i] = int64(m)
		}
	case "day":
		for i, d := range x {
			_, _, dd := civilFromDays(int64(d))
			out[i] = int64(dd)
		}
	case "quarter":
		for i, d := range x {
			_, m, _ := civilFromDays(int64(d))
			out[i] = int64((m-1)/3 + 1)
		}
	default:
		buf.Release()
		return nil, fmt.Errorf("unsupported EXTRACT field %q", e.Field)
	}
	return makeArray(arrow.PrimitiveTypes.Int64, ev.n, copyValidity(ev.mem, a), buf), nil
}
