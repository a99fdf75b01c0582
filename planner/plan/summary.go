package plan

import (
	"cmp"
	"fmt"
	"slices"
)

// MaxSummaryValues is the most distinct non-NULL values a column summary
// lists: past it the summary keeps its range and a Bloom filter.
const MaxSummaryValues = 1024

// SummaryBloomBytes is the size of a summary's Bloom filter: 4 Mi bits,
// about 1% false positives up to 400,000 distinct keys (a fixed size, so
// the filters of a stage's tasks merge by OR).
const SummaryBloomBytes = 512 << 10

// ColumnSummary describes the values one output column of a stage (or of
// one of its tasks) took over the rows written: the runtime-filter rule
// asks for it on the build side of a join (Stage.Summarize) and turns it
// into a filter on the probe side's scan.
//
// A summary is exact for what it covers: Min and Max bound every non-NULL
// value, and when Exact is set Values lists every distinct non-NULL value,
// sorted. Values are in the column type's Value fields (I for int64, date,
// timestamp and 64-bit decimals, S for strings).
type ColumnSummary struct {
	Column int      `json:"column"`
	Type   DataType `json:"type"`
	Rows   int64    `json:"rows"`
	Nulls  int64    `json:"nulls,omitempty"`
	// HasRange says Min and Max are known: some non-NULL value was seen
	// and the type has a summarizable order (SummaryType).
	HasRange bool  `json:"has_range,omitempty"`
	Min      Value `json:"min"`
	Max      Value `json:"max"`
	// Exact says Values holds every distinct non-NULL value (at most
	// MaxSummaryValues); false when there were more, or the type has no
	// value set.
	Exact  bool    `json:"exact,omitempty"`
	Values []Value `json:"values,omitempty"`
	// Bloom, when not Exact, is a split-block Bloom filter
	// (shuffle/kernel.Bloom) of every non-NULL value: SummaryBloomBytes
	// from a task, shrunk to the keys (a power of two) once merged.
	// Merge drops it: the coordinator merges filters, since adding an
	// exact side's values to one takes the engine's hash
	// (coordinator/summary.go).
	Bloom []byte `json:"bloom,omitempty"`
}

// SummaryType reports whether columns of type t are summarized with a
// range and a value set: int64, date, timestamp, 64-bit decimal and
// string. Other types get only row and NULL counts.
func SummaryType(t DataType) bool {
	switch t.ID {
	case Int64, Date, Timestamp, String:
		return true
	case Decimal:
		return !t.Wide()
	}
	return false
}

// CompareValues orders two non-NULL values of a summarizable type:
// strings bytewise (as Parquet statistics and the engine compare them),
// the others by I.
func CompareValues(t DataType, a, b Value) int {
	if t.ID == String {
		return cmp.Compare(a.S, b.S)
	}
	return cmp.Compare(a.I, b.I)
}

// EmptySummary returns the summary of no rows of column c of type t: an
// exact empty set when t is summarizable.
func EmptySummary(c int, t DataType) ColumnSummary {
	return ColumnSummary{Column: c, Type: t, Exact: SummaryType(t)}
}

// Merge returns the summary of the rows of s and o together (the same
// column): row and NULL counts add up, the range is the hull of both,
// the value sets are united and dropped when the union passes
// MaxSummaryValues or either side is not exact.
func (s ColumnSummary) Merge(o ColumnSummary) (ColumnSummary, error) {
	if s.Column != o.Column || s.Type != o.Type {
		return ColumnSummary{}, fmt.Errorf("merge summaries of column %d (%s) and %d (%s)", s.Column, s.Type, o.Column, o.Type)
	}
	out := ColumnSummary{Column: s.Column, Type: s.Type, Rows: s.Rows + o.Rows, Nulls: s.Nulls + o.Nulls}
	switch {
	case s.HasRange && o.HasRange:
		out.HasRange = true
		out.Min, out.Max = s.Min, s.Max
		if CompareValues(s.Type, o.Min, out.Min) < 0 {
			out.Min = o.Min
		}
		if CompareValues(s.Type, o.Max, out.Max) > 0 {
			out.Max = o.Max
		}
	case s.HasRange:
		out.HasRange, out.Min, out.Max = true, s.Min, s.Max
	case o.HasRange:
		out.HasRange, out.Min, out.Max = true, o.Min, o.Max
	}
	if s.Exact && o.Exact {
		vals := append(slices.Clone(s.Values), o.Values...)
		slices.SortFunc(vals, func(a, b Value) int { return CompareValues(s.Type, a, b) })
		vals = slices.CompactFunc(vals, func(a, b Value) bool { return CompareValues(s.Type, a, b) == 0 })
		if len(vals) <= MaxSummaryValues {
			out.Exact, out.Values = true, vals
		}
	}
	return out, nil
}

