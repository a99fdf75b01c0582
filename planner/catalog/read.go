package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/plan"
)

// Files a query reads without registering them (read_parquet(...),
// read_csv(...), read_json(...), FROM 's3://...'): planning lists and
// inspects them as CREATE EXTERNAL TABLE does, and keeps the entry in
// Redis under the call's text (planner.ReadCall.Text) for readTTL, so
// that the plan refers to it by name as to a table (it stays
// serializable) and the coordinator's Layout finds the files planning
// listed: a query's files are listed once.

// readKeyPrefix is the Redis key prefix of read entries.
const readKeyPrefix = "sluice:read:"

// readTTL is how long a read entry outlives the planning that made it: a
// job longer than that fails to find its files (planning again lists
// them afresh).
const readTTL = 24 * time.Hour

// isRead reports whether a scan's table name is a read call's text: a
// registered name never holds "(" (CheckName).
func isRead(name string) bool { return strings.Contains(name, "(") }

// ReadFiles implements planner.FileReader.
func (s *Store) ReadFiles(ctx context.Context, r *planner.ReadCall) (*planner.TableInfo, error) {
	if s.Bucket == nil {
		return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: %s: this catalog reads no files", r.Text())
	}
	paths := r.Paths
	if len(paths) == 0 {
		paths = []string{r.Path}
	}
	keys := make([]string, len(paths))
	for i, p := range paths {
		var err error
		if keys[i], err = s.pathKey(p); err != nil {
			return nil, err
		}
	}
	key := strings.Join(keys, LocationSep)
	name := r.Text()
	var err error
	var t *Table
	switch r.Format {
	case "csv":
		var opts CSVOptions
		if opts, err = ParseCSVOptions(r.Options); err == nil {
			t, err = InspectCSV(ctx, s.Bucket, name, key, opts)
		}
	case "parquet", "json":
		noHive := false
		for k, v := range r.Options {
			if k != "hive_partitioning" {
				return nil, plan.Errorf(plan.CodeBadOption, "%s: unknown option %q (known: hive_partitioning)", name, k)
			}
			on, berr := optBool(k, v)
			if berr != nil {
				return nil, berr
			}
			noHive = !on
		}
		if r.Format == "parquet" {
			t, err = InspectParquet(ctx, s.Bucket, name, key, ParquetOptions{NoHive: noHive})
		} else {
			t, err = InspectJSON(ctx, s.Bucket, name, key, noHive)
		}
	default:
		return nil, plan.Errorf(plan.CodeBadOption, "%s: unknown format %q", name, r.Format)
	}
	if err != nil {
		if plan.CodeOf(err) != "" {
			return nil, err
		}
		return nil, plan.Errorf(plan.CodeBadLocation, "%s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "table "), LocationSep, ", "))
	}
	t.External = true
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	err = s.Retry.Do(ctx, "set read", func() error { return s.rdb.Set(ctx, readKeyPrefix+name, b, readTTL).Err() })
	if err != nil {
		return nil, fmt.Errorf("keep %s: %w", name, err)
	}
	return &planner.TableInfo{Name: t.Name, Format: t.Format, Columns: t.Columns, Rows: t.Rows, Bytes: t.Bytes, Distinct: t.Distinct}, nil
}

// pathKey checks a path as a LOCATION is checked and returns its key.
func (s *Store) pathKey(p string) (string, error) {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return "", plan.Errorf(plan.CodeBadLocation, "path %q: want 's3://BUCKET/PREFIX/', 's3://BUCKET/FILE' or a glob 's3://BUCKET/dir/*.parquet'", p)
	}
	if s.BucketName != "" && u.Host != s.BucketName {
		return "", plan.Errorf(plan.CodeBadLocation, "path %q: files must be in the bucket sluice runs on (%s)", p, s.BucketName)
	}
	key := strings.TrimPrefix(p, "s3://"+u.Host+"/")
	if key == p {
		key = "" // s3://BUCKET: the whole bucket
	}
	if strings.Contains(key, LocationSep) {
		return "", plan.Errorf(plan.CodeBadLocation, "path %q: a line break in a path", p)
	}
	return key, nil
}

// getRead returns the entry ReadFiles kept for a read call's text.
func (s *Store) getRead(ctx context.Context, name string) (*Table, error) {
	var b []byte
	err := s.Retry.Do(ctx, "get read", func() (err error) {
		b, err = s.rdb.Get(ctx, readKeyPrefix+name).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, plan.Errorf(plan.CodeBadLocation, "%s: its file listing expired (kept %s after planning): run the query again", name, readTTL)
	}
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	return &t, nil
}
