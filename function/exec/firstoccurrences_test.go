package exec

import (
	"slices"
	"testing"
)

// TestFirstOccurrences checks string_agg(DISTINCT)'s dedupe: each value
// once, at its first position.
func TestFirstOccurrences(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"a"}, []string{"a"}},
		{[]string{"b", "a", "b", "c", "a"}, []string{"b", "a", "c"}},
		{[]string{"", "", "x"}, []string{"", "x"}},
	} {
		if got := firstOccurrences(slices.Clone(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("firstOccurrences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
