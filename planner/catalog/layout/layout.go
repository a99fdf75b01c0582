// Package layout describes how a registered table is stored: its format and
// its files with their row groups. It is the contract between the catalog
// (planner/catalog), which builds it from the files' footers, and the
// coordinator, which turns it into scan splits when a scan stage starts (a
// plan never holds file lists). It imports no sluice package but the plan
// contract, so the coordinator reads layouts without linking the SQL front
// end.
package layout

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// RowGroup is one row group of a table file (a CSV file is one row group).
type RowGroup struct {
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
}

// File is one table file.
type File struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	// ETag names the version of the file the row groups describe (from
	// the listing; "" when the store gave none): scans read that version
	// only, and a warm function's range cache keys its bytes by it.
	ETag      string     `json:"etag,omitempty"`
	RowGroups []RowGroup `json:"row_groups"`
	// Partition holds the file's hive partition values (its key=value
	// folders), URL-decoded, by column name; a key whose value is NULL
	// (__HIVE_DEFAULT_PARTITION__) is absent.
	Partition map[string]string `json:"partition,omitempty"`
	// Deletes are the keys of the Iceberg position-delete files that apply
	// to this file (format v2); the scan drops the rows they name.
	Deletes []string `json:"deletes,omitempty"`
}

// Table is how a registered table is stored: its format ("parquet" or
// "csv"), the CSV dialect when it is CSV, and its files.
type Table struct {
	Format string
	CSV    *plan.CSVFormat
	JSON   *plan.JSONFormat
	// Partitions are the hive partition columns, with their types.
	Partitions []plan.Field
	Files      []File
	// Iceberg is set for an Iceberg table (Format "iceberg"): Files are
	// then the data files of its snapshot, which a scan prunes from its
	// filter through the manifests (ScanPlan) before any file is opened.
	Iceberg *Iceberg
}

// Iceberg names the Iceberg snapshot a table reads.
type Iceberg struct {
	// Bucket is the bucket of the table (the one sluice runs on).
	Bucket string `json:"bucket"`
	// Metadata is the key of the table metadata file in Bucket.
	Metadata string `json:"metadata"`
	// Snapshot is the snapshot read (0: the table has no snapshot yet).
	Snapshot int64 `json:"snapshot,omitempty"`
	// Pinned is set when the snapshot was named (time travel): its
	// schema is the table's; else the metadata's current schema is.
	Pinned bool `json:"pinned,omitempty"`
	// FieldIDs are the Iceberg field ids of the table's columns, by
	// column name: a data file's columns are read by field id, so
	// renamed, added and dropped columns read right.
	FieldIDs map[string]int `json:"field_ids,omitempty"`
}

// ScanPlan is what planning an Iceberg scan from its filter gives: the
// data files to read and how many manifests and files the filter pruned.
//
// DataFiles and DataFilesPruned count the snapshot's data files: those of
// the manifests read (as planned) and, once the caller knows the
// snapshot's whole file list, all of them.
type ScanPlan struct {
	Files           []File
	Manifests       int
	ManifestsPruned int
	DataFiles       int
	DataFilesPruned int
	DeleteFiles     int
}

// PartitionValues returns f's partition values, one per t.Partitions
// column, parsed as the column's type.
func (t *Table) PartitionValues(f File) ([]plan.Value, error) {
	if len(t.Partitions) == 0 {
		return nil, nil
	}
	out := make([]plan.Value, len(t.Partitions))
	for i, p := range t.Partitions {
		s, ok := f.Partition[p.Name]
		if !ok {
			out[i] = plan.Value{Null: true}
			continue
		}
		v, err := ParsePartitionValue(s, p.Type)
		if err != nil {
			return nil, fmt.Errorf("file %s: partition %s=%q: %w", f.Key, p.Name, s, err)
		}
		out[i] = v
	}
	return out, nil
}

// ParsePartitionValue parses a partition folder's value as type t.
func ParsePartitionValue(s string, t plan.DataType) (plan.Value, error) {
	switch t.ID {
	case plan.String:
		return plan.Value{S: s}, nil
	case plan.Int64:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return plan.Value{}, fmt.Errorf("not a bigint")
		}
		return plan.Value{I: i}, nil
	case plan.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return plan.Value{}, fmt.Errorf("not a double")
		}
		return plan.Value{F: f}, nil
	case plan.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return plan.Value{}, fmt.Errorf("not a boolean")
		}
		return plan.Value{B: b}, nil
	case plan.Date:
		d, err := plan.ParseDate(s)
		if err != nil {
			return plan.Value{}, err
		}
		return plan.Value{I: int64(d)}, nil
	case plan.Timestamp:
		us, err := plan.ParseTimestamp(s)
		if err != nil {
			return plan.Value{}, err
		}
		return plan.Value{I: us}, nil
	case plan.Decimal:
		if t.Precision <= plan.MaxDecimal64Precision {
			return parseDecimal64(strings.TrimSpace(s), t.Precision, t.Scale)
		}
	}
	return plan.Value{}, fmt.Errorf("type %s is not supported for partition columns", t)
}

// parseDecimal64 parses [-+]digits[.digits] into its unscaled value at
// scale, refusing more than precision digits or scale fraction digits.
func parseDecimal64(s string, precision, scale int) (plan.Value, error) {
	bad := func() (plan.Value, error) { return plan.Value{}, fmt.Errorf("not a decimal(%d,%d)", precision, scale) }
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > scale {
		return bad()
	}
	digits := strings.TrimLeft(whole, "0") + frac + strings.Repeat("0", scale-len(frac))
	if len(strings.TrimLeft(digits, "0")) > precision {
		return bad()
	}
	var u int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return bad()
		}
		u = u*10 + int64(c-'0')
	}
	if neg {
		u = -u
	}
	return plan.Value{I: u}, nil
}

// Commit protocol of the files sluice writes (CREATE TABLE AS, COPY TO):
// a writer puts its data files as <prefix><writer>-<n>.<ext> (DataFileName),
// where <writer> is its job id, and writes the marker
// <prefix>_sluice_commit_<writer> (CommitMarkerPrefix) last, holding the
// list of its files. A listing shows a file named like a writer's data
// file only once that writer's marker exists, so readers never see
// half-written output. A partitioned write (COPY ... PARTITION_BY) puts
// its files in key=value folders below <prefix> and its one marker at
// <prefix>: a writer's marker covers its files in the marker's folder and
// in every folder below it.
const CommitMarkerPrefix = "_sluice_commit_"

// DataFileName is the name of part n of writer's output in format ext
// ("parquet", "csv").
func DataFileName(writer string, n int, ext string) string {
	return plan.WriteFileName("", writer, n, ext)
}
