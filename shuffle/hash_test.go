package shuffle_test

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/shuffle"
)

func hashOf(t *testing.T, cols ...arrow.Array) []uint64 {
	t.Helper()
	out := make([]uint64, cols[0].Len())
	if err := shuffle.HashColumns(cols, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func int64s(vals []int64, valid []bool) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func float64s(vals []float64, valid []bool) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func strs(vals []string, valid []bool) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func dates(vals []arrow.Date32, valid []bool) arrow.Array {
	b := array.NewDate32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func decimals(vals []int64, valid []bool) arrow.Array {
	b := array.NewDecimal64Builder(memory.DefaultAllocator, &arrow.Decimal64Type{Precision: 15, Scale: 2})
	defer b.Release()
	for i, v := range vals {
		if valid != nil && !valid[i] {
			b.AppendNull()
		} else {
			b.Append(decimal.Decimal64(v))
		}
	}
	return b.NewArray()
}

func decimal128s(t *testing.T, vals []string, valid []bool) arrow.Array {
	t.Helper()
	b := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 38, Scale: 0})
	defer b.Release()
	for i, v := range vals {
		if valid != nil && !valid[i] {
			b.AppendNull()
			continue
		}
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			t.Fatalf("bad decimal %q", v)
		}
		b.Append(decimal128.FromBigInt(n))
	}
	return b.NewArray()
}

func timestamps(vals []arrow.Timestamp, valid []bool) arrow.Array {
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func bools(vals []bool, valid []bool) arrow.Array {
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

// TestHashGolden pins the partitioning hash (the values were checked
// against an independent implementation of the definition in hash.go): it is part of the storage
// format (producers and consumers in different processes and versions must
// agree). Never update these values without a format version change.
func TestHashGolden(t *testing.T) {
	cases := []struct {
		name string
		cols []arrow.Array
		want []uint64
	}{
		{"int64", []arrow.Array{int64s([]int64{0, 1, -1, math.MaxInt64, 42}, []bool{true, true, true, true, false})},
			[]uint64{0x11b555e6af3f0c51, 0x514fd5a3976aa718, 0xc699b7970d429178, 0x012ca179310e9ef1, 0xd2ae856618816e44}},
		{"float64", []arrow.Array{float64s([]float64{0, 1.5, math.Inf(-1)}, nil)},
			[]uint64{0x11b555e6af3f0c51, 0xcc16692f15a3a3b7, 0x74cbb8a1f905cc82}},
		{"string", []arrow.Array{strs([]string{"", "a", "sluice"}, nil)},
			[]uint64{0xa64d3dc18b1b552d, 0x46543dcd7c9b012b, 0x49938008248cd4b6}},
		{"bool", []arrow.Array{bools([]bool{false, true}, nil)},
			[]uint64{0x11b555e6af3f0c51, 0x514fd5a3976aa718}},
		{"int64,string", []arrow.Array{int64s([]int64{7, 7}, nil), strs([]string{"x", "y"}, []bool{true, false})},
			[]uint64{0xcb49c4d8da14ec04, 0x0dce05fa070ea8ea}},
		// 0 and -1 equal the int64 case: a Decimal128 that fits an int64
		// hashes as that int64 (and so as a Decimal64 of the same scale).
		{"decimal128", []arrow.Array{decimal128s(t, []string{"0", "-1", "100000000000000000000", "-30000000000000000000000000000000000000", "123456789012345678901234567890", "0"}, []bool{true, true, true, true, true, false})},
			[]uint64{0x11b555e6af3f0c51, 0xc699b7970d429178, 0x01451f595460444c, 0xeabd5911a5dbc09b, 0x5f9ca90a37741eac, 0xd2ae856618816e44}},
		{"timestamp", []arrow.Array{timestamps([]arrow.Timestamp{1700000000000000, 0}, nil)},
			[]uint64{0x22ae6c22c1eb638a, 0x11b555e6af3f0c51}},
	}
	for _, c := range cases {
		got := hashOf(t, c.cols...)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s row %d: hash %#016x, want %#016x (the partitioning hash changed!)", c.name, i, got[i], c.want[i])
			}
		}
	}
}

