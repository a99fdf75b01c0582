// Package layout describes how a registered table is stored: its format and
// its files with their row groups. It is the contract between the catalog
// (planner/catalog), which builds it from the files' footers, and the
// coordinator, which turns it into scan splits when a scan stage starts (a
// plan never holds file lists). It imports no sluice package but the plan
// contract, so the coordinator reads layouts without linking the SQL front
// end.
package layout

import (
	"github.com/sluicedb/sluice/planner/plan"
)

// RowGroup is one row group of a table file (a CSV file is one row group).
type RowGroup struct {
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
}

// File is one table file.
type File struct {
	Key       string     `json:"key"`
	Size      int64      `json:"size"`
	RowGroups []RowGroup `json:"row_groups"`
}

// Table is how a registered table is stored: its format ("parquet" or
// "csv"), the CSV dialect when it is CSV, and its files.
type Table struct {
	Format string
	CSV    *plan.CSVFormat
	Files  []File
}

// Commit protocol of the files sluice writes (CREATE TABLE AS, COPY TO):
// a writer puts its data files as <prefix><writer>-<n>.<ext> (DataFileName),
// where <writer> is its job id, and writes the marker
// <prefix>_sluice_commit_<writer> (CommitMarkerPrefix) last, holding the
// list of its files. A listing shows a file named like a writer's data
// file only once that writer's marker exists, so readers never see
// half-written output.
const CommitMarkerPrefix = "_sluice_commit_"

// DataFileName is the name of part n of writer's output in format ext
// ("parquet", "csv").
func DataFileName(writer string, n int, ext string) string {
	return plan.WriteFileName("", writer, n, ext)
}
