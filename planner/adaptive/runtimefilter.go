package adaptive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// RuntimeFilter filters the probe side of a join by the keys its build
// side really produced (runtime filters across stages, as Trino's and
// Spark's dynamic filtering): the scan feeding the probe side reads only
// row groups whose statistics may hold one of the build keys, and drops
// the rows whose key is none of them before they are shuffled or joined.
//
// Trigger, in two steps over an edge: a hash join whose unmatched probe
// rows are dropped (inner, semi, or right: plan.JoinType.DropsUnmatchedProbe)
// with a key that is a plain column on both sides, of one summarizable
// type (plan.SummaryType), whose build key is an output column of a stage
// B (through filters, plain projections and joins, and on into the stages
// B reads and across inner joins' equal keys into their build sides:
// buildSources, one edge per source, nearest first) and whose probe key is
// a column of a scan in a pending stage T (through filters, plain
// projections, the probe side of per-probe-row joins, plain-column group
// keys of aggregations, and exchanges from stages read by that exchange
// alone). A semi or anti join (EXISTS, IN, NOT EXISTS; not NOT IN) has
// the reverse edge too: its probe side, the outer
// query, is B, and the scans of its build side, the subquery, are T,
// since a subquery row whose key no outer row has marks nothing (TPC-H
// Q4: the orders of one quarter, and the lineitem rows of those orders).
//  1. B pending, and T's scan measured at least
//     Config.RuntimeFilterProbeBytes (or not measured): B's tasks are asked
//     to summarize the column (plan.Stage.Summarize): min, max, NULL count
//     and the distinct values while there are at most
//     plan.MaxSummaryValues. inline-scans then leaves B a stage of its own
//     (inlined into its readers, it would have no output to summarize).
//  2. B done with a summary, T still pending: the scan gets
//     key >= min AND key <= max (AND key IN (values) when the set is
//     known) in its pruning filter, which row-group and hive partition
//     pruning read, and a Filter node right above it with the IN list (or
//     the range); the scan records it (plan.Scan.RuntimeFilters) so it is
//     added once.
//
// Safe because every row the filter drops has a key outside the build
// side's non-NULL keys (or a NULL key): it matches no build row, and the
// join drops it; on its way from the scan to the join, every operator
// passes each row on by itself (filters, projections, exchanges, the
// probe side of inner/left/semi/anti joins), so dropping it early removes
// only the rows the join would have dropped; below an inner join a row of
// either side only makes output rows carrying its key (or the key it
// equals), which the join above drops alike. The summary is of committed
// task outputs only (a retried or duplicated attempt does not count), so
// it covers exactly the rows the join reads. An empty build side is
// propagate-empty's; a build side whose keys are all NULL filters out
// every probe row.
type RuntimeFilter struct{}

func (RuntimeFilter) Name() string { return "runtime-filter" }

