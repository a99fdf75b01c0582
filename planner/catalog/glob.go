package catalog

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Globs in a location, as DuckDB reads them: '*' matches any run of
// characters within one path segment, '?' one character, '[abc]' and
// '[a-z]' one of a set, and a segment '**' any number of segments (none
// included). A location with none of these characters is a prefix or a
// file (ListFiles).

// LocationSep separates the locations of a table read from a list of
// paths (read_parquet(['s3://b/x/', 's3://b/y.parquet'])): a line break,
// which no s3:// URL holds.
const LocationSep = "\n"

// listEach lists every location of a list, in list order, each file once.
func listEach(ctx context.Context, b objstore.Bucket, locations string, exts []string) ([]objstore.ObjectInfo, error) {
	var out []objstore.ObjectInfo
	seen := map[string]bool{}
	for _, l := range strings.Split(locations, LocationSep) {
		objs, err := ListFiles(ctx, b, l, exts...)
		if err != nil {
			return nil, err
		}
		if len(objs) == 0 { // as DuckDB: every path of a list must match
			return nil, fmt.Errorf("no %s files under %s", strings.Join(exts, ", "), l)
		}
		for _, o := range objs {
			if !seen[o.Key] {
				seen[o.Key] = true
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// hiveBase is where the hive folders of key start: the base of the
// location (of a list, the first whose base holds key).
func hiveBase(location, key string) string {
	for _, l := range strings.Split(location, LocationSep) {
		if base := GlobBase(l); strings.HasPrefix(key, base) || !strings.Contains(location, LocationSep) {
			return base
		}
	}
	return ""
}

// IsGlob reports whether location holds a glob character.
func IsGlob(location string) bool { return strings.ContainsAny(location, "*?[") }

// GlobBase is the folder of location before its first glob character
// ("data/2024/*/x.csv" -> "data/2024/"): what a glob lists, and where
// hive key=value folders start.
func GlobBase(location string) string {
	i := strings.IndexAny(location, "*?[")
	if i < 0 {
		return location
	}
	return location[:strings.LastIndexByte(location[:i], '/')+1]
}

// listGlob lists the files matching the glob pattern: one LIST of its
// base folder, then the match of every key.
func listGlob(ctx context.Context, b objstore.Bucket, pattern string, exts []string) ([]objstore.ObjectInfo, error) {
	pat := strings.Split(pattern, "/")
	for _, seg := range pat {
		if _, err := path.Match(seg, ""); err != nil {
			return nil, fmt.Errorf("glob %s: bad pattern segment %q", pattern, seg)
		}
	}
	base := GlobBase(pattern)
	objs, err := b.List(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", base, err)
	}
	var kept []objstore.ObjectInfo
	for _, o := range objs {
		if _, name := path.Split(o.Key); strings.HasPrefix(name, CommitMarkerPrefix) {
			kept = append(kept, o) // for committedFiles, which drops it
			continue
		}
		if globMatch(pat, strings.Split(o.Key, "/")) {
			kept = append(kept, o)
		}
	}
	return committedFiles(ctx, b, base, kept, exts)
}

// globMatch matches path segments against pattern segments, a "**"
// segment standing for any number of segments.
func globMatch(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if globMatch(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
