package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	iceberggo "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/glue"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// IO for the catalogs' own reads of metadata files
	"github.com/apache/iceberg-go/table"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver (pure Go) of the SQL catalog

	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog/iceberg"
)

// Iceberg catalogs (--iceberg-catalog): the tables of an Iceberg catalog
// are sluice tables named "namespace.table" (a nested namespace joins its
// levels with dots), found when a query names them and listed by SHOW
// TABLES. They are not copied into sluice's own catalog: each lookup asks
// the catalog for the table's current metadata file, so a commit made
// through any engine is seen by the next query; from the metadata file on,
// a catalog table is an Iceberg table like one registered by LOCATION
// (snapshots, time travel, pruning, deletes). The metadata and data files
// must be in the bucket sluice runs on.
//
// The catalog is one of iceberg-go's:
//
//	rest:https://host/path?warehouse=w&credential=id:secret&token=t&k=v  (or just https://...)
//	sql:sqlite:/path/catalog.db?name=c&warehouse=s3://bucket/wh&k=v
//	glue:?region=r&warehouse=w&k=v
//
// Query parameters other than the named ones are passed to the catalog as
// properties (s3.endpoint, s3.access-key-id, ... for the catalog's own
// reads of metadata files). The SQL catalog runs on SQLite through the
// pure-Go modernc.org/sqlite driver; Glue takes its credentials and
// region from the AWS SDK's default chain.

// OpenIcebergCatalog opens the catalog spec names (see above).
func OpenIcebergCatalog(ctx context.Context, spec string) (icecat.Catalog, error) {
	kind, rest0, ok := strings.Cut(spec, ":")
	if !ok {
		return nil, fmt.Errorf("iceberg catalog %q: want rest:URI, sql:sqlite:PATH or glue:", spec)
	}
	switch kind {
	case "http", "https":
		return openREST(ctx, spec)
	case "rest":
		return openREST(ctx, rest0)
	case "sql":
		return openSQL(rest0)
	case "glue":
		return openGlue(ctx, rest0)
	}
	return nil, fmt.Errorf("iceberg catalog %q: unknown kind %q (want rest, sql or glue)", spec, kind)
}

// splitProps cuts the query of s off as properties.
func splitProps(s string) (string, iceberggo.Properties, error) {
	base, q, _ := strings.Cut(s, "?")
	vals, err := url.ParseQuery(q)
	if err != nil {
		return "", nil, fmt.Errorf("iceberg catalog properties %q: %w", q, err)
	}
	props := iceberggo.Properties{}
	for k, v := range vals {
		props[k] = v[len(v)-1]
	}
	return base, props, nil
}

func take(props iceberggo.Properties, k string) string {
	v := props[k]
	delete(props, k)
	return v
}

func openREST(ctx context.Context, s string) (icecat.Catalog, error) {
	uri, props, err := splitProps(s)
	if err != nil {
		return nil, err
	}
	var opts []rest.Option
	if w := take(props, "warehouse"); w != "" {
		opts = append(opts, rest.WithWarehouseLocation(w))
	}
	if c := take(props, "credential"); c != "" {
		opts = append(opts, rest.WithCredential(c))
	}
	if t := take(props, "token"); t != "" {
		opts = append(opts, rest.WithOAuthToken(t))
	}
	if len(props) > 0 {
		opts = append(opts, rest.WithAdditionalProps(props))
	}
	c, err := rest.NewCatalog(ctx, "rest", uri, opts...)
	if err != nil {
		return nil, fmt.Errorf("iceberg REST catalog %s: %w", uri, err)
	}
	return c, nil
}

func openSQL(s string) (icecat.Catalog, error) {
	driver, dsn, ok := strings.Cut(s, ":")
	if !ok || driver != "sqlite" {
		return nil, fmt.Errorf("iceberg SQL catalog %q: want sql:sqlite:PATH (the one database driver sluice links)", "sql:"+s)
	}
	path, props, err := splitProps(dsn)
	if err != nil {
		return nil, err
	}
	name := take(props, "name")
	if name == "" {
		name = "sluice"
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, fmt.Errorf("iceberg SQL catalog %s: %w", path, err)
	}
	c, err := sqlcat.NewCatalog(name, db, sqlcat.SQLite, props)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("iceberg SQL catalog %s: %w", path, err)
	}
	return c, nil
}

func openGlue(ctx context.Context, s string) (icecat.Catalog, error) {
	_, props, err := splitProps(s)
	if err != nil {
		return nil, err
	}
	var lo []func(*awsconfig.LoadOptions) error
	if r := take(props, "region"); r != "" {
		lo = append(lo, awsconfig.WithRegion(r))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("iceberg Glue catalog: AWS configuration: %w", err)
	}
	c, err := glue.NewCatalog(glue.WithAwsConfig(cfg), glue.WithAwsProperties(glue.AwsProperties(props)))
	if err != nil {
		return nil, fmt.Errorf("iceberg Glue catalog: %w", err)
	}
	return c, nil
}

// catalogIdent is the catalog identifier of a sluice table name
// "namespace.table" (ok false for a name without a dot).
func catalogIdent(name string) (table.Identifier, bool) {
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return nil, false
	}
	for _, p := range parts {
		if p == "" {
			return nil, false
		}
	}
	return table.Identifier(parts), true
}

// icebergCatalogTable builds the entry of the catalog table name
// ("namespace.table") from the metadata file the catalog points to now.
func (s *Store) icebergCatalogTable(ctx context.Context, name string) (*Table, error) {
	ident, ok := catalogIdent(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", planner.ErrUnknownTable, name)
	}
	tbl, err := s.Iceberg.LoadTable(ctx, ident)
	if errors.Is(err, icecat.ErrNoSuchTable) || errors.Is(err, icecat.ErrNoSuchNamespace) {
		return nil, fmt.Errorf("%w: %s (not in the Iceberg catalog either)", planner.ErrUnknownTable, name)
	}
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: table %s: %w", name, err)
	}
	if s.Bucket == nil {
		return nil, errors.New("catalog: Iceberg catalog tables need the store's bucket")
	}
	key, err := iceberg.NewFS(ctx, s.Bucket, s.BucketName).Key(tbl.MetadataLocation())
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: table %s: %w", name, err)
	}
	t, err := InspectIceberg(ctx, s.Bucket, s.BucketName, name, key)
	if err != nil {
		return nil, err
	}
	t.Location = key
	return t, nil
}

// icebergCatalogList lists the catalog's tables (every namespace, nested
// ones too), each as of its current metadata file.
func (s *Store) icebergCatalogList(ctx context.Context) ([]*Table, error) {
	var out []*Table
	seen := map[string]bool{}
	var walk func(parent table.Identifier) error
	walk = func(parent table.Identifier) error {
		nss, err := s.Iceberg.ListNamespaces(ctx, parent)
		if err != nil {
			return fmt.Errorf("iceberg catalog: list namespaces: %w", err)
		}
		for _, ns := range nss {
			if k := strings.Join(ns, "\x00"); seen[k] {
				continue
			} else {
				seen[k] = true
			}
			for ident, err := range s.Iceberg.ListTables(ctx, ns) {
				if err != nil {
					return fmt.Errorf("iceberg catalog: list tables of %s: %w", strings.Join(ns, "."), err)
				}
				t, err := s.icebergCatalogTable(ctx, strings.Join(ident, "."))
				if err != nil {
					return err
				}
				out = append(out, t)
			}
			if len(ns) > len(parent) {
				if err := walk(ns); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(nil); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i].Name) < key(out[j].Name) })
	return out, nil
}