func (RuntimeFilter) Apply(s *State) (string, error) {
	if !s.Config.RuntimeFilters {
		return "", nil
	}
	var notes []string
	for _, e := range FilterEdges(s.Graph) {
		if !s.Pending(e.Probe) {
			continue // already runs: too late to filter it
		}
		if s.Skipped(e.Build) {
			continue
		}
		if e.onExchange() && !s.exchangeTakes(e) {
			continue // the stages it reads take the filter, or took it
		}
		b := s.Graph.Stage(e.Build)
		done, ok := s.Done[e.Build]
		if !ok {
			if s.Running[e.Build] || slices.Contains(b.Summarize, e.BuildColumn) {
				continue // too late to ask, or asked already
			}
			if size, measured := s.probeBytes(e); measured && size < s.Config.RuntimeFilterProbeBytes {
				continue // a small probe side: not worth a stage inline-scans could save
			}
			b.Summarize = append(b.Summarize, e.BuildColumn)
			slices.Sort(b.Summarize)
			notes = append(notes, fmt.Sprintf("stage %d summarizes %s for %s in stage %d",
				e.Build, b.Root.Schema[e.BuildColumn].Name, e.describeTarget(), e.Probe))
			continue
		}
		sum := done.Summary(e.BuildColumn)
		if sum == nil || sum.Rows == 0 || sum.Type != e.Type || hasRuntimeFilter(e) || hasNearerFilter(s.Graph, e) {
			continue // no summary; an empty build side (propagate-empty's); added already, or a tighter one
		}
		if err := sum.Validate(); err != nil {
			return "", fmt.Errorf("runtime-filter: stage %d: %w", e.Build, err)
		}
		rf, rows, prune := filterOf(sum, e)
		if rows == nil {
			continue // no range known: nothing to filter by
		}
		if e.onExchange() {
			// Rows dropped as the shuffle is read (the stages writing it
			// run or ran already): the filter goes on the exchange leaf,
			// which stays where join rules look for it. A set of keys;
			// a range or a Bloom filter of more keys only from a build
			// side the planner called selective (FilterBuild): otherwise
			// it rarely drops rows its join does not drop as cheaply
			// (TPC-H Q18's 1.5 M customers filtered every order, and
			// dropped none), and the shuffle is read whole either way.
			if rf.Kind != "set" && rf.Kind != "none" && !b.FilterBuild {
				continue
			}
			x := e.target
			if rf.Kind == "bloom" && x.Bloom != nil {
				rf.Kind = "range" // one Bloom filter a leaf: this one filters by its range
			}
			x.Predicate = and(x.Predicate, rows)
			if rf.Kind == "bloom" {
				x.Bloom = &plan.BloomProbe{Column: e.ScanColumn, Bits: sum.Bloom}
			}
			x.RuntimeFilters = append(x.RuntimeFilters, rf)
			notes = append(notes, fmt.Sprintf("stage %d read of stage %d: %s %s from stage %d (%d build rows)",
				e.Probe, x.Stage, x.Schema[e.ScanColumn].Name, describeFilter(rf, sum), e.Build, sum.Rows))
			continue
		}
		sc := e.target.Scan
		sc.Filter = and(sc.Filter, prune)
		sc.RuntimeFilters = append(sc.RuntimeFilters, rf)
		// Above whatever hangs there now: an earlier filter of this round
		// stays below.
		f := &plan.Node{Kind: plan.KindFilter, Schema: e.target.Schema, Inputs: []*plan.Node{*e.slot}, Predicate: rows, Limit: -1}
		if rf.Kind == "bloom" {
			f.Bloom = &plan.BloomProbe{Column: e.ScanColumn, Bits: sum.Bloom}
		}
		*e.slot = f
		notes = append(notes, fmt.Sprintf("stage %d scan %s: %s %s from stage %d (%d build rows)",
			e.Probe, sc.Table, e.target.Schema[e.ScanColumn].Name, describeFilter(rf, sum), e.Build, sum.Rows))
	}
	return strings.Join(notes, "; "), nil
}

// and returns a AND b, or b alone when a is nil.
func and(a, b *plan.Expr) *plan.Expr {
	if a == nil {
		return b
	}
	return plan.Call(plan.OpAnd, plan.BoolType, a, b)
}

// FilterEdge is one join key a runtime filter can carry from a build
// stage's output column to a column of a probe-side stage: of a scan, or
// of an exchange leaf (a shuffle read, filtered when the stages writing
// it run already).
type FilterEdge struct {
	// Join is the stage holding the join.
	Join int
	// Build and BuildColumn: the stage whose output is the join's build
	// side (its probe side for the reverse edge of a semi or anti join),
	// and the column holding
	// the key.
	Build       int
	BuildColumn int
	// Probe and ScanColumn: the stage holding the scan (or exchange leaf)
	// the probe key comes from, and the leaf's output column.
	Probe      int
	ScanColumn int
	Type       plan.DataType
	JoinType   plan.JoinType

	target *plan.Node  // the scan or the exchange leaf
	slot   **plan.Node // where a scan (or a filter above it) hangs
	// below are, for an exchange leaf, the edges to the leaves of the
	// stages it reads that the key reaches (probeTargets).
	below []FilterEdge
}

// onExchange reports whether the edge's target is an exchange leaf.
func (e FilterEdge) onExchange() bool { return e.target.Kind == plan.KindExchange }

// records are the runtime filters the target carries.
func (e FilterEdge) records() []plan.RuntimeFilter {
	if e.onExchange() {
		return e.target.RuntimeFilters
	}
	return e.target.Scan.RuntimeFilters
}

