package catalog

import (
	"math"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Distinct-value estimates from Parquet footers.
//
// The join-order estimator divides a join's input rows by its keys'
// distinct counts. Without one it takes every column as unique, so an
// equality of two low-cardinality strings (TPC-DS q85's
// cd1.cd_marital_status = cd2.cd_marital_status) looks like a key join
// and its billions of rows like a few million. The footers say more, at
// no extra request:
//   - the statistics' distinct_count, when the writer sets it (DuckDB
//     does, for every column chunk);
//   - the dictionary page's size, when every data page of the chunk is
//     dictionary-encoded: each entry takes at least its physical width (4
//     bytes for a string's length), so the page's bytes over that width
//     bound the chunk's distinct values;
//   - an integer column's min/max range.
//
// Per row group the smallest of these bounds counts. Row groups are then
// combined into a table estimate by their min and max: row groups with
// the same min and max are taken to share one domain (a status, a flag, a
// small code: as many values as the largest of them), and the classes of
// different min/max add up (a key, a date a file is sorted by), within
// the integer range and the row count. It is an estimate for the planner,
// never used for an answer.

// maxClasses bounds the min/max classes a column tracks; past it the
// row groups' counts just add up.
const maxClasses = 1024

// nearUnique: an estimate from bounds at this fraction of the rows or more
// is no estimate (distinctAcc.estimate).
const nearUnique = 0.9

// distinctAcc accumulates one column's estimate over row groups.
type distinctAcc struct {
	unknown  bool
	groups   int
	rows     int64
	sum      int64            // over row groups past maxClasses, or without min/max
	classes  map[string]int64 // min/max -> the largest row-group count
	intLo    int64
	intHi    int64
	intRange bool // every row group had an integer range
	counted  bool // every row group had the writer's distinct_count
}

// add folds in one row group's column chunk of rows rows.
func (a *distinctAcc) add(cc *metadata.ColumnChunkMetaData, rows int64) {
	if a.unknown {
		return
	}
	st, _ := cc.Statistics()
	n, lo, hi, ilo, ihi, iok := chunkDistinct(cc, st, rows)
	counted := st != nil && st.HasDistinctCount()
	if n < 0 {
		a.unknown = true
		return
	}
	a.rows += rows
	if a.groups == 0 {
		a.intLo, a.intHi, a.intRange, a.counted = ilo, ihi, iok, counted
	} else {
		a.intRange = a.intRange && iok
		a.counted = a.counted && counted
		a.intLo, a.intHi = min(a.intLo, ilo), max(a.intHi, ihi)
	}
	a.groups++
	if lo == nil || hi == nil {
		a.sum += n
		return
	}
	if a.classes == nil {
		a.classes = map[string]int64{}
	}
	k := string(lo) + "\x00" + string(hi)
	if c, ok := a.classes[k]; ok || len(a.classes) < maxClasses {
		a.classes[k] = max(c, n)
		return
	}
	a.sum += n
}

// estimate is the table's distinct values (0: unknown).
func (a *distinctAcc) estimate() int64 {
	if a.unknown || a.groups == 0 {
		return 0
	}
	n := a.sum
	for _, c := range a.classes {
		n += c
	}
	n = min(n, a.rows)
	if a.intRange {
		if r := a.intHi - a.intLo; r >= 0 && r < math.MaxInt64 {
			n = min(n, r+1)
		}
	}
	if !a.counted && float64(n) >= nearUnique*float64(a.rows) {
		// Bounds near the rows (an integer's range, a dictionary's
		// scaled size) say no more than that the column may be a key,
		// which the planner assumes anyway; a sparse key with repeats
		// (TPC-H's l_orderkey: 1.5 M values over a range of 6 M, in
		// 6 M rows) looks the same. Only the writer's counts tell them
		// apart.
		return 0
	}
	return max(n, 1)
}

// chunkDistinct bounds the distinct values of one column chunk (-1: no
// bound), and returns its encoded min/max and integer range when known.
func chunkDistinct(cc *metadata.ColumnChunkMetaData, st metadata.TypedStatistics, rows int64) (n int64, lo, hi []byte, ilo, ihi int64, iok bool) {
	n = -1
	bound := func(b int64) {
		if b >= 0 && (n < 0 || b < n) {
			n = b
		}
	}
	if st != nil {
		if st.HasDistinctCount() {
			bound(st.DistinctCount())
		}
		if st.HasMinMax() {
			lo, hi = st.EncodeMin(), st.EncodeMax()
			switch s := st.(type) {
			case *metadata.Int32Statistics:
				ilo, ihi, iok = int64(s.Min()), int64(s.Max()), true
			case *metadata.Int64Statistics:
				ilo, ihi, iok = s.Min(), s.Max(), s.Max() >= s.Min()
			}
			if iok && ihi >= ilo && ihi-ilo < math.MaxInt64 {
				bound(ihi - ilo + 1)
			}
		}
		if st.HasNullCount() && st.NullCount() >= rows && rows > 0 {
			bound(0) // all NULL
		}
	}
	if d := dictionaryEntries(cc); d >= 0 && (!iok || cc.Compression() == compress.Codecs.Uncompressed) {
		// Of a compressed chunk the dictionary's size is only scaled by
		// the chunk's compression ratio, which a dictionary of keys does
		// not share (a file of our generator: s_suppkey 4,486 of 10,000,
		// l_orderkey 441,367 of 1.5 M): an integer's range is the better
		// bound there.
		bound(d)
	}
	if n >= 0 {
		n = min(n, rows)
	}
	return n, lo, hi, ilo, ihi, iok
}

// dictionaryEntries bounds the entries of a chunk's dictionary page when
// every data page of the chunk is dictionary-encoded (-1 otherwise). The
// page's stored bytes are scaled by the chunk's compression ratio and
// divided by the smallest an entry can take.
func dictionaryEntries(cc *metadata.ColumnChunkMetaData) int64 {
	if !cc.HasDictionaryPage() || !allDictionaryPages(cc) {
		return -1
	}
	page := cc.DataPageOffset() - cc.DictionaryPageOffset()
	if page <= 0 {
		return -1
	}
	ratio := 1.0
	if c, u := cc.TotalCompressedSize(), cc.TotalUncompressedSize(); c > 0 && u > c {
		ratio = float64(u) / float64(c)
	}
	width := 4.0 // a BYTE_ARRAY entry's length; INT32, FLOAT
	switch cc.Type() {
	case parquet.Types.Int64, parquet.Types.Double:
		width = 8
	case parquet.Types.Int96:
		width = 12
	case parquet.Types.Boolean:
		return 2
	case parquet.Types.FixedLenByteArray:
		return -1
	}
	return int64(float64(page) * ratio / width)
}

// allDictionaryPages reports whether every data page of a chunk is
// dictionary-encoded: from the page encoding stats when written, else
// from the encodings of a format-1 writer (PLAIN_DICTIONARY for the
// dictionary and its pages, PLAIN only after a fallback). A format-2
// writer lists PLAIN for its dictionary page too, so without page stats
// its chunks are not trusted.
func allDictionaryPages(cc *metadata.ColumnChunkMetaData) bool {
	if es := cc.EncodingStats(); len(es) > 0 {
		data := false
		for _, e := range es {
			if e.PageType == 0 || e.PageType == 3 { // DATA_PAGE, DATA_PAGE_V2
				data = true
				if e.Encoding != parquet.Encodings.PlainDict && e.Encoding != parquet.Encodings.RLEDict {
					return false
				}
			}
		}
		return data
	}
	encs := cc.Encodings()
	dict := false
	for _, e := range encs {
		switch e {
		case parquet.Encodings.PlainDict:
			dict = true
		case parquet.Encodings.RLE, parquet.Encodings.BitPacked:
			// levels
		default:
			return false
		}
	}
	return dict
}