func TestHashProperties(t *testing.T) {
	// Int64, Date32 and Decimal64 of the same number hash alike.
	vals := []int64{-5, 0, 3, 1 << 40}
	h64 := hashOf(t, int64s(vals, nil))
	hdec := hashOf(t, decimals(vals, nil))
	d32 := []arrow.Date32{-5, 0, 3, 1 << 30}
	hdate := hashOf(t, dates(d32, nil))
	hint := hashOf(t, int64s([]int64{-5, 0, 3, 1 << 30}, nil))
	for i := range vals {
		if h64[i] != hdec[i] {
			t.Errorf("int64 and decimal64 of %d hash differently", vals[i])
		}
		if hdate[i] != hint[i] {
			t.Errorf("date32 and int64 of %d hash differently", d32[i])
		}
	}
	// -0 == +0, NaNs are one value, NULL is one value whatever the type.
	hf := hashOf(t, float64s([]float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0x7ff0000000000001), 1, 0}, []bool{true, true, true, true, true, false}))
	if hf[0] != hf[1] {
		t.Error("-0 and +0 hash differently")
	}
	if hf[2] != hf[3] {
		t.Error("two NaNs hash differently")
	}
	if hf[0] == hf[4] {
		t.Error("0 and 1 hash alike")
	}
	hn := hashOf(t, strs([]string{""}, []bool{false}))
	if hf[5] != hn[0] {
		t.Error("NULL float and NULL string hash differently")
	}
	hs := hashOf(t, strs([]string{""}, nil))
	if hs[0] == hn[0] {
		t.Error("NULL and empty string hash alike")
	}
	// Sliced arrays hash like the values they show.
	full := strs([]string{"a", "b", "c", "d"}, []bool{true, false, true, true})
	sl := array.NewSlice(full, 1, 4)
	hFull, hSl := hashOf(t, full), hashOf(t, sl)
	for i := range hSl {
		if hSl[i] != hFull[i+1] {
			t.Errorf("sliced row %d hashes differently", i)
		}
	}
	// Column order matters; (a,b) vs (b,a) differ.
	a, b := int64s([]int64{1}, nil), int64s([]int64{2}, nil)
	if hashOf(t, a, b)[0] == hashOf(t, b, a)[0] {
		t.Error("(1,2) and (2,1) hash alike")
	}
	// Errors: length mismatch and unsupported types.
	if err := shuffle.HashColumns([]arrow.Array{a}, make([]uint64, 2)); err == nil {
		t.Error("length mismatch not reported")
	}
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.FixedWidthTypes.Time32s)
	lb.Append(true)
	lb.ValueBuilder().(*array.Time32Builder).Append(1)
	list := lb.NewArray()
	if err := shuffle.HashColumns([]arrow.Array{list}, make([]uint64, 1)); err == nil {
		t.Error("list of time32 hashed")
	}
	// A list of engine types hashes (by its key encoding, kernel.AppendKey).
	ib := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
	ib.Append(true)
	ints := ib.NewArray()
	if err := shuffle.HashColumns([]arrow.Array{ints}, make([]uint64, 1)); err != nil {
		t.Errorf("list of int64: %v", err)
	}
}

func TestHashSpread(t *testing.T) {
	// Sequential integers spread evenly over partitions.
	n, parts := 100_000, 16
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(i)
	}
	h := hashOf(t, int64s(vals, nil))
	counts := make([]int, parts)
	for _, x := range h {
		counts[x%uint64(parts)]++
	}
	for p, c := range counts {
		if c < n/parts*9/10 || c > n/parts*11/10 {
			t.Errorf("partition %d got %d of %d rows: %v", p, c, n, counts)
		}
	}
}

func ExampleHashColumns() {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	keys := b.NewArray()
	hashes := make([]uint64, keys.Len())
	if err := shuffle.HashColumns([]arrow.Array{keys}, hashes); err != nil {
		panic(err)
	}
	for _, h := range hashes {
		fmt.Println(h % 4) // the row's partition of 4
	}
	// Output:
	// 0
	// 2
	// 2
}