// describeTarget names the target for the round record.
func (e FilterEdge) describeTarget() string {
	if e.onExchange() {
		return fmt.Sprintf("the read of stage %d", e.target.Stage)
	}
	return "the scan of " + e.target.Scan.Table
}

// exchangeTakes reports whether exchange edge e may take its filter: no
// leaf below it (in the stages it reads) is in a pending stage, where the
// filter drops the rows earlier, or has the filter (or a nearer one)
// already, so that the rows come filtered.
func (s *State) exchangeTakes(e FilterEdge) bool {
	for _, b := range e.below {
		if s.Pending(b.Probe) || hasRuntimeFilter(b) || hasNearerFilter(s.Graph, b) {
			return false
		}
	}
	return true
}

// probeBytes is what the probe side of e was measured to read: the scan's
// table bytes, or the shuffle bytes the stage read by an exchange wrote.
func (s *State) probeBytes(e FilterEdge) (int64, bool) {
	if e.onExchange() {
		if d := s.Done[e.target.Stage]; d != nil {
			return d.Bytes, true
		}
		return 0, false
	}
	size, ok := s.Scans[e.Probe]
	return size.Bytes, ok
}

// FilterEdges lists the runtime filter edges of g, whatever state its
// stages are in (the rule and the coordinator's scheduling check that).
func FilterEdges(g *plan.Graph) []FilterEdge {
	var out []FilterEdge
	for _, st := range g.Stages {
		var walk func(n *plan.Node)
		walk = func(n *plan.Node) {
			if n == nil {
				return
			}
			for _, c := range n.Inputs {
				walk(c)
			}
			if n.Kind != plan.KindHashJoin || n.Join == nil || len(n.Inputs) != 2 {
				return
			}
			// The build side's keys filter the probe side; and the outer
			// side's keys of a semi or anti join (EXISTS, IN, NOT EXISTS;
			// not NOT IN) filter its subquery side, whose rows only mark
			// outer rows: TPC-H Q4's orders of one quarter and the
			// lineitem rows of those orders. Inner and left joins, which
			// also ignore unmatched build rows, are left one way: the
			// planner builds them on the smaller side already, and a
			// summary of the larger side costs more than it saves.
			forward := n.Join.Type.DropsUnmatchedProbe()
			reverse := n.Join.Type.BuildOnlyMarks() && !n.Join.NullAware
			if !forward && !reverse {
				return
			}
			for i := range min(len(n.Join.LeftKeys), len(n.Join.RightKeys)) {
				lk, rk := n.Join.LeftKeys[i], n.Join.RightKeys[i]
				if lk.Op != plan.OpColumn || rk.Op != plan.OpColumn || lk.Type != rk.Type || !plan.SummaryType(lk.Type) {
					continue // an expression key (a cast on one side, say)
				}
				edges := func(from, to int, fromCol, toCol int) {
					for _, src := range buildSources(g, n.Inputs[from], fromCol) {
						e := FilterEdge{Join: st.ID, Build: src.stage, BuildColumn: src.col, Type: lk.Type, JoinType: n.Join.Type}
						for _, t := range probeTargets(g, st.ID, &n.Inputs[to], toCol, e) {
							if t.onExchange() && t.Probe == st.ID && passesRows(n.Inputs[to], t.target) {
								continue // the join's own input: it drops those rows as cheaply
							}
							if t.Probe != src.stage && !dependsOn(g, src.stage, t.Probe) {
								out = append(out, t)
							}
						}
					}
				}
				if forward {
					edges(1, 0, rk.Col, lk.Col)
				}
				if reverse {
					edges(0, 1, lk.Col, rk.Col)
				}
			}
		}
		walk(st.Root)
	}
	return out
}

