package plan

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestAppendDecimal checks the allocation-free decimal text against
// math/big's exact rendering over edge and random values.
func TestAppendDecimal(t *testing.T) {
	vals := []int64{0, 1, -1, 5, -5, 99, 100, -100, 12345, -12345, math.MaxInt64, math.MinInt64, 999999999999999999, -1000000000000000000}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, r.Int64()>>r.IntN(63))
		vals = append(vals, -(r.Int64() >> r.IntN(63)))
	}
	for _, v := range vals {
		for scale := 0; scale <= 20; scale++ {
			want := new(big.Float).SetPrec(200).Quo(new(big.Float).SetPrec(200).SetInt64(v),
				new(big.Float).SetPrec(200).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))).Text('f', scale)
			if got := string(AppendDecimal(nil, v, scale)); got != want {
				t.Fatalf("AppendDecimal(%d, %d) = %q, want %q", v, scale, got, want)
			}
			if scale <= 18 {
				if got := FormatDecimal(v, scale); got != want && v != math.MinInt64 {
					t.Fatalf("FormatDecimal(%d, %d) = %q, want %q", v, scale, got, want)
				}
			}
		}
	}
}

// TestAppendDate checks the civil-date arithmetic against the time package
// on every day from 1600 to 2500 and at the ends of the range.
func TestAppendDate(t *testing.T) {
	check := func(d int32) {
		if got, want := string(AppendDate(nil, d)), formatDateSlow(d); got != want {
			t.Fatalf("AppendDate(%d) = %q, want %q", d, got, want)
		}
	}
	for d := int32(-135000); d <= 194000; d++ {
		check(d)
	}
	for _, d := range []int32{math.MinInt32, math.MaxInt32, -719162, -719163, 2932896, 2932897} {
		check(d)
	}
}

// TestAppendTimestamp checks the allocation-free timestamp text against
// FormatTimestamp.
func TestAppendTimestamp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []int64{0, -1, 1, MicrosPerDay - 1, -MicrosPerDay, 1_700_000_000_123_450, -62135596800000000, -62135596800000001, 253402300799999999, 253402300800000000, math.MinInt64 / 2, math.MaxInt64 / 2}
	for range 100000 {
		vals = append(vals, r.Int64N(1<<59)-(1<<58), r.Int64N(400*365*MicrosPerDay)-200*365*MicrosPerDay)
	}
	for _, v := range vals {
		if got, want := string(AppendTimestamp(nil, v)), FormatTimestamp(v); got != want {
			t.Fatalf("AppendTimestamp(%d) = %q, want %q", v, got, want)
		}
	}
}
