package catalog

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

// Hive partitioning: a file under key=value folders (below the table's
// location) has a column per key, as DuckDB's hive_partitioning reads it.
// Keys are lower-cased, keys and values URL-decoded, and the value
// __HIVE_DEFAULT_PARTITION__ is NULL. Every file must have the same keys
// in the same order. A key's type is declared in the table's column list,
// or inferred as DuckDB's hive_types_autocast does: each value is tried as
// DATE, then TIMESTAMP, then BIGINT (no sign but '-', no leading zero),
// and the column gets that type when every non-NULL value got the same
// one, VARCHAR otherwise.

// HiveDefaultPartition is the folder value that stands for NULL.
const HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

type hiveKV struct {
	key, value string
	null       bool
}

// hivePath returns the key=value folders of key below location, in path
// order. A single-file location has none.
func hivePath(location, key string) ([]hiveKV, error) {
	if location != "" && !strings.HasSuffix(location, "/") {
		if !strings.HasPrefix(key, location+"/") {
			return nil, nil // the location is the file itself
		}
		location += "/"
	}
	rel := strings.TrimPrefix(key, location)
	segs := strings.Split(rel, "/")
	var out []hiveKV
	for _, seg := range segs[:len(segs)-1] {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" {
			continue
		}
		dk, err := url.PathUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("folder %q: %w", seg, err)
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("folder %q: %w", seg, err)
		}
		out = append(out, hiveKV{key: strings.ToLower(dk), value: dv, null: dv == HiveDefaultPartition})
	}
	return out, nil
}

var hiveIntRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
var hiveDateRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// hiveType is the type one partition value is read as (DuckDB's
// candidates in DuckDB's order).
func hiveType(v string) plan.DataType {
	if hiveDateRE.MatchString(v) {
		if _, err := plan.ParseDate(v); err == nil {
			return plan.DateType
		}
	}
	if len(v) > 10 && hiveDateRE.MatchString(v[:10]) {
		if _, err := plan.ParseTimestamp(v); err == nil {
			return plan.TimestampType
		}
	}
	if hiveIntRE.MatchString(v) {
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return plan.Int64Type
		}
	}
	return plan.StringType
}

// partitionError is an inconsistent partition layout.
func partitionError(format string, args ...any) error {
	return plan.Errorf(plan.CodeBadPartitions, format, args...)
}

// applyPartitions reads the hive partitions of t's files: it sets each
// file's Partition, t.Partitions and t.Columns. fileCols are the columns
// the files hold; t.Schema, when set, is the declared column list, whose
// types win: a CSV table's names every column and orders them (partition
// keys it does not name come last), a Parquet table's names partition keys
// only. A file column named like a partition key is the partition column.
func applyPartitions(t *Table, fileCols []plan.Field) error {
	var keys []string
	var first string
	vals := map[string][]string{}
	for i := range t.Files {
		f := &t.Files[i]
		kvs, err := hivePath(hiveBase(t.Location, f.Key), f.Key)
		if err != nil {
			return partitionError("table %s: file %s: %w", t.Name, f.Key, err)
		}
		if t.NoHive {
			kvs = nil
		}
		fk := make([]string, len(kvs))
		for j, kv := range kvs {
			fk[j] = kv.key
		}
		if i == 0 {
			keys, first = fk, f.Key
		} else if strings.Join(fk, "/") != strings.Join(keys, "/") {
			return partitionError("table %s: file %s has partition keys [%s], file %s has [%s]: every file must sit under the same key=value folders",
				t.Name, f.Key, strings.Join(fk, ", "), first, strings.Join(keys, ", "))
		}
		f.Partition = nil
		for _, kv := range kvs {
			if kv.null {
				continue
			}
			if f.Partition == nil {
				f.Partition = map[string]string{}
			}
			f.Partition[kv.key] = kv.value
			vals[kv.key] = append(vals[kv.key], kv.value)
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			return partitionError("table %s: file %s: partition key %s appears twice", t.Name, first, k)
		}
		seen[k] = true
	}
	declared := map[string]plan.Field{}
	for _, c := range t.Schema {
		declared[c.Name] = c
	}
	t.Partitions = nil
	for _, k := range keys {
		if c, ok := declared[k]; ok {
			if c.Type.IsNested() {
				return plan.Errorf(plan.CodeBadOption, "table %s: partition key %s declared %s: a key of a hive folder name is not a nested value", t.Name, k, c.Type)
			}
			t.Partitions = append(t.Partitions, c)
			continue
		}
		typ := plan.NullType
		for _, v := range vals[k] {
			vt := hiveType(v)
			if typ.ID == plan.Null {
				typ = vt
			} else if typ != vt {
				typ = plan.StringType
			}
		}
		if typ.ID == plan.Null {
			typ = plan.StringType
		}
		t.Partitions = append(t.Partitions, plan.Field{Name: k, Type: typ, Nullable: true})
	}
	lay := layout.Table{Partitions: t.Partitions}
	for _, f := range t.Files {
		if _, err := lay.PartitionValues(f); err != nil {
			return partitionError("table %s: %w", t.Name, err)
		}
	}
	var cols []plan.Field
	if t.Schema != nil && t.Format == "parquet" {
		for _, c := range t.Schema {
			if !seen[c.Name] {
				return plan.Errorf(plan.CodeBadOption, "table %s: column list names %s, not a hive partition key of the files (a Parquet table's list declares partition key types only; keys: [%s])",
					t.Name, c.Name, strings.Join(keys, ", "))
			}
		}
	}
	if t.Schema != nil && t.Format != "parquet" {
		cols = append(cols, t.Schema...)
	} else {
		byName := map[string]plan.Field{}
		for _, p := range t.Partitions {
			byName[p.Name] = p
		}
		for _, c := range fileCols {
			if p, ok := byName[c.Name]; ok {
				c = p // the folder's value wins, in the file column's place (as DuckDB)
			}
			cols = append(cols, c)
		}
	}
	named := map[string]bool{}
	for _, c := range cols {
		named[c.Name] = true
	}
	for _, p := range t.Partitions {
		if !named[p.Name] {
			cols = append(cols, p)
		}
	}
	t.Columns = cols
	return nil
}

// fileColumns are the columns t's files hold: its columns less the
// partition columns.
func fileColumns(t *Table) []plan.Field {
	part := map[string]bool{}
	for _, p := range t.Partitions {
		part[p.Name] = true
	}
	var out []plan.Field
	for _, c := range t.Columns {
		if !part[c.Name] {
			out = append(out, c)
		}
	}
	return out
}