// buildSources follows build column c of a join down to the upstream
// stages whose output columns bound its keys, nearest first. Each step
// passes on values of the column below it, so the upstream column's
// summary covers every non-NULL key the join builds on: a superset, which
// filters less but never drops a row that matches.
//   - Filters, plain projections and plain-column group keys of
//     aggregations pass values on; a join's output column is a column of
//     one of its sides (or NULL where an outer join pads).
//   - The first exchange is a source: the stage it reads and its column.
//     The walk then goes on into that stage's plan, up to maxSourceHops
//     stages, where an exchange is a source only once the walk has gone
//     into a join's build side (across the equality below, or because the
//     column is the build side's): elsewhere it leads to the unfiltered
//     rows the nearer source was made from (TPC-H Q18's HAVING reads the
//     partial sums of every order), a summary that costs and bounds
//     nothing.
//   - Where the column is a plain key of an inner join (or the outer key
//     of a semi join, or the build key of a right semi join), every output
//     row's key equals a key of the other side too, so the other side's
//     sources bound it as well (transitive filters, as Trino's dynamic
//     filters follow join equalities): TPC-H Q17's subquery scan of
//     lineitem is filtered by the part scan that the outer lineitem scan's
//     join reads, which is done long before that join's own stage.
func buildSources(g *plan.Graph, n *plan.Node, c int) []filterSource {
	var out []filterSource
	var walk func(n *plan.Node, c, hops int, crossed bool)
	walk = func(n *plan.Node, c, hops int, crossed bool) {
		for n != nil && c >= 0 && c < len(n.Schema) {
			switch n.Kind {
			case plan.KindExchange:
				up := g.Stage(n.Stage)
				into := up != nil && up.Root != nil && len(up.Root.Schema) == len(n.Schema)
				if into && up.Root.Kind == plan.KindExchange && up.Root.SplitObjects {
					// combine-objects' stage passes a finished stage's rows
					// on as they are: that stage is the source.
					n = up.Root
					continue
				}
				src := filterSource{stage: n.Stage, col: c}
				if slices.Contains(out, src) {
					return
				}
				if hops == 0 || crossed {
					out = append(out, src)
				}
				if !into || hops >= maxSourceHops {
					return
				}
				n, hops = up.Root, hops+1
			case plan.KindFilter:
				n = n.Inputs[0]
			case plan.KindProject:
				if c >= len(n.Exprs) || n.Exprs[c].Op != plan.OpColumn {
					return
				}
				c, n = n.Exprs[c].Col, n.Inputs[0]
			case plan.KindAggregate:
				a := n.Aggregate
				if a == nil || len(n.Inputs) != 1 || c >= len(a.GroupBy) || a.GroupBy[c].Op != plan.OpColumn {
					return
				}
				c, n = a.GroupBy[c].Col, n.Inputs[0]
			case plan.KindHashJoin:
				if n.Join == nil || len(n.Inputs) != 2 {
					return
				}
				side, col := 0, c
				switch nl := len(n.Inputs[0].Schema); {
				case n.Join.Type.BuildOnly():
					side = 1
				case n.Join.Type == plan.JoinSemi || n.Join.Type == plan.JoinAnti || c < nl:
				default:
					side, col = 1, c-nl
				}
				if other, ok := equalKey(n.Join, side, col); ok && side == 0 {
					// Only into the build side, the side the planner found
					// smaller: a summary of the probe side would cost more
					// than it saves.
					walk(n.Inputs[1], other, hops, true)
				}
				c, n = col, n.Inputs[side]
				crossed = crossed || side == 1
			default:
				return
			}
		}
	}
	walk(n, c, 0, false)
	return out
}

// maxSourceHops bounds how many stages buildSources walks into past the
// first exchange.
const maxSourceHops = 3

type filterSource struct{ stage, col int }

// equalKey returns the other side's key column that column col of side
// side of join j equals in every output row, when there is one: col is
// a plain key of an inner join (either side), of a semi join's outer side
// or of a right semi join's build side, equal to a plain key of the other
// side of the same type.
func equalKey(j *plan.Join, side, col int) (int, bool) {
	switch {
	case j.NullAware:
		return 0, false
	case j.Type == plan.JoinInner:
	case j.Type == plan.JoinSemi && side == 0:
	case j.Type == plan.JoinRightSemi && side == 1:
	default:
		return 0, false
	}
	for i := range min(len(j.LeftKeys), len(j.RightKeys)) {
		k := [2]*plan.Expr{j.LeftKeys[i], j.RightKeys[i]}
		if k[0].Op == plan.OpColumn && k[1].Op == plan.OpColumn && k[0].Type == k[1].Type && k[side].Col == col {
			return k[1-side].Col, true
		}
	}
	return 0, false
}

