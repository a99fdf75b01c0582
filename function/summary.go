package function

import (
	"cmp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// taskBloomMaxFill bounds how full a task's Bloom filter may be shrunk.
const taskBloomMaxFill = 0.1

// summarizer computes the column summaries a stage asks for
// (plan.Stage.Summarize) over the rows its task writes.
type summarizer struct {
	cols []*colSummary
}

type colSummary struct {
	sum   plan.ColumnSummary
	ints  map[int64]struct{}  // int64, date, timestamp, decimal values
	strs  map[string]struct{} // string values
	exact bool                // the set is still within MaxSummaryValues
	typed bool                // the type has a range and a set
	// bloom holds every non-NULL value once the set passed
	// MaxSummaryValues (the set's values were added to it then).
	bloom  kernel.Bloom
	hashes []uint64
}

// newSummarizer returns a summarizer of cols of schema, or nil when there
// are none.
func newSummarizer(cols []int, schema plan.Schema) *summarizer {
	if len(cols) == 0 {
		return nil
	}
	s := &summarizer{}
	for _, c := range cols {
		if c < 0 || c >= len(schema) {
			continue // Validate refuses it; nothing to summarize
		}
		t := schema[c].Type
		cs := &colSummary{sum: plan.ColumnSummary{Column: c, Type: t}, typed: plan.SummaryType(t)}
		cs.exact = cs.typed
		if t.ID == plan.String {
			cs.strs = map[string]struct{}{}
		} else {
			cs.ints = map[int64]struct{}{}
		}
		s.cols = append(s.cols, cs)
	}
	return s
}

// add summarizes the rows of rec.
func (s *summarizer) add(rec arrow.RecordBatch) {
	if s == nil {
		return
	}
	for _, cs := range s.cols {
		if cs.sum.Column < int(rec.NumCols()) {
			cs.add(rec.Column(cs.sum.Column))
		}
	}
}

func (cs *colSummary) add(col arrow.Array) {
	n := col.Len()
	cs.sum.Rows += int64(n)
	cs.sum.Nulls += int64(col.NullN())
	if !cs.typed {
		return
	}
	defer cs.addBloom(col)
	switch a := col.(type) {
	case *array.Int64:
		addInts(cs, a, a.Value)
	case *array.Date32:
		addInts(cs, a, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Timestamp:
		addInts(cs, a, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Decimal64:
		addInts(cs, a, func(i int) int64 { return int64(a.Value(i)) })
	case *array.String:
		for i := range n {
			if a.IsNull(i) {
				continue
			}
			// a.Value aliases the batch's buffer, released after the
			// write: whatever is kept is a copy.
			v := a.Value(i)
			if !cs.sum.HasRange {
				c := strings.Clone(v)
				cs.sum.HasRange, cs.sum.Min.S, cs.sum.Max.S = true, c, c
			} else if v < cs.sum.Min.S {
				cs.sum.Min.S = strings.Clone(v)
			} else if v > cs.sum.Max.S {
				cs.sum.Max.S = strings.Clone(v)
			}
			if cs.exact && cs.bloom == nil {
				if _, ok := cs.strs[v]; !ok {
					cs.strs[strings.Clone(v)] = struct{}{}
					cs.exact = len(cs.strs) <= plan.MaxSummaryValues
				}
			}
		}
	default:
		// An array layout the summary does not know: counts only, so the
		// summary filters nothing.
		cs.typed, cs.exact, cs.sum.HasRange = false, false, false
	}
}

// addBloom adds col's non-NULL values to the Bloom filter, starting one
// (with the set's values, col's among them) when the set first overflows.
func (cs *colSummary) addBloom(col arrow.Array) {
	if !cs.typed {
		return
	}
	if cs.bloom == nil {
		if cs.exact {
			return
		}
		b, err := kernel.NewBloom(plan.SummaryBloomBytes)
		if err != nil {
			cs.typed = false // cannot happen: the size is a constant power of two
			return
		}
		cs.bloom = b
		if err := exec.BloomAddValues(b, cs.sum.Type, cs.setValues()); err != nil {
			cs.bloom = nil
			cs.typed, cs.sum.HasRange = false, false
			return
		}
		cs.ints, cs.strs = nil, nil
	}
	if cap(cs.hashes) < col.Len() {
		cs.hashes = make([]uint64, col.Len())
	}
	h := cs.hashes[:col.Len()]
	if err := kernel.HashKeys(col, h); err != nil {
		cs.typed, cs.sum.HasRange, cs.bloom = false, false, nil
		return
	}
	for i, v := range h {
		if col.IsValid(i) {
			cs.bloom.Insert(v)
		}
	}
}

// setValues lists the set's values (in no order).
func (cs *colSummary) setValues() []plan.Value {
	var out []plan.Value
	for v := range cs.strs {
		out = append(out, plan.Value{S: v})
	}
	for v := range cs.ints {
		out = append(out, plan.Value{I: v})
	}
	return out
}

func addInts(cs *colSummary, a arrow.Array, value func(int) int64) {
	for i := range a.Len() {
		if a.IsNull(i) {
			continue
		}
		v := value(i)
		if !cs.sum.HasRange {
			cs.sum.HasRange, cs.sum.Min.I, cs.sum.Max.I = true, v, v
		} else if v < cs.sum.Min.I {
			cs.sum.Min.I = v
		} else if v > cs.sum.Max.I {
			cs.sum.Max.I = v
		}
		if cs.exact && cs.bloom == nil {
			if _, ok := cs.ints[v]; !ok {
				cs.ints[v] = struct{}{}
				cs.exact = len(cs.ints) <= plan.MaxSummaryValues
			}
		}
	}
}

// result returns the summaries of the rows added.
func (s *summarizer) result() []plan.ColumnSummary {
	if s == nil {
		return nil
	}
	out := make([]plan.ColumnSummary, 0, len(s.cols))
	for _, cs := range s.cols {
		sum := cs.sum
		if cs.bloom != nil && cs.typed {
			// Shrunk while a tenth of its bits at most are set, leaving
			// room for the other tasks' keys it is merged with (the
			// coordinator folds every task's filter to the smallest).
			sum.Bloom = cs.bloom.Shrink(taskBloomMaxFill).Bytes()
		}
		if cs.exact {
			sum.Exact = true
			if cs.strs != nil {
				for v := range cs.strs {
					sum.Values = append(sum.Values, plan.Value{S: v})
				}
				slices.SortFunc(sum.Values, func(a, b plan.Value) int { return cmp.Compare(a.S, b.S) })
			} else {
				for v := range cs.ints {
					sum.Values = append(sum.Values, plan.Value{I: v})
				}
				slices.SortFunc(sum.Values, func(a, b plan.Value) int { return cmp.Compare(a.I, b.I) })
			}
		}
		out = append(out, sum)
	}
	return out
}
