package tests

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestWideIntSums sums 64-bit ids near the int64 limits, as a table of
// user ids does: DuckDB sums integers in a HUGEINT (128 bits) and so does
// sluice, as decimal(38,0), in the hash aggregate (partial and final
// states through the shuffle, adaptive and static) and in window sums.
// The sums are compared to the last digit (cast to varchar), and the
// result types of expressions over a sum are DuckDB's, with its HUGEINT
// spelled DECIMAL(38,0). (Not yet: sum(x) // 2, DuckDB HUGEINT, is a
// DOUBLE in sluice: // divides integers only.)
func TestWideIntSums(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	writeParquet(t, dir, "ids", schema, 3, 3000, func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.Int64Builder).Append(int64(i % 4))
		switch {
		case i%97 == 0:
			b.Field(1).(*array.Int64Builder).AppendNull()
		case i%4 == 3: // a group of negative ids near the lower limit
			b.Field(1).(*array.Int64Builder).Append(math.MinInt64 + rng.Int64N(1000))
		case i%4 == 2: // a group that sums to near 0 from both limits
			if i%8 == 2 {
				b.Field(1).(*array.Int64Builder).Append(math.MaxInt64 - rng.Int64N(5))
			} else {
				b.Field(1).(*array.Int64Builder).Append(math.MinInt64 + 1 + rng.Int64N(5))
			}
		default:
			b.Field(1).(*array.Int64Builder).Append(math.MaxInt64 - rng.Int64N(1_000_000))
		}
		if i%50 == 0 {
			b.Field(2).(*array.Int32Builder).AppendNull()
		} else {
			b.Field(2).(*array.Int32Builder).Append(int32(rng.Int64N(2_000_000_000)))
		}
	})
	db := openDuckTables(t, dir, "ids")
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"select cast(sum(id) as varchar), avg(id), count(id), cast(sum(small) as varchar) from ids",
		"select g, cast(sum(id) as varchar), avg(id), cast(sum(small) as varchar), cast(sum(id) + 1 as varchar), sum(id) / 2, sum(id) / count(id) from ids group by g order by g",
		"select g, cast(sum(id) - sum(id) + 7 as varchar), sum(small) > 1000, sum(id) = 0, cast(coalesce(sum(small), 0) as varchar), cast(case when g = 0 then sum(small) else 1 end as varchar) from ids group by g order by g",
		"select g, sum(small) * 1.0, sum(small) * 2.5, cast(sum(small) as bigint), cast(sum(small) as double) from ids group by g order by g",
		"select g, cast(sum(id) as varchar) from ids where g = 2 group by g having sum(id) < 10000000000000000000 order by g",
		"select g, id, cast(sum(id) over (partition by g order by id, small rows between 2 preceding and current row) as varchar), avg(id) over (partition by g order by id, small rows between 2 preceding and current row) from ids where id is not null order by g, id, small limit 60",
		"select g, cast(sum(id) over (partition by g) as varchar), cast(sum(small) over (order by g range between unbounded preceding and current row) as varchar) from ids group by g, id, small order by g limit 20",
		"select cast(sum(id) as varchar) from ids where id is null",
		"select cast(sum(x) as varchar) from (values (9223372036854775807), (9223372036854775807), (-1)) t(x)",
	}
	for i, q := range queries {
		want := duckRows(t, db, q)
		for _, adaptive := range []bool{true, false} {
			t.Run(fmt.Sprintf("q%02d/adaptive=%v", i, adaptive), func(t *testing.T) {
				res := run(t, st, q, adaptive)
				compareRows(t, sluiceRows(res), want, strings.Contains(q, "order by"))
			})
		}
	}
	// Result types: DuckDB's, with HUGEINT as decimal(38,0).
	for _, e := range []string{
		"sum(small)", "sum(id)", "sum(small) + 1", "sum(small) - 1", "sum(small) * 2", "sum(small) / 2",
		"sum(small) % 7", "sum(small)::bigint", "sum(small)::double", "sum(small) * 1.0", "sum(small) + 1.5",
		"sum(small) / count(small)", "coalesce(sum(small), 0)", "case when count(*) > 0 then sum(small) else 1 end",
		"avg(id)", "-sum(small)", "abs(sum(small))", "sum(small) + sum(id)",
	} {
		var want string
		if err := db.QueryRow("select typeof(" + e + ") from ids limit 1").Scan(&want); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if want == "HUGEINT" {
			want = "DECIMAL(38,0)"
		}
		res := run(t, st, "select "+e+" from ids limit 1", false)
		if got := duckTypeName(res.Schema.Field(0).Type); got != want {
			t.Errorf("%s: sluice type %s, DuckDB %s", e, got, want)
		}
	}
}