// dependsOn reports whether stage s reads stage p's output, directly or
// through other stages: a summary of s cannot come before p has run.
func dependsOn(g *plan.Graph, s, p int) bool {
	seen := map[int]bool{}
	var visit func(id int) bool
	visit = func(id int) bool {
		st := g.Stage(id)
		if st == nil || seen[id] {
			return false
		}
		seen[id] = true
		for _, in := range st.Inputs {
			if in == p || visit(in) {
				return true
			}
		}
		return false
	}
	return visit(s)
}

// probeTargets follows probe column c of the node at *slot (in stage st)
// down to scan columns, through operators that pass every row on by
// itself, and returns e with Probe, ScanColumn, scan and slot filled for
// each scan reached. Below an inner join the key goes down the side it
// comes from and, when it is one of the join's plain key columns, down
// the other side too through the key it equals: every inner join output
// row holds one row of each side with equal keys, so a row of either side
// whose key the filter drops only makes output rows the filtered join
// above drops anyway.
func probeTargets(g *plan.Graph, st int, slot **plan.Node, c int, e FilterEdge) []FilterEdge {
	n := *slot
	if c < 0 || c >= len(n.Schema) || n.Schema[c].Type != e.Type {
		return nil
	}
	switch n.Kind {
	case plan.KindScan:
		if n.Scan != nil && n.Scan.Inline {
			// A small table inline-scans moved into its reader (after this
			// rule ran): not worth filtering, and filtering it would make
			// the rule fire again on its own output.
			return nil
		}
		e.Probe, e.ScanColumn, e.target, e.slot = st, c, n, slot
		return []FilterEdge{e}
	case plan.KindFilter:
		return probeTargets(g, st, &n.Inputs[0], c, e)
	case plan.KindProject:
		if c >= len(n.Exprs) || n.Exprs[c].Op != plan.OpColumn {
			return nil
		}
		return probeTargets(g, st, &n.Inputs[0], n.Exprs[c].Col, e)
	case plan.KindHashJoin:
		if n.Join == nil || len(n.Inputs) != 2 {
			return nil
		}
		nl := len(n.Inputs[0].Schema)
		if n.Join.Type == plan.JoinInner && !n.Join.NullAware {
			side, col := 0, c
			if c >= nl {
				side, col = 1, c-nl
			}
			out := probeTargets(g, st, &n.Inputs[side], col, e)
			if other, ok := equalKey(n.Join, side, col); ok {
				out = append(out, probeTargets(g, st, &n.Inputs[1-side], other, e)...)
			}
			return out
		}
		// A probe-side column of a join whose output rows each come from
		// one probe row: dropping a probe row drops only its own rows.
		if !n.Join.Type.PerProbeRow() || c >= nl {
			return nil
		}
		return probeTargets(g, st, &n.Inputs[0], c, e)
	case plan.KindAggregate:
		// A group key that is a plain column: dropping the input rows of
		// a key drops that key's group whole, which the join drops, and
		// leaves every other group as it was (TPC-H Q17's average
		// quantity per part, of which the join keeps one brand's parts).
		a := n.Aggregate
		if a == nil || len(n.Inputs) != 1 || c >= len(a.GroupBy) || a.GroupBy[c].Op != plan.OpColumn {
			return nil
		}
		return probeTargets(g, st, &n.Inputs[0], a.GroupBy[c].Col, e)
	case plan.KindUnion:
		// UNION ALL: output column c is column c of every input, so each
		// branch may drop the rows the join would drop.
		var out []FilterEdge
		for i := range n.Inputs {
			out = append(out, probeTargets(g, st, &n.Inputs[i], c, e)...)
		}
		return out
	case plan.KindExchange:
		// Into the producing stage, when this exchange is its only reader
		// (a stage reused by several readers keeps all its rows); and the
		// exchange leaf itself, after those: its reads can drop the rows
		// when the producing stages run already.
		var below []FilterEdge
		up := g.Stage(n.Stage)
		if up != nil && up.Root != nil && slices.Equal(g.Consumers(up.ID), []int{st}) && exchangeLeaves(g.Stage(st).Root, up.ID) == 1 {
			below = probeTargets(g, up.ID, &up.Root, c, e)
		}
		if n.SplitObjects {
			return below // combine-objects' stage passes rows on as they are
		}
		x := e
		x.Probe, x.ScanColumn, x.target, x.slot, x.below = st, c, n, slot, below
		return append(below, x)
	}
	return nil
}

