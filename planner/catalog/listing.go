package catalog

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// CommitMarkerPrefix: see layout.CommitMarkerPrefix. Files whose names
// start with "_" or "." (markers, Spark's _SUCCESS, editors' temporaries)
// are never data.
const CommitMarkerPrefix = layout.CommitMarkerPrefix

// writerFileRE matches the data files of a committed-write writer: the
// writer id (a job id, 20060102-150405-hex8) and a part number.
var writerFileRE = regexp.MustCompile(`^([0-9]{8}-[0-9]{6}-[0-9a-f]{8})-[0-9]+\.[a-z]+(\.(gz|zst))?$`)

// FormatExtensions are the file extensions of a table format's files
// (matched regardless of case).
func FormatExtensions(format string) []string {
	if format == "json" {
		return []string{".json", ".ndjson", ".jsonl"}
	}
	return []string{"." + format}
}

// hasExt reports whether name ends in one of exts, regardless of case.
// A text file (CSV, JSON) may be compressed whole, its codec named by one
// more extension (events.json.gz, export.csv.zst: objstore.DataExt); a
// Parquet file compresses its pages itself and never is.
func hasExt(name string, exts []string) bool {
	e, compressed := objstore.DataExt(name)
	if compressed && !Compressible(e) {
		return false
	}
	for _, x := range exts {
		if e == x {
			return true
		}
	}
	return false
}

// Compressible reports whether files of the data extension ext (".csv")
// may be compressed whole (.gz, .zst).
func Compressible(ext string) bool {
	switch ext {
	case ".csv", ".json", ".ndjson", ".jsonl":
		return true
	}
	return false
}

// ListFiles returns the committed data files with one of the extensions
// exts (".parquet", ".csv"; any case) at location: the object itself when location names one (a single
// file table), otherwise every file under the prefix location, in key
// order, following the commit protocol. It is one LIST request (a Stat
// for a single file), and a Stat per folder above location for a writer
// whose files are listed without their marker (committedFiles).
func ListFiles(ctx context.Context, b objstore.Bucket, location string, exts ...string) ([]objstore.ObjectInfo, error) {
	if strings.Contains(location, LocationSep) {
		return listEach(ctx, b, location, exts)
	}
	if IsGlob(location) {
		return listGlob(ctx, b, location, exts)
	}
	if location != "" && !strings.HasSuffix(location, "/") {
		info, err := b.Stat(ctx, location)
		if err == nil {
			if !hasExt(location, exts) {
				return nil, fmt.Errorf("%s is not a %s file", location, strings.Join(exts, " or "))
			}
			return []objstore.ObjectInfo{info}, nil
		}
		if !errors.Is(err, objstore.ErrNotFound) {
			return nil, fmt.Errorf("stat %s: %w", location, err)
		}
		location += "/" // not an object: a prefix written without its slash
	}
	objs, err := b.List(ctx, location)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", location, err)
	}
	return committedFiles(ctx, b, location, objs, exts)
}

