package tpch

import (
	"context"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batcher accumulates rows in typed builders and emits a record batch every
// max rows.
type batcher struct {
	ctx  context.Context
	rb   *array.RecordBuilder
	n    int
	max  int
	emit func(arrow.RecordBatch) error
	// string builders and their data size in the last full batch, to
	// reserve the next batch's data at once instead of growing it.
	strs    []*array.BinaryBuilder
	strData []int
}

func newBatcher(ctx context.Context, schema *arrow.Schema, max, reserve int, emit func(arrow.RecordBatch) error) *batcher {
	b := &batcher{ctx: ctx, rb: array.NewRecordBuilder(memory.DefaultAllocator, schema), max: max, emit: emit}
	for _, f := range b.rb.Fields() {
		if sb, ok := f.(*array.StringBuilder); ok {
			b.strs = append(b.strs, sb.BinaryBuilder)
			b.strData = append(b.strData, 0)
		}
	}
	b.rb.Reserve(reserve)
	return b
}

func (b *batcher) release() { b.rb.Release() }

// row marks the end of one appended row, emitting a full batch.
func (b *batcher) row() error {
	b.n++
	if b.n >= b.max {
		return b.flush()
	}
	return nil
}

func (b *batcher) flush() error {
	if b.n == 0 {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return err
	}
	full := b.n == b.max
	for i, sb := range b.strs {
		if full {
			b.strData[i] = sb.DataLen()
		}
	}
	rec := b.rb.NewRecordBatch()
	b.n = 0
	err := b.emit(rec)
	rec.Release()
	if err != nil {
		return err
	}
	b.rb.Reserve(b.max)
	for i, sb := range b.strs {
		// a little headroom so that a batch like the last one fits
		sb.ReserveData(b.strData[i] + b.strData[i]/16)
	}
	return nil
}

func (b *batcher) i64(i int) *array.Int64Builder { return b.rb.Field(i).(*array.Int64Builder) }
func (b *batcher) i32(i int) *array.Int32Builder { return b.rb.Field(i).(*array.Int32Builder) }
func (b *batcher) dec(i int) *array.Decimal128Builder {
	return b.rb.Field(i).(*array.Decimal128Builder)
}
func (b *batcher) date(i int) *array.Date32Builder { return b.rb.Field(i).(*array.Date32Builder) }
func (b *batcher) str(i int) strCol {
	return strCol{b.rb.Field(i).(*array.StringBuilder).BinaryBuilder}
}

// strCol appends strings without converting them to fresh byte slices.
type strCol struct{ *array.BinaryBuilder }

func (c strCol) s(v string) { c.Append(unsafe.Slice(unsafe.StringData(v), len(v))) }
func (c strCol) b(v []byte) { c.Append(v) }

func cents(v int64) decimal128.Num { return decimal128.FromI64(v) }

type generator struct {
	sc   scale
	pool string
	buf  []byte
}

func (g *generator) region(b *batcher, lo, hi int64) error {
	key, name, cmt := b.i64(0), b.str(1), b.str(2)
	for i := lo; i < hi; i++ {
		key.Append(i)
		name.s(regionNames[i])
		cmt.s(text(g.pool, sRegionComment, i, 31, 115))
		if err := b.row(); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) nation(b *batcher, lo, hi int64) error {
	key, name, reg, cmt := b.i64(0), b.str(1), b.i64(2), b.str(3)
	for i := lo; i < hi; i++ {
		key.Append(i)
		name.s(nations[i].name)
		reg.Append(nations[i].region)
		cmt.s(text(g.pool, sNationComment, i, 31, 114))
		if err := b.row(); err != nil {
			return err
		}
	}
	return nil
}

const (
	bbbBase      = "Customer "
	bbbComplaint = "Complaints"
	bbbRecommend = "Recommends"
)

// bbbKind tells whether supplier row i carries a "Customer ... Complaints"
// (1) or "Customer ... Recommends" (2) comment, or neither (0). Clause 4.2.3
// asks for SF*5 rows of each; we pick exactly max(1, round(SF*5)) of each, one
// per equal block of suppliers, so that the choice is a function of the row.
func (g *generator) bbbKind(i int64) int {
	n := g.sc.supp
	k := scaled(5, g.sc.sf)
	if k > n {
		k = n
	}
	start := func(b int64) int64 { return sliceOf(n, int(b), int(k)) }
	b := i * k / n
	for b+1 < k && start(b+1) <= i {
		b++
	}
	for b > 0 && start(b) > i {
		b--
	}
	s0, size := start(b), start(b+1)-start(b)
	c := s0 + rnd(sSuppBBB, 2*b, 0, size-1)
	if i == c {
		return 1
	}
	if size > 1 {
		r := rnd(sSuppBBB, 2*b+1, 0, size-1)
		if s0+r == c {
			r = (r + 1) % size
		}
		if i == s0+r {
			return 2
		}
	}
	return 0
}

func (g *generator) supplier(b *batcher, lo, hi int64) error {
	key, name, addr, nat, phone, bal, cmt := b.i64(0), b.str(1), b.str(2), b.i64(3), b.str(4), b.dec(5), b.str(6)
	for i := lo; i < hi; i++ {
		k := i + 1
		key.Append(k)
		g.buf = appendPadded(append(g.buf[:0], "Supplier#"...), k, 9)
		name.b(g.buf)
		addr.b(appendVString(g.buf[:0], sSuppAddress, i, 10, 40))
		nk := rnd(sSuppNation, i, 0, 24)
		nat.Append(nk)
		phone.b(appendPhone(g.buf[:0], sSuppPhone, i, nk))
		bal.Append(cents(rnd(sSuppAcctbal, i, -99999, 999999)))
		c := text(g.pool, sSuppComment, i, 25, 100)
		if kind := g.bbbKind(i); kind != 0 {
			cmt.b(g.bbbComment(c, i, kind))
		} else {
			cmt.s(c)
		}
		if err := b.row(); err != nil {
			return err
		}
	}
	return nil
}

// bbbComment overwrites part of comment c with "Customer " + kept noise +
// "Complaints"/"Recommends", at a random place, as the reference generator does.
func (g *generator) bbbComment(c string, i int64, kind int) []byte {
	word := bbbComplaint
	if kind == 2 {
		word = bbbRecommend
	}
	g.buf = append(g.buf[:0], c...)
	r := newRowRand(sSuppBBB, -1-i)
	free := int64(len(c) - len(bbbBase) - len(word))
	noise := r.between(0, free)
	off := r.between(0, free-noise)
	copy(g.buf[off:], bbbBase)
	copy(g.buf[off+int64(len(bbbBase))+noise:], word)
	return g.buf
}

func (g *generator) customer(b *batcher, lo, hi int64) error {
	key, name, addr, nat, phone, bal, seg, cmt := b.i64(0), b.str(1), b.str(2), b.i64(3), b.str(4), b.dec(5), b.str(6), b.str(7)
	for i := lo; i < hi; i++ {
		k := i + 1
		key.Append(k)
		g.buf = appendPadded(append(g.buf[:0], "Customer#"...), k, 9)
		name.b(g.buf)
		addr.b(appendVString(g.buf[:0], sCustAddress, i, 10, 40))
		nk := rnd(sCustNation, i, 0, 24)
		nat.Append(nk)
		phone.b(appendPhone(g.buf[:0], sCustPhone, i, nk))
		bal.Append(cents(rnd(sCustAcctbal, i, -99999, 999999)))
		seg.s(segments[rnd(sCustSegment, i, 0, int64(len(segments))-1)])
		cmt.s(text(g.pool, sCustComment, i, 29, 116))
		if err := b.row(); err != nil {
			return err
		}
	}
	return nil
}

// retailCents is P_RETAILPRICE in cents (clause 4.2.3):
// (90000 + ((P_PARTKEY/10) modulo 20001) + 100 * (P_PARTKEY modulo 1000)) / 100.
func retailCents(partkey int64) int64 {
	return 90000 + (partkey/10)%20001 + 100*(partkey%1000)
}

// appendPartName appends five distinct words of the color list.
func appendPartName(dst []byte, i int64) []byte {
	r := newRowRand(sPartName, i)
	var picked [5]int64
	for w := 0; w < 5; w++ {
	again:
		c := below(r.next(), int64(len(colors)))
		for _, p := range picked[:w] {
			if p == c {
				goto again
			}
		}
		picked[w] = c
		if w > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, colors[c]...)
	}
	return dst
}

func (g *generator) partRows(b *batcher, lo, hi int64) error {
	key, name, mfgr, brand, typ, size, cont, price, cmt :=
		b.i64(0), b.str(1), b.str(2), b.str(3), b.str(4), b.i32(5), b.str(6), b.dec(7), b.str(8)
	for i := lo; i < hi; i++ {
		k := i + 1
		key.Append(k)
		name.b(appendPartName(g.buf[:0], i))
		m := rnd(sPartMfgr, i, 0, 4)
		mfgr.s(mfgrNames[m])
		brand.s(brandNames[m*5+rnd(sPartBrand, i, 0, 4)])
		typ.s(partTypes[rnd(sPartType, i, 0, int64(len(partTypes))-1)])
		size.Append(int32(rnd(sPartSize, i, 1, 50)))
		cont.s(partContainers[rnd(sPartContainer, i, 0, int64(len(partContainers))-1)])
		price.Append(cents(retailCents(k)))
		cmt.s(text(g.pool, sPartComment, i, 5, 22))
		if err := b.row(); err != nil {
			return err
		}
	}
	return nil
}

// partSupps returns the four suppliers of a part (clause 4.2.3):
// PS_SUPPKEY = (ps_partkey + (i * ((S/4) + (int)(ps_partkey-1)/S))) modulo S + 1.
// At tiny scale factors (S < 20 or so) the formula can repeat a supplier for
// a part; the repeat is then moved to the next supplier so that
// (ps_partkey, ps_suppkey) stays a key.
func (s *scale) partSupps(pk int64) (out [4]int64) {
	S := s.supp
	step := S/4 + (pk-1)/S
	for j := int64(0); j < 4; j++ {
		v := (pk+j*step)%S + 1
		if S >= 4 {
			for dup := true; dup; {
				dup = false
				for _, p := range out[:j] {
					if p == v {
						v = v%S + 1
						dup = true
						break
					}
				}
			}
		}
		out[j] = v
	}
	return out
}

func (g *generator) partsupp(b *batcher, lo, hi int64) error {
	pkey, skey, qty, cost, cmt := b.i64(0), b.i64(1), b.i32(2), b.dec(3), b.str(4)
	for i := lo; i < hi; i++ {
		pk := i + 1
		supps := g.sc.partSupps(pk)
		for j := int64(0); j < 4; j++ {
			rk := i*4 + j
			pkey.Append(pk)
			skey.Append(supps[j])
			qty.Append(int32(rnd(sPSAvailqty, rk, 1, 9999)))
			cost.Append(cents(rnd(sPSSupplycost, rk, 100, 100000)))
			cmt.s(text(g.pool, sPSComment, rk, 49, 198))
			if err := b.row(); err != nil {
				return err
			}
		}
	}
	return nil
}

// orderKey maps an order index to its sparse key: only the first 8 keys of
// each group of 32 are used.
func orderKey(oi int64) int64 { return (oi>>3)<<5 + oi&7 + 1 }

// linesOf returns the number of lineitems of order index oi, in [1, 7].
func linesOf(oi int64) int64 { return rnd(sOrderLines, oi, 1, 7) }

type lineInfo struct {
	partkey, suppkey      int64
	qty, ext, disc, tax   int64 // qty in units; ext in cents; disc, tax in percent
	ship, commit, receipt int32
}

type orderInfo struct {
	key   int64
	date  int32
	n     int
	lines [7]lineInfo
}

// order computes the numeric values of order index oi and its lineitems.
func (g *generator) order(oi int64, o *orderInfo) {
	o.key = orderKey(oi)
	o.date = int32(rnd(sOrderDate, oi, int64(startDate), int64(orderDateMax)))
	o.n = int(linesOf(oi))
	for j := 0; j < o.n; j++ {
		lk := oi<<3 + int64(j)
		l := &o.lines[j]
		l.partkey = rnd(sLinePart, lk, 1, g.sc.part)
		l.suppkey = g.sc.partSupps(l.partkey)[rnd(sLineSupp, lk, 0, 3)]
		l.qty = rnd(sLineQty, lk, 1, 50)
		l.ext = l.qty * retailCents(l.partkey)
		l.disc = rnd(sLineDiscount, lk, 0, 10)
		l.tax = rnd(sLineTax, lk, 0, 8)
		l.ship = o.date + int32(rnd(sLineShip, lk, 1, 121))
		l.commit = o.date + int32(rnd(sLineCommit, lk, 30, 90))
		l.receipt = l.ship + int32(rnd(sLineReceipt, lk, 1, 30))
	}
}

// lineCharge is a lineitem's share of O_TOTALPRICE in cents:
// L_EXTENDEDPRICE * (1 - L_DISCOUNT) * (1 + L_TAX), truncated to cents at each
// step like the reference generator.
func lineCharge(ext, disc, tax int64) int64 {
	return ext * (100 - disc) / 100 * (100 + tax) / 100
}

func (g *generator) orders(b *batcher, lo, hi int64) error {
	key, cust, status, total, date, prio, clerk, shipprio, cmt :=
		b.i64(0), b.i64(1), b.str(2), b.dec(3), b.date(4), b.str(5), b.str(6), b.i32(7), b.str(8)
	var o orderInfo
	for oi := lo; oi < hi; oi++ {
		g.order(oi, &o)
		key.Append(o.key)
		// O_CUSTKEY uniform over the customer keys that are not multiples of 3.
		c := rnd(sOrderCust, oi, 0, g.sc.custNonMult3-1)
		cust.Append(c + c/2 + 1)
		var sum int64
		nO := 0
		for j := 0; j < o.n; j++ {
			l := &o.lines[j]
			sum += lineCharge(l.ext, l.disc, l.tax)
			if l.ship > currentDate {
				nO++
			}
		}
		switch nO {
		case 0:
			status.s("F")
		case o.n:
			status.s("O")
		default:
			status.s("P")
		}
		total.Append(cents(sum))
		date.Append(arrow.Date32(o.date))
		prio.s(priorities[rnd(sOrderPriority, oi, 0, int64(len(priorities))-1)])
		g.buf = appendPadded(append(g.buf[:0], "Clerk#"...), rnd(sOrderClerk, oi, 1, g.sc.clerks), 9)
		clerk.b(g.buf)
		shipprio.Append(0)
		cmt.s(text(g.pool, sOrderComment, oi, 19, 78))
		if err := b.row(); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) lineitem(b *batcher, lo, hi int64) error {
	okey, pkey, skey, lnum, qty, ext, disc, tax, rflag, lstatus, ship, commit, receipt, instr, mode, cmt :=
		b.i64(0), b.i64(1), b.i64(2), b.i32(3), b.dec(4), b.dec(5), b.dec(6), b.dec(7),
		b.str(8), b.str(9), b.date(10), b.date(11), b.date(12), b.str(13), b.str(14), b.str(15)
	var o orderInfo
	for oi := lo; oi < hi; oi++ {
		g.order(oi, &o)
		for j := 0; j < o.n; j++ {
			lk := oi<<3 + int64(j)
			l := &o.lines[j]
			okey.Append(o.key)
			pkey.Append(l.partkey)
			skey.Append(l.suppkey)
			lnum.Append(int32(j + 1))
			qty.Append(cents(l.qty * 100))
			ext.Append(cents(l.ext))
			disc.Append(cents(l.disc))
			tax.Append(cents(l.tax))
			switch {
			case l.receipt > currentDate:
				rflag.s("N")
			case hash(sLineReturn, lk)&1 == 0:
				rflag.s("R")
			default:
				rflag.s("A")
			}
			if l.ship > currentDate {
				lstatus.s("O")
			} else {
				lstatus.s("F")
			}
			ship.Append(arrow.Date32(l.ship))
			commit.Append(arrow.Date32(l.commit))
			receipt.Append(arrow.Date32(l.receipt))
			instr.s(instructions[rnd(sLineInstruct, lk, 0, int64(len(instructions))-1)])
			mode.s(shipModes[rnd(sLineMode, lk, 0, int64(len(shipModes))-1)])
			cmt.s(text(g.pool, sLineComment, lk, 10, 43))
			if err := b.row(); err != nil {
				return err
			}
		}
	}
	return nil
}