// Validate checks that s is consistent: a set no larger than the bound,
// within the range, a range only of a summarizable type, and a range or
// an empty set whenever a non-NULL value was seen.
func (s ColumnSummary) Validate() error {
	if s.Rows < 0 || s.Nulls < 0 || s.Nulls > s.Rows {
		return fmt.Errorf("summary of column %d: %d NULLs in %d rows", s.Column, s.Nulls, s.Rows)
	}
	if (s.HasRange || s.Exact) && !SummaryType(s.Type) {
		return fmt.Errorf("summary of column %d: type %s has no summary range", s.Column, s.Type)
	}
	if len(s.Values) > MaxSummaryValues || !s.Exact && len(s.Values) > 0 {
		return fmt.Errorf("summary of column %d: %d values (exact %v)", s.Column, len(s.Values), s.Exact)
	}
	if n := len(s.Bloom); n > 0 && (s.Exact || n > SummaryBloomBytes || n < 32 || n&(n-1) != 0) {
		return fmt.Errorf("summary of column %d: a Bloom filter of %d bytes (exact %v)", s.Column, len(s.Bloom), s.Exact)
	}
	if s.Exact && (len(s.Values) > 0) != s.HasRange {
		return fmt.Errorf("summary of column %d: %d values but range %v", s.Column, len(s.Values), s.HasRange)
	}
	if s.HasRange && CompareValues(s.Type, s.Min, s.Max) > 0 {
		return fmt.Errorf("summary of column %d: min above max", s.Column)
	}
	for i, v := range s.Values {
		if CompareValues(s.Type, v, s.Min) < 0 || CompareValues(s.Type, v, s.Max) > 0 ||
			i > 0 && CompareValues(s.Type, s.Values[i-1], v) >= 0 {
			return fmt.Errorf("summary of column %d: values not sorted within the range", s.Column)
		}
	}
	return nil
}

// RuntimeFilter records a filter the adaptive rule runtime-filter added
// to a scan from the summary of a finished join build side: the scan
// reads only rows whose column Column can match one of the build side's
// keys.
type RuntimeFilter struct {
	// Stage is the build stage whose summary the filter comes from, and
	// BuildColumn the summarized output column of it.
	Stage       int `json:"stage"`
	BuildColumn int `json:"build_column"`
	// Column is the scan's output column filtered.
	Column int `json:"column"`
	// Kind is "set" (an IN list of Values values), "bloom" (min..max and
	// a Bloom filter of more than MaxSummaryValues keys), "range"
	// (min..max) or "none" (the build side has no non-NULL key: no row
	// can match).
	Kind   string `json:"kind"`
	Values int    `json:"values,omitempty"`
}

// BloomProbe, on a KindFilter node, keeps only the rows whose column
// Column may be a key of the Bloom filter Bits (shuffle/kernel.Bloom): a
// runtime filter's keys when there are too many to list. A NULL never
// passes.
type BloomProbe struct {
	Column int    `json:"column"`
	Bits   []byte `json:"bits"`
}

// String renders f for EXPLAIN.
func (f RuntimeFilter) String() string {
	switch f.Kind {
	case "set":
		return fmt.Sprintf("#%d from stage %d: set of %d", f.Column, f.Stage, f.Values)
	case "bloom":
		return fmt.Sprintf("#%d from stage %d: range and bloom", f.Column, f.Stage)
	default:
		return fmt.Sprintf("#%d from stage %d: %s", f.Column, f.Stage, f.Kind)
	}
}
