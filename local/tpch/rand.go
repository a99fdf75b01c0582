package tpch

import "math/bits"

// Randomness is keyed, never sequential across rows: every value is a pure
// function of (column stream, row key), so any slice of a table can be
// produced independently and equals the same rows of a full generation.

const (
	seedBase = 0x5eed_7c9b_2a41_d3e1
	gamma    = 0x9e3779b97f4a7c15
	streamK  = 0xd1b54a32d192ed03
)

// mix64 is the splitmix64 finalizer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// hash returns the random 64-bit word of column stream s at row key k.
func hash(s stream, k int64) uint64 {
	return mix64(seedBase + uint64(s)*streamK + uint64(k)*gamma)
}

// below maps a random word uniformly onto [0, n).
func below(x uint64, n int64) int64 {
	hi, _ := bits.Mul64(x, uint64(n))
	return int64(hi)
}

// rnd returns a uniform value in [lo, hi] for column stream s at row key k.
func rnd(s stream, k int64, lo, hi int64) int64 {
	return lo + below(hash(s, k), hi-lo+1)
}

// rowRand is a small splitmix64 stream for values that need several draws
// in one row (strings); seeded from (stream, row key).
type rowRand struct{ s uint64 }

func newRowRand(s stream, k int64) rowRand { return rowRand{s: hash(s, k)} }

func (r *rowRand) next() uint64 {
	r.s += gamma
	return mix64(r.s)
}

func (r *rowRand) between(lo, hi int64) int64 { return lo + below(r.next(), hi-lo+1) }

type stream uint64

// Column streams. Values are part of the data definition: changing them
// changes the generated data.
const (
	_ stream = iota
	sTextPool
	sRegionComment
	sNationComment
	sSuppAddress
	sSuppNation
	sSuppPhone
	sSuppAcctbal
	sSuppComment
	sSuppBBB
	sCustAddress
	sCustNation
	sCustPhone
	sCustAcctbal
	sCustSegment
	sCustComment
	sPartName
	sPartMfgr
	sPartBrand
	sPartType
	sPartSize
	sPartContainer
	sPartComment
	sPSAvailqty
	sPSSupplycost
	sPSComment
	sOrderCust
	sOrderDate
	sOrderPriority
	sOrderClerk
	sOrderComment
	sOrderLines
	sLinePart
	sLineSupp
	sLineQty
	sLineDiscount
	sLineTax
	sLineShip
	sLineCommit
	sLineReceipt
	sLineReturn
	sLineInstruct
	sLineMode
	sLineComment
)
