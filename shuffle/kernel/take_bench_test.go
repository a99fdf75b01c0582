package kernel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkTake gathers a quarter of 64Ki rows (as a filter or a 4-way
// partitioning does) of each layout, with and without nulls.
func BenchmarkTake(b *testing.B) {
	const n = 64 << 10
	r := rand.New(rand.NewSource(1))
	var idx []int32
	for i := 0; i < n; i++ {
		if r.Intn(4) == 0 {
			idx = append(idx, int32(i))
		}
	}
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean,
		arrow.PrimitiveTypes.Int64,
		&arrow.Decimal128Type{Precision: 38, Scale: 2},
		arrow.BinaryTypes.String,
	}
	for _, nullPct := range []int{0, 15} {
		for _, dt := range types {
			a := randArray(b, memory.DefaultAllocator, r, dt, n, 0, nullPct)
			b.Run(fmt.Sprintf("%s/nulls=%d%%", dt, nullPct), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					o, err := Take(memory.DefaultAllocator, a, idx)
					if err != nil {
						b.Fatal(err)
					}
					o.Release()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(idx)), "ns/row")
			})
			a.Release()
		}
	}
}
