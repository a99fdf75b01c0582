package adaptive

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

// file returns a file of key with row groups of the given bytes.
func file(key string, bytes ...int64) layout.File {
	f := layout.File{Key: key, Size: 1000}
	for _, b := range bytes {
		f.RowGroups = append(f.RowGroups, layout.RowGroup{Rows: 10, Bytes: b})
	}
	return f
}

// formatSplits renders tasks as "a[0 1] | a[2] b[0]" (a task's splits,
// each a file and its row groups), with a split's partition values after
// an @ when it has any.
func formatSplits(tasks [][]ScanSplit) string {
	s := ""
	for i, task := range tasks {
		if i > 0 {
			s += " | "
		}
		if task == nil {
			s += "(none)"
		}
		for j, sp := range task {
			if j > 0 {
				s += " "
			}
			s += fmt.Sprintf("%s%v", sp.Key, sp.RowGroups)
			for _, v := range sp.Partition {
				s += fmt.Sprintf("@%d", v.I)
			}
		}
	}
	return s
}

// TestSplits: Splits packs row groups greedily toward a target, SplitsInto
// cuts them into k balanced tasks; both read every row group exactly once.
func TestSplits(t *testing.T) {
	format := formatSplits
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
			var got [][]ScanSplit
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

// TestScanSplits: the task plan picks the cut (size-scans' task count or
// static splits), every split carries its file's partition values, and a
// table with no row groups runs one task that reads nothing.
func TestScanSplits(t *testing.T) {
	files := []layout.File{file("a", 10, 10, 10), file("b", 10, 10)}
	values := map[string][]plan.Value{"a": {{I: 1}}, "b": {{I: 2}}}
	cases := []struct {
		name   string
		tp     TaskPlan
		files  []layout.File
		values map[string][]plan.Value
		split  int64
		want   string
	}{
		{"static splits", TaskPlan{}, files, nil, 20, "a[0 1] | a[2] b[0] | b[1]"},
		{"size-scans' task count wins over the split size", TaskPlan{ScanTasks: 2}, files, nil, 20, "a[0 1] | a[2] b[0 1]"},
		{"partition values ride on the splits", TaskPlan{ScanTasks: 2}, files, values, 0, "a[0 1]@1 | a[2]@1 b[0 1]@2"},
		{"no files: one task reading nothing", TaskPlan{}, nil, nil, 20, "(none)"},
		{"files without row groups: one task reading nothing", TaskPlan{ScanTasks: 3}, []layout.File{file("a")}, nil, 20, "(none)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := formatSplits(c.tp.ScanSplits(c.files, c.values, c.split)); got != c.want {
				t.Errorf("%s, want %s", got, c.want)
			}
		})
	}
}

// TestPruneFiles: a hive-partitioned table keeps the files whose partition
// values the filter accepts; a table without partition columns keeps all;
// a value that does not parse as its column's type is SL's bad-partitions
// error naming the table.
func TestPruneFiles(t *testing.T) {
	part := func(key, day string) layout.File {
		f := file(key, 10)
		f.Partition = map[string]string{"day": day}
		return f
	}
	cols := []plan.Field{{Name: "day", Type: plan.Int64Type}}
	over5 := func(v []plan.Value) bool { return v[0].Null || v[0].I > 5 }
	cases := []struct {
		name    string
		lay     layout.Table
		keep    func([]plan.Value) bool
		want    []string
		pruned  int
		wantErr string
	}{
		{"unpartitioned keeps every file", layout.Table{Files: []layout.File{file("a", 1), file("b", 1)}}, func([]plan.Value) bool { return false }, []string{"a", "b"}, 0, ""},
		{"filter drops files", layout.Table{Partitions: cols, Files: []layout.File{part("a", "3"), part("b", "7"), part("c", "9")}}, over5, []string{"b", "c"}, 1, ""},
		{"a missing key is NULL", layout.Table{Partitions: cols, Files: []layout.File{file("n", 1), part("a", "3")}}, over5, []string{"n"}, 1, ""},
		{"bad value", layout.Table{Partitions: cols, Files: []layout.File{part("a", "x")}}, over5, nil, 0, "table t"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kept, values, pruned, err := PruneFiles(&c.lay, "t", c.keep)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || plan.CodeOf(err) != plan.CodeBadPartitions {
					t.Fatalf("err %v, want %s with code %s", err, c.wantErr, plan.CodeBadPartitions)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, f := range kept {
				keys = append(keys, f.Key)
				if len(c.lay.Partitions) > 0 && len(values[f.Key]) != len(c.lay.Partitions) {
					t.Errorf("file %s: partition values %v", f.Key, values[f.Key])
				}
			}
			if !slices.Equal(keys, c.want) || pruned != c.pruned {
				t.Errorf("kept %v pruned %d, want %v pruned %d", keys, pruned, c.want, c.pruned)
			}
		})
	}
}

// TestMeasureScan: the bytes and static splits size-scans weighs, and the
// file list inline-scans needs only for a small table without deletes.
func TestMeasureScan(t *testing.T) {
	withDeletes := file("d", 10)
	withDeletes.Deletes = []string{"del"}
	many := make([]layout.File, MaxInlineFiles+1)
	for i := range many {
		many[i] = file(fmt.Sprintf("f%d", i), 1)
	}
	cases := []struct {
		name   string
		files  []layout.File
		split  int64
		inline int64
		bytes  int64
		splits int
		listed int // -1: no file list
	}{
		{"small table is listed", []layout.File{file("a", 10, 10), file("b", 10)}, 20, 100, 30, 2, 2},
		{"over the inline bytes", []layout.File{file("a", 10, 10), file("b", 10)}, 20, 29, 30, 2, -1},
		{"position deletes", []layout.File{withDeletes}, 20, 100, 10, 1, -1},
		{"too many files", many, 1000, 1 << 20, int64(len(many)), 1, -1},
		{"inline-scans off", []layout.File{file("a", 10)}, 20, 0, 10, 1, -1},
		{"no files", nil, 20, 100, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MeasureScan(c.files, nil, c.split, c.inline)
			listed := -1
			if got.Files != nil {
				listed = len(got.Files)
			}
			if got.Bytes != c.bytes || got.Splits != c.splits || listed != c.listed {
				t.Errorf("bytes %d splits %d listed %d, want %d %d %d", got.Bytes, got.Splits, listed, c.bytes, c.splits, c.listed)
			}
		})
	}
}
