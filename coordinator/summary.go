package coordinator

import (
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// stageSummaries merges the column summaries of a stage's committed task
// results (one per task: retried and duplicated attempts never reach
// here) into the stage's. A column gets no summary when a task that wrote
// rows did not summarize it, or when its summaries do not account for
// exactly the rows the tasks wrote: a runtime filter built from a summary
// that missed rows would drop rows the join needs.
func stageSummaries(st *plan.Stage, results []*function.TaskResult) []plan.ColumnSummary {
	if len(st.Summarize) == 0 || st.Root == nil {
		return nil
	}
	var out []plan.ColumnSummary
	for _, c := range st.Summarize {
		if c < 0 || c >= len(st.Root.Schema) {
			continue
		}
		merged, ok := plan.EmptySummary(c, st.Root.Schema[c].Type), true
		var rows int64
		var parts []*plan.ColumnSummary
		for _, r := range results {
			if r == nil {
				ok = false
				break
			}
			rows += r.Rows
			var sum *plan.ColumnSummary
			for i := range r.Summaries {
				if r.Summaries[i].Column == c {
					sum = &r.Summaries[i]
				}
			}
			if sum == nil {
				ok = r.Rows == 0 // a task not invoked, or stopped before any row
				if !ok {
					break
				}
				continue
			}
			if sum.Validate() != nil {
				ok = false
				break
			}
			m, err := merged.Merge(*sum)
			if err != nil {
				ok = false
				break
			}
			merged = m
			parts = append(parts, sum)
		}
		if ok && merged.Rows == rows {
			if !merged.Exact && merged.HasRange {
				merged.Bloom = mergeBlooms(merged.Type, parts)
			}
			out = append(out, merged)
		}
	}
	return out
}

// mergeBlooms is the Bloom filter of the keys of every task summary in
// parts: the OR of their filters, with the values of those still exact
// added. nil when a task that saw too many keys for a set sent no filter
// (then the stage's filter is its range alone).
func mergeBlooms(t plan.DataType, parts []*plan.ColumnSummary) []byte {
	size := plan.SummaryBloomBytes // the smallest task filter: the others fold to it
	for _, p := range parts {
		if n := len(p.Bloom); n > 0 {
			size = min(size, n)
		}
	}
	f, err := kernel.NewBloom(size)
	if err != nil {
		return nil
	}
	for _, p := range parts {
		switch {
		case len(p.Bloom) > 0:
			b, err := kernel.BloomFromBytes(p.Bloom)
			if err != nil {
				return nil
			}
			for len(b) > len(f) {
				b = b.Fold()
			}
			if f.Or(b) != nil {
				return nil
			}
		case p.Exact:
			if exec.BloomAddValues(f, t, p.Values) != nil {
				return nil
			}
		default:
			return nil
		}
	}
	return f.Shrink(bloomMaxFill).Bytes()
}

// bloomMaxFill is how full a stage's merged Bloom filter may get as it is
// shrunk to its keys: about 12 bits per key, 1-2% false positives.
const bloomMaxFill = 0.5
