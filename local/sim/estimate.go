package sim

import (
	"math"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

// The estimates a modelled function returns instead of running operators:
// rows out of each operator of its fragment, from the rows it reads (its
// splits' row groups, or the rows of the shuffle objects in its spec) and
// the tables' synthesized column statistics. The rules are the textbook
// ones (as the planner's own join-order estimator, planner/estimate.go):
// a constant selectivity per kind of predicate (1/ndv for an equality on
// a column whose ndv is known), groups as the distinct values of the keys
// expected in the rows seen, a key join of |L|·|R|/ndv(key).

// columnStats gives a column's distinct values at the simulated scale (0:
// unknown).
type columnStats interface{ NDV(col string) float64 }

// taskView is what an estimate of one task knows.
type taskView struct {
	spec  *function.TaskSpec
	stats columnStats
	files map[string]layout.File // virtual table files by key
	// parts is the output partition count of each upstream stage (what
	// its tasks wrote), by stage id.
	parts map[int]int
}

// flow is the estimate of an operator's output in one task: rows, and
// the fraction of the key space the task's rows cover (1 for scans and
// whole reads; the share of partitions read from a hash exchange).
type flow struct {
	rows    float64
	keyFrac float64
}

// scanned returns the rows and bytes of the task's splits.
func (v *taskView) scanned() (rows, bytes float64) {
	for _, sp := range v.spec.Splits {
		f, ok := v.files[sp.Key]
		if !ok {
			bytes += float64(sp.Size)
			continue
		}
		if len(sp.RowGroups) == 0 {
			for _, rg := range f.RowGroups {
				rows += float64(rg.Rows)
				bytes += float64(rg.Bytes)
			}
			continue
		}
		for _, i := range sp.RowGroups {
			if i >= 0 && i < len(f.RowGroups) {
				rows += float64(f.RowGroups[i].Rows)
				bytes += float64(f.RowGroups[i].Bytes)
			}
		}
	}
	return rows, bytes
}

// exchange returns the rows and key fraction of what the task reads of
// an upstream stage.
func (v *taskView) exchange(n *plan.Node) flow {
	var rows float64
	partsRead := map[int]bool{}
	for _, in := range v.spec.Inputs {
		if in.Stage != n.Stage {
			continue
		}
		for _, o := range in.Objects {
			rows += float64(o.Rows)
			partsRead[o.Part] = true
		}
	}
	frac := 1.0
	if count := v.parts[n.Stage]; count > 1 && !n.Whole && len(partsRead) > 0 {
		frac = math.Min(1, float64(len(partsRead))/float64(count))
	}
	return flow{rows: rows, keyFrac: frac}
}

// estimate returns the output of node n of the task's fragment.
func (v *taskView) estimate(n *plan.Node) flow {
	switch n.Kind {
	case plan.KindScan:
		if n.Scan != nil && n.Scan.Inline {
			// A small table read inside its reader: the whole table.
			var rows float64
			for _, sf := range n.Scan.Files {
				for _, rg := range v.files[sf.Key].RowGroups {
					rows += float64(rg.Rows)
				}
			}
			return flow{rows: rows, keyFrac: 1}
		}
		rows, _ := v.scanned()
		return flow{rows: rows, keyFrac: 1}
	case plan.KindExchange:
		return v.exchange(n)
	case plan.KindEmpty:
		return flow{keyFrac: 1}
	case plan.KindValues:
		return flow{rows: float64(len(n.Rows)), keyFrac: 1}
	case plan.KindSingleRow:
		return flow{rows: 1, keyFrac: 1}
	}
	var in []flow
	for _, c := range n.Inputs {
		in = append(in, v.estimate(c))
	}
	if len(in) == 0 {
		return flow{keyFrac: 1}
	}
	out := in[0]
	switch n.Kind {
	case plan.KindFilter:
		out.rows *= v.selectivity(n.Predicate, n.Inputs[0].Schema)
	case plan.KindAggregate:
		if n.Aggregate == nil || len(n.Aggregate.GroupBy) == 0 {
			out.rows = math.Min(out.rows, 1)
			break
		}
		ndv := 1.0
		for _, g := range n.Aggregate.GroupBy {
			d := v.ndvOf(g, n.Inputs[0].Schema)
			if d <= 0 {
				d = math.Max(out.rows/out.keyFrac, 1)
			}
			ndv *= d
		}
		ndv *= out.keyFrac // a task of a hash exchange sees its share of the keys
		out.rows = distinctIn(out.rows, ndv)
	case plan.KindLimit:
		if n.Limit >= 0 {
			out.rows = math.Min(out.rows, float64(n.Limit+n.Offset))
		}
	case plan.KindSort:
		if n.Limit >= 0 {
			out.rows = math.Min(out.rows, float64(n.Limit))
		}
	case plan.KindExpand:
		out.rows *= float64(max(1, len(n.Expand)))
	case plan.KindUnion:
		for _, f := range in[1:] {
			out.rows += f.rows
			out.keyFrac = math.Min(out.keyFrac, f.keyFrac)
		}
	case plan.KindCrossJoin:
		if len(in) == 2 {
			out.rows = in[0].rows * in[1].rows
		}
	case plan.KindHashJoin:
		if len(in) == 2 && n.Join != nil {
			out = v.join(n, in[0], in[1])
		}
	}
	return out
}

// join estimates a hash join: a key match of the two sides relates a key
// to references to it, so an inner join yields |L|·|R|/ndv rows, ndv the
// keys' distinct values in the part of the key space the task covers.
func (v *taskView) join(n *plan.Node, l, r flow) flow {
	frac := math.Min(l.keyFrac, r.keyFrac)
	ndv := 1.0
	for i, k := range n.Join.LeftKeys {
		d := v.ndvOf(k, n.Inputs[0].Schema)
		if i < len(n.Join.RightKeys) {
			d = math.Max(d, v.ndvOf(n.Join.RightKeys[i], n.Inputs[1].Schema))
		}
		if d <= 0 {
			d = math.Max(l.rows/l.keyFrac, r.rows/r.keyFrac)
		}
		ndv *= d
	}
	ndv = math.Max(ndv*frac, 1)
	// A key join relates a key to the references to it: no more rows
	// than the bigger side (a many-to-many join would need value
	// frequencies the synthesized statistics do not have).
	inner := math.Min(l.rows*r.rows/ndv, math.Max(l.rows, r.rows))
	// The share of the left side's keys the right side holds (a filtered
	// dimension keeps its fraction of the facts).
	match := math.Min(1, r.rows/ndv)
	out := flow{keyFrac: frac}
	switch n.Join.Type {
	case plan.JoinInner:
		out.rows = inner
	case plan.JoinLeft:
		out.rows = math.Max(inner, l.rows)
	case plan.JoinRight:
		out.rows = math.Max(inner, r.rows)
	case plan.JoinFull:
		out.rows = math.Max(inner, l.rows+r.rows)
	case plan.JoinSemi:
		out.rows = l.rows * match
	case plan.JoinAnti:
		out.rows = l.rows * (1 - match)
	case plan.JoinRightSemi, plan.JoinRightAnti:
		// the build (right) side's rows, by the share of its keys the
		// probe side holds
		m := math.Min(1, l.rows/ndv)
		out.rows = r.rows * m
		if n.Join.Type == plan.JoinRightAnti {
			out.rows = r.rows * (1 - m)
		}
	default:
		out.rows = inner
	}
	if n.Join.Filter != nil {
		out.rows *= 0.5
	}
	return out
}

// distinctIn is the expected number of distinct values among rows drawn
// uniformly from a domain of ndv values.
func distinctIn(rows, ndv float64) float64 {
	if ndv <= 0 || rows <= 0 {
		return 0
	}
	return ndv * -math.Expm1(-rows/ndv)
}

// ndvOf is the distinct values of expression e over schema, 0 if unknown.
func (v *taskView) ndvOf(e *plan.Expr, sch plan.Schema) float64 {
	if e == nil {
		return 0
	}
	switch e.Op {
	case plan.OpColumn:
		name := e.Name
		if e.Col >= 0 && e.Col < len(sch) {
			name = sch[e.Col].Name
		}
		if d := v.stats.NDV(name); d > 0 {
			return d
		}
		return v.stats.NDV(e.Name)
	case plan.OpCast:
		if len(e.Args) == 1 {
			return v.ndvOf(e.Args[0], sch)
		}
	case plan.OpExtract:
		return 7 // a year of the TPC-H dates
	}
	return 0
}

// Selectivities of predicates whose operands say nothing better.
const (
	selEqual = 0.1
	selRange = 0.3  // one bound
	selPair  = 0.25 // two bounds of one column (BETWEEN)
	selLike  = 0.1
	selNull  = 0.05
	selOther = 0.5
)

// selectivity is the fraction of rows predicate e keeps.
func (v *taskView) selectivity(e *plan.Expr, sch plan.Schema) float64 {
	if e == nil {
		return 1
	}
	switch e.Op {
	case plan.OpAnd:
		if len(e.Args) == 2 && isRange(e.Args[0]) && isRange(e.Args[1]) && sameColumn(e.Args[0], e.Args[1]) {
			return selPair
		}
		s := 1.0
		for _, a := range e.Args {
			s *= v.selectivity(a, sch)
		}
		return s
	case plan.OpOr:
		keep := 1.0
		for _, a := range e.Args {
			keep *= 1 - v.selectivity(a, sch)
		}
		return 1 - keep
	case plan.OpNot:
		if len(e.Args) == 1 {
			return 1 - v.selectivity(e.Args[0], sch)
		}
	case plan.OpEq, plan.OpNe:
		s := selEqual
		if len(e.Args) == 2 && (e.Args[0].Op == plan.OpLiteral || e.Args[1].Op == plan.OpLiteral) {
			d := math.Max(v.ndvOf(e.Args[0], sch), v.ndvOf(e.Args[1], sch))
			if d > 0 {
				s = 1 / d
			}
		}
		if e.Op == plan.OpNe {
			return 1 - s
		}
		return s
	case plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		return selRange
	case plan.OpLike:
		if e.Negated {
			return 1 - selLike
		}
		return selLike
	case plan.OpIn:
		k := float64(max(len(e.Args)-1, 1))
		s := k * selEqual
		if len(e.Args) > 0 {
			if d := v.ndvOf(e.Args[0], sch); d > 0 {
				s = k / d
			}
		}
		s = math.Min(s, 1)
		if e.Negated {
			return 1 - s
		}
		return s
	case plan.OpIsNull:
		return selNull
	case plan.OpIsNotNull:
		return 1 - selNull
	case plan.OpLiteral:
		if e.Value != nil && !e.Value.Null && !e.Value.B {
			return 0
		}
		return 1
	}
	return selOther
}

func isRange(e *plan.Expr) bool {
	switch e.Op {
	case plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		return len(e.Args) == 2
	}
	return false
}

func sameColumn(a, b *plan.Expr) bool {
	col := func(e *plan.Expr) int {
		for _, x := range e.Args {
			if x.Op == plan.OpColumn {
				return x.Col
			}
		}
		return -1
	}
	return col(a) >= 0 && col(a) == col(b)
}

// rowWidth is the nominal in-memory bytes of a row of schema s (the
// planner's widths: strings 24 bytes).
func rowWidth(s plan.Schema) float64 {
	w := 0.0
	for _, f := range s {
		switch f.Type.ID {
		case plan.Bool:
			w++
		case plan.Date:
			w += 4
		case plan.String:
			w += 24
		case plan.Decimal:
			if f.Type.Wide() {
				w += 16
			} else {
				w += 8
			}
		default:
			w += 8
		}
	}
	return math.Max(w, 1)
}
