package exec

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// tryCastArray is castArray with TRY_CAST semantics: a value that cannot
// be converted becomes NULL instead of failing the query. The whole array
// is cast at once; only when that fails are the rows cast one by one.
func tryCastArray(mem memory.Allocator, a arrow.Array, to plan.DataType) (arrow.Array, error) {
	if from := typeOfArrow(a.DataType()); from.ID != plan.Null && to.ID != plan.Null && from != to && (from.IsNested() || to.IsNested()) {
		return castNested(mem, a, from, to, true) // NULL elements, not NULL rows, where an element fails
	}
	out, err := castArray(mem, a, to)
	if err == nil {
		return out, nil
	}
	n := a.Len()
	var srcs []arrow.Array
	defer func() { releaseAll(srcs) }()
	bi, ri := make([]int32, n), make([]int32, n)
	for i := 0; i < n; i++ {
		bi[i] = -1
		if a.IsNull(i) {
			continue
		}
		one := array.NewSlice(a, int64(i), int64(i+1))
		c, err := castArray(mem, one, to)
		one.Release()
		if err != nil {
			continue
		}
		bi[i] = int32(len(srcs))
		srcs = append(srcs, c)
	}
	return takeMultiNullable(mem, to.Arrow(), srcs, bi, ri)
}

// parseIntText parses an integer as DuckDB casts text to BIGINT: decimal
// digits, or a number with a fraction or exponent rounded half away from
// zero ('1.5' is 2, '1e3' is 1000). ok is false for bad text or a value
// out of range.
func parseIntText(b []byte) (int64, bool) {
	s := bstr(b)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	if len(s) > 0 && s[0] == '+' {
		s = s[1:]
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+') {
			return 0, false // no inf, nan or hex
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	r := math.Round(f)
	if math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
		return 0, false
	}
	return int64(r), true
}
