package adaptive

import (
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

// Scan-task shaping: which files of its table a scan stage reads
// (PruneFiles), what the re-planner is told of them (MeasureScan), and how
// they are cut into the stage's tasks (TaskPlan.ScanSplits in taskplan.go,
// with Splits and SplitsInto). All are pure: the driver lists the table and reads the
// footers (the row groups in layout.File), then applies what these return.

// ScanSplit is what one scan task reads of one file: some of its row
// groups, with the file's hive partition values and its Iceberg
// position-delete files. It has function.Split's fields, in its order, so
// the driver converts it as it is.
type ScanSplit struct {
	Key       string
	Size      int64
	ETag      string
	RowGroups []int
	Partition []plan.Value
	Deletes   []string
}

// ScanSize is what a scan stage reads: the bytes of its table's row
// groups, and how many tasks the static splits of Config.SplitBytes make
// of them.
type ScanSize struct {
	Bytes  int64 `json:"bytes"`
	Splits int   `json:"splits"`
	// Files are the table's files (after partition pruning), listed only
	// for a table small enough that inline-scans may inline it (at most
	// MaxInlineFiles files of at most Config.InlineScanBytes).
	Files []plan.ScanFile `json:"files,omitempty"`
}

// PruneFiles returns the files of a hive-partitioned table whose
// partition values keep accepts (the driver passes the executor's
// partition filter of the scan), every kept file's partition values by
// key, and how many files were dropped. A table without partition
// columns keeps every file.
func PruneFiles(lay *layout.Table, table string, keep func([]plan.Value) bool) ([]layout.File, map[string][]plan.Value, int, error) {
	if len(lay.Partitions) == 0 {
		return lay.Files, nil, 0, nil
	}
	values := make(map[string][]plan.Value, len(lay.Files))
	var kept []layout.File
	for _, f := range lay.Files {
		v, err := lay.PartitionValues(f)
		if err != nil {
			return nil, nil, 0, plan.Errorf(plan.CodeBadPartitions, "table %s: %w", table, err)
		}
		if !keep(v) {
			continue
		}
		kept = append(kept, f)
		values[f.Key] = v
	}
	return kept, values, len(lay.Files) - len(kept), nil
}

// MeasureScan returns what the re-planner is told of the files a scan
// stage reads (State.Scans): their row groups' bytes, how many static
// splits of splitBytes they make, and, when there are at most
// MaxInlineFiles of at most inlineBytes without position deletes (an
// inline scan reads files whole), the files themselves for inline-scans.
func MeasureScan(files []layout.File, values map[string][]plan.Value, splitBytes, inlineBytes int64) ScanSize {
	size := ScanSize{Bytes: FileBytes(files), Splits: len(Splits(files, splitBytes))}
	if len(files) <= MaxInlineFiles && size.Bytes <= inlineBytes && !hasDeletes(files) {
		size.Files = make([]plan.ScanFile, len(files))
		for i, f := range files {
			size.Files[i] = plan.ScanFile{Key: f.Key, Size: f.Size, ETag: f.ETag, Partition: values[f.Key]}
		}
	}
	return size
}

// FileBytes returns the bytes of the files' row groups.
func FileBytes(files []layout.File) int64 {
	var n int64
	for _, f := range files {
		for _, rg := range f.RowGroups {
			n += rg.Bytes
		}
	}
	return n
}

// hasDeletes reports whether a file has Iceberg position deletes.
func hasDeletes(files []layout.File) bool {
	for _, f := range files {
		if len(f.Deletes) > 0 {
			return true
		}
	}
	return false
}

// Splits packs table files' row groups into scan tasks of about target
// bytes. A task's splits never cut a row group.
func Splits(files []layout.File, target int64) [][]ScanSplit {
	var cur int64
	return cutRowGroups(files, func(b int64) bool {
		start := cur > 0 && cur+b > target
		if start {
			cur = 0
		}
		cur += b
		return start
	})
}

// SplitsInto cuts files into at most k tasks of contiguous row groups
// holding about equal bytes: a row group goes to the task in whose share
// of the total its middle byte falls.
func SplitsInto(files []layout.File, k int) [][]ScanSplit {
	total := FileBytes(files)
	k64 := int64(max(k, 1))
	var seen int64
	task := int64(-1)
	return cutRowGroups(files, func(b int64) bool {
		t := min(k64-1, (seen+b/2)*k64/max(total, 1))
		seen += b
		start := task >= 0 && t != task
		task = t
		return start
	})
}

// cutRowGroups walks the row groups of files in order, starting a new
// task before a row group (of b bytes) when newTask(b) says so; each task
// holds one split per file it reads from.
func cutRowGroups(files []layout.File, newTask func(b int64) bool) [][]ScanSplit {
	var tasks [][]ScanSplit
	var cur []ScanSplit
	for _, f := range files {
		var sp *ScanSplit
		for i, rg := range f.RowGroups {
			if newTask(rg.Bytes) && len(cur) > 0 {
				tasks = append(tasks, cur)
				cur, sp = nil, nil
			}
			if sp == nil {
				cur = append(cur, ScanSplit{Key: f.Key, Size: f.Size, ETag: f.ETag, Deletes: f.Deletes})
				sp = &cur[len(cur)-1]
			}
			sp.RowGroups = append(sp.RowGroups, i)
		}
	}
	if len(cur) > 0 {
		tasks = append(tasks, cur)
	}
	return tasks
}
