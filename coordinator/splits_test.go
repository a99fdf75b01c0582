package coordinator

import (
	"fmt"
	"testing"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/catalog/layout"
)

// TestSplits: Splits packs row groups greedily toward a target, SplitsInto
// cuts them into k balanced tasks; both read every row group exactly once.
func TestSplits(t *testing.T) {
	file := func(key string, bytes ...int64) layout.File {
		f := layout.File{Key: key, Size: 1000}
		for _, b := range bytes {
			f.RowGroups = append(f.RowGroups, layout.RowGroup{Rows: 10, Bytes: b})
		}
		return f
	}
	format := func(tasks [][]function.Split) string {
		s := ""
		for i, task := range tasks {
			if i > 0 {
				s += " | "
			}
			for j, sp := range task {
				if j > 0 {
					s += " "
				}
				s += fmt.Sprintf("%s%v", sp.Key, sp.RowGroups)
			}
		}
		return s
	}
	cases := []struct {
		name   string
		files  []layout.File
		k      int   // SplitsInto
		target int64 // Splits, when set
		want   string
	}{
		{"greedy to a target", []layout.File{file("a", 10, 10, 10), file("b", 10, 10)}, 0, 20, "a[0 1] | a[2] b[0] | b[1]"},
		{"greedy: a big row group is a task of its own", []layout.File{file("a", 5, 50, 5)}, 0, 20, "a[0] | a[1] | a[2]"},
		{"greedy across files without row groups", []layout.File{file("a"), file("b", 5, 5), file("c", 5)}, 0, 100, "b[0 1] c[0]"},
		{"even halves", []layout.File{file("a", 10, 10, 10, 10)}, 2, 0, "a[0 1] | a[2 3]"},
		// Greedy splits of a target of total/2 would make three tasks
		// here (10+10 fits, 10 does not); the middle byte decides.
		{"uneven groups stay k", []layout.File{file("a", 10, 10, 10), file("b", 10, 10)}, 2, 0, "a[0 1] | a[2] b[0 1]"},
		{"across files", []layout.File{file("a", 30), file("b", 10), file("c", 20)}, 2, 0, "a[0] | b[0] c[0]"},
		{"one task", []layout.File{file("a", 5, 5), file("b", 5)}, 1, 0, "a[0 1] b[0]"},
		{"more tasks than row groups", []layout.File{file("a", 10, 10)}, 5, 0, "a[0] | a[1]"},
		{"files without row groups are skipped", []layout.File{file("a"), file("b", 10, 10)}, 2, 0, "b[0] | b[1]"},
		{"no files", nil, 3, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got [][]function.Split
			if c.target > 0 {
				got = Splits(c.files, c.target)
			} else {
				got = SplitsInto(c.files, c.k)
				if len(got) > c.k {
					t.Errorf("%d tasks, at most %d wanted", len(got), c.k)
				}
			}
			if s := format(got); s != c.want {
				t.Errorf("k=%d target=%d: %s, want %s", c.k, c.target, s, c.want)
			}
			// Every row group is read exactly once.
			seen := map[string]int{}
			for _, task := range got {
				for _, sp := range task {
					for _, rg := range sp.RowGroups {
						seen[fmt.Sprintf("%s/%d", sp.Key, rg)]++
					}
				}
			}
			for _, f := range c.files {
				for i := range f.RowGroups {
					if n := seen[fmt.Sprintf("%s/%d", f.Key, i)]; n != 1 {
						t.Errorf("row group %s/%d read %d times", f.Key, i, n)
					}
				}
			}
		})
	}
}
