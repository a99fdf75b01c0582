package coordinator

import (
	"fmt"
	"testing"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/catalog/layout"
)

func TestSplitsInto(t *testing.T) {
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
		name  string
		files []layout.File
		k     int
		want  string
	}{
		{"even halves", []layout.File{file("a", 10, 10, 10, 10)}, 2, "a[0 1] | a[2 3]"},
		// Greedy splits of a target of total/2 would make three tasks
		// here (10+10 fits, 10 does not); the middle byte decides.
		{"uneven groups stay k", []layout.File{file("a", 10, 10, 10), file("b", 10, 10)}, 2, "a[0 1] | a[2] b[0 1]"},
		{"across files", []layout.File{file("a", 30), file("b", 10), file("c", 20)}, 2, "a[0] | b[0] c[0]"},
		{"one task", []layout.File{file("a", 5, 5), file("b", 5)}, 1, "a[0 1] b[0]"},
		{"more tasks than row groups", []layout.File{file("a", 10, 10)}, 5, "a[0] | a[1]"},
		{"files without row groups are skipped", []layout.File{file("a"), file("b", 10, 10)}, 2, "b[0] | b[1]"},
		{"no files", nil, 3, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := SplitsInto(c.files, c.k)
			if s := format(got); s != c.want {
				t.Errorf("SplitsInto(k=%d) = %s, want %s", c.k, s, c.want)
			}
			if len(got) > c.k {
				t.Errorf("%d tasks, at most %d wanted", len(got), c.k)
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