// committedFiles keeps the data files among objs (the listing of the
// prefix base): those with one of the extensions exts, not named like a
// marker, and not a file of a write that has not committed. A writer's
// marker may sit in the file's folder or in any folder above it (a
// partitioned write, COPY ... PARTITION_BY, puts one marker at its
// target, above its key=value folders); markers above base were not
// listed and are looked up with one Stat each per writer and folder.
func committedFiles(ctx context.Context, b objstore.Bucket, base string, objs []objstore.ObjectInfo, exts []string) ([]objstore.ObjectInfo, error) {
	committed := map[string]bool{} // dir + writer id
	for _, o := range objs {
		dir, base := path.Split(o.Key)
		if w, ok := strings.CutPrefix(base, CommitMarkerPrefix); ok {
			committed[dir+w] = true
		}
	}
	looked := map[string]bool{} // dir + writer id Stat-ed above base
	isCommitted := func(dir, w string) (bool, error) {
		for d := dir; ; d = parentDir(d) {
			if committed[d+w] {
				return true, nil
			}
			if !strings.HasPrefix(d, base) {
				// Not listed: look the marker up (once).
				if seen, ok := looked[d+w]; ok {
					if seen {
						return true, nil
					}
				} else {
					_, err := b.Stat(ctx, d+CommitMarkerPrefix+w)
					switch {
					case err == nil:
						looked[d+w] = true
						return true, nil
					case errors.Is(err, objstore.ErrNotFound):
						looked[d+w] = false
					default:
						return false, fmt.Errorf("stat commit marker %s: %w", d+CommitMarkerPrefix+w, err)
					}
				}
			}
			if d == "" {
				return false, nil
			}
		}
	}
	var out []objstore.ObjectInfo
	for _, o := range objs {
		dir, name := path.Split(o.Key)
		if !hasExt(name, exts) || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		if m := writerFileRE.FindStringSubmatch(name); m != nil {
			ok, err := isCommitted(dir, m[1])
			if err != nil {
				return nil, err
			}
			if !ok {
				continue // a write in progress (or abandoned): not visible
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// parentDir is the folder above dir ("a/b/" -> "a/", "a/" -> "").
func parentDir(dir string) string {
	d := strings.TrimSuffix(dir, "/")
	if i := strings.LastIndexByte(d, '/'); i >= 0 {
		return d[:i+1]
	}
	return ""
}

// Relist brings an external table's file list up to date with its
// location: files added since registration (or the last re-list) are
// inspected (a footer read each for Parquet), files gone are dropped, and
// known files are kept as they are. It reports whether anything changed.
func Relist(ctx context.Context, b objstore.Bucket, t *Table) (bool, error) {
	objs, err := ListFiles(ctx, b, t.Location, FormatExtensions(t.Format)...)
	if err != nil {
		return false, fmt.Errorf("table %s: %w", t.Name, err)
	}
	known := make(map[string]layout.File, len(t.Files))
	for _, f := range t.Files {
		known[f.Key] = f
	}
	changed := len(objs) != len(t.Files)
	files := make([]layout.File, 0, len(objs))
	var rows, bytes int64
	avgRow := 0.0
	if t.Rows > 0 {
		avgRow = float64(t.Bytes) / float64(t.Rows)
	}
	for _, o := range objs {
		f, ok := known[o.Key]
		if !ok || f.Size != o.Size || f.ETag != o.ETag {
			// New, or rewritten (another size, or another version of the
			// same size; a file listed before versions were recorded is
			// inspected once more to learn its version).
			changed = true
			switch t.Format {
			case "parquet":
				nf, cols, skipped, err := inspectFile(ctx, b, o, nil)
				if err != nil {
					return false, fmt.Errorf("table %s: %w", t.Name, err)
				}
				if !sameColumns(withoutPartitions(t, cols), fileColumns(t)) || !slices.Equal(skipped, t.Skipped) {
					return false, fmt.Errorf("table %s: new file %s has a different schema than the table", t.Name, o.Key)
				}
				f = nf
			default:
				f = layout.File{Key: o.Key, Size: o.Size, ETag: o.ETag, RowGroups: []layout.RowGroup{{Bytes: o.Size}}}
				if avgRow > 0 {
					f.RowGroups[0].Rows = int64(float64(o.Size) / avgRow)
				}
			}
		}
		files = append(files, f)
		bytes += f.Size
		for _, rg := range f.RowGroups {
			rows += rg.Rows
		}
	}
	if !changed {
		return false, nil
	}
	fileCols := fileColumns(t)
	if t.CSV != nil && len(t.CSV.Columns) > 0 {
		fileCols = t.CSV.Columns
	}
	if t.JSON != nil && len(t.JSON.Columns) > 0 {
		fileCols = t.JSON.Columns
	}
	t.Files, t.Rows, t.Bytes = files, rows, bytes
	if err := applyPartitions(t, fileCols); err != nil {
		return false, err
	}
	return true, nil
}

// withoutPartitions is cols less t's partition columns.
func withoutPartitions(t *Table, cols []plan.Field) []plan.Field {
	var out []plan.Field
	for _, c := range cols {
		part := false
		for _, p := range t.Partitions {
			part = part || p.Name == c.Name
		}
		if !part {
			out = append(out, c)
		}
	}
	return out
}
