// Comparison loops, one per operator, unrolled by 8 so each output byte of
// the result bitmap is assembled from eight branch-free comparisons. The
// generic instantiations (int64, float64, int32) compile to specialised code.

package exec

import "github.com/sluicedb/sluice/planner/plan"

// cmpAA sets bit i of out to a[i] op b[i]. out is zeroed and len(a) == len(b).
func cmpAA[T int64 | float64 | int32](op plan.Op, a, b []T, out []byte) {
	n := len(a)
	b = b[:n]
	n8 := n &^ 7
	switch op {
	case plan.OpEq:
		for i := 0; i < n8; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = b2u(x[0] == y[0]) | b2u(x[1] == y[1])<<1 | b2u(x[2] == y[2])<<2 | b2u(x[3] == y[3])<<3 | b2u(x[4] == y[4])<<4 | b2u(x[5] == y[5])<<5 | b2u(x[6] == y[6])<<6 | b2u(x[7] == y[7])<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] == b[i]) << (uint(i) & 7)
		}
	case plan.OpNe:
		for i := 0; i < n8; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = b2u(x[0] != y[0]) | b2u(x[1] != y[1])<<1 | b2u(x[2] != y[2])<<2 | b2u(x[3] != y[3])<<3 | b2u(x[4] != y[4])<<4 | b2u(x[5] != y[5])<<5 | b2u(x[6] != y[6])<<6 | b2u(x[7] != y[7])<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] != b[i]) << (uint(i) & 7)
		}
	case plan.OpLt:
		for i := 0; i < n8; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = b2u(x[0] < y[0]) | b2u(x[1] < y[1])<<1 | b2u(x[2] < y[2])<<2 | b2u(x[3] < y[3])<<3 | b2u(x[4] < y[4])<<4 | b2u(x[5] < y[5])<<5 | b2u(x[6] < y[6])<<6 | b2u(x[7] < y[7])<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] < b[i]) << (uint(i) & 7)
		}
	case plan.OpLe:
		for i := 0; i < n8; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = b2u(x[0] <= y[0]) | b2u(x[1] <= y[1])<<1 | b2u(x[2] <= y[2])<<2 | b2u(x[3] <= y[3])<<3 | b2u(x[4] <= y[4])<<4 | b2u(x[5] <= y[5])<<5 | b2u(x[6] <= y[6])<<6 | b2u(x[7] <= y[7])<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] <= b[i]) << (uint(i) & 7)
		}
	case plan.OpGt:
		for i := 0; i < n8; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = b2u(x[0] > y[0]) | b2u(x[1] > y[1])<<1 | b2u(x[2] > y[2])<<2 | b2u(x[3] > y[3])<<3 | b2u(x[4] > y[4])<<4 | b2u(x[5] > y[5])<<5 | b2u(x[6] > y[6])<<6 | b2u(x[7] > y[7])<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] > b[i]) << (uint(i) & 7)
		}
	case plan.OpGe:
		for i := 0; i < n8; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = b2u(x[0] >= y[0]) | b2u(x[1] >= y[1])<<1 | b2u(x[2] >= y[2])<<2 | b2u(x[3] >= y[3])<<3 | b2u(x[4] >= y[4])<<4 | b2u(x[5] >= y[5])<<5 | b2u(x[6] >= y[6])<<6 | b2u(x[7] >= y[7])<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] >= b[i]) << (uint(i) & 7)
		}
	}
}

// cmpAS sets bit i of out to a[i] op c. out is zeroed.
func cmpAS[T int64 | float64 | int32](op plan.Op, a []T, c T, out []byte) {
	n := len(a)
	n8 := n &^ 7
	switch op {
	case plan.OpEq:
		for i := 0; i < n8; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = b2u(x[0] == c) | b2u(x[1] == c)<<1 | b2u(x[2] == c)<<2 | b2u(x[3] == c)<<3 | b2u(x[4] == c)<<4 | b2u(x[5] == c)<<5 | b2u(x[6] == c)<<6 | b2u(x[7] == c)<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] == c) << (uint(i) & 7)
		}
	case plan.OpNe:
		for i := 0; i < n8; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = b2u(x[0] != c) | b2u(x[1] != c)<<1 | b2u(x[2] != c)<<2 | b2u(x[3] != c)<<3 | b2u(x[4] != c)<<4 | b2u(x[5] != c)<<5 | b2u(x[6] != c)<<6 | b2u(x[7] != c)<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] != c) << (uint(i) & 7)
		}
	case plan.OpLt:
		for i := 0; i < n8; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = b2u(x[0] < c) | b2u(x[1] < c)<<1 | b2u(x[2] < c)<<2 | b2u(x[3] < c)<<3 | b2u(x[4] < c)<<4 | b2u(x[5] < c)<<5 | b2u(x[6] < c)<<6 | b2u(x[7] < c)<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] < c) << (uint(i) & 7)
		}
	case plan.OpLe:
		for i := 0; i < n8; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = b2u(x[0] <= c) | b2u(x[1] <= c)<<1 | b2u(x[2] <= c)<<2 | b2u(x[3] <= c)<<3 | b2u(x[4] <= c)<<4 | b2u(x[5] <= c)<<5 | b2u(x[6] <= c)<<6 | b2u(x[7] <= c)<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] <= c) << (uint(i) & 7)
		}
	case plan.OpGt:
		for i := 0; i < n8; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = b2u(x[0] > c) | b2u(x[1] > c)<<1 | b2u(x[2] > c)<<2 | b2u(x[3] > c)<<3 | b2u(x[4] > c)<<4 | b2u(x[5] > c)<<5 | b2u(x[6] > c)<<6 | b2u(x[7] > c)<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] > c) << (uint(i) & 7)
		}
	case plan.OpGe:
		for i := 0; i < n8; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = b2u(x[0] >= c) | b2u(x[1] >= c)<<1 | b2u(x[2] >= c)<<2 | b2u(x[3] >= c)<<3 | b2u(x[4] >= c)<<4 | b2u(x[5] >= c)<<5 | b2u(x[6] >= c)<<6 | b2u(x[7] >= c)<<7
		}
		for i := n8; i < n; i++ {
			out[i>>3] |= b2u(a[i] >= c) << (uint(i) & 7)
		}
	}
}