// passesRows reports whether leaf is n or hangs below it through filters
// and projections only: every row of leaf reaches n's consumer as it is
// or not at all, with no join or aggregation between to save work on.
func passesRows(n, leaf *plan.Node) bool {
	for n != leaf {
		if (n.Kind != plan.KindFilter && n.Kind != plan.KindProject) || len(n.Inputs) != 1 {
			return false
		}
		n = n.Inputs[0]
	}
	return true
}

func exchangeLeaves(root *plan.Node, stage int) int {
	k := 0
	plan.Walk(root, func(n *plan.Node) {
		if n.Kind == plan.KindExchange && n.Stage == stage {
			k++
		}
	})
	return k
}

func hasRuntimeFilter(e FilterEdge) bool {
	for _, f := range e.records() {
		if f.Stage == e.Build && f.BuildColumn == e.BuildColumn && f.Column == e.ScanColumn {
			return true
		}
	}
	return false
}

// hasNearerFilter reports whether e's target has a runtime filter on e's
// column already from a stage that reads e's build stage: a nearer source
// of the same key (buildSources), whose keys are a subset of e's.
func hasNearerFilter(g *plan.Graph, e FilterEdge) bool {
	for _, f := range e.records() {
		if f.Column == e.ScanColumn && dependsOn(g, f.Stage, e.Build) {
			return true
		}
	}
	return false
}

// filterOf turns a build summary into the runtime filter's record, the
// row predicate of the Filter node above the scan, and the scan's pruning
// conjunct. rows is nil when the summary bounds nothing.
func filterOf(sum *plan.ColumnSummary, e FilterEdge) (rf plan.RuntimeFilter, rows, prune *plan.Expr) {
	col := plan.Column(e.ScanColumn, e.target.Schema[e.ScanColumn].Name, e.Type)
	rf = plan.RuntimeFilter{Stage: e.Build, BuildColumn: e.BuildColumn, Column: e.ScanColumn}
	switch {
	case sum.Exact && len(sum.Values) == 0:
		// Every build key is NULL: no probe row matches.
		rf.Kind = "none"
		f := plan.Literal(plan.Value{B: false}, plan.BoolType)
		return rf, f, f
	case !sum.HasRange:
		return rf, nil, nil
	}
	lit := func(v plan.Value) *plan.Expr { return plan.Literal(v, e.Type) }
	rng := plan.Call(plan.OpAnd, plan.BoolType,
		plan.Call(plan.OpGe, plan.BoolType, col, lit(sum.Min)),
		plan.Call(plan.OpLe, plan.BoolType, col, lit(sum.Max)))
	if !sum.Exact {
		rf.Kind = "range"
		if len(sum.Bloom) > 0 {
			rf.Kind = "bloom"
		}
		return rf, rng, rng
	}
	rf.Kind, rf.Values = "set", len(sum.Values)
	var in *plan.Expr
	if len(sum.Values) == 1 {
		in = plan.Call(plan.OpEq, plan.BoolType, col, lit(sum.Values[0]))
	} else {
		args := []*plan.Expr{col}
		for _, v := range sum.Values {
			args = append(args, lit(v))
		}
		in = plan.Call(plan.OpIn, plan.BoolType, args...)
	}
	return rf, in, plan.Call(plan.OpAnd, plan.BoolType, rng, in)
}

func describeFilter(rf plan.RuntimeFilter, sum *plan.ColumnSummary) string {
	switch rf.Kind {
	case "none":
		return "matches nothing (every build key is NULL)"
	case "set":
		return fmt.Sprintf("IN %d values in [%s, %s]", rf.Values, sum.Min.Format(sum.Type), sum.Max.Format(sum.Type))
	}
	if rf.Kind == "bloom" {
		return fmt.Sprintf("in [%s, %s] and a %d KiB Bloom filter (more than %d distinct values)", sum.Min.Format(sum.Type), sum.Max.Format(sum.Type),
			len(sum.Bloom)>>10, plan.MaxSummaryValues)
	}
	return fmt.Sprintf("in [%s, %s] (more than %d distinct values)", sum.Min.Format(sum.Type), sum.Max.Format(sum.Type), plan.MaxSummaryValues)
}
