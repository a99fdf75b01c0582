package catalog

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestOpenIcebergCatalogSpecs: the specs --iceberg-catalog refuses, with
// what each error says, and a SQL catalog on a new SQLite file that opens
// empty. (REST and Glue need a server or AWS: not opened here.)
func TestOpenIcebergCatalogSpecs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ spec, want string }{
		{"nessie", "want rest:URI, sql:sqlite:PATH or glue:"},
		{"hive:thrift://h:9083", `unknown kind "hive"`},
		{"sql:postgres:host=db", "want sql:sqlite:PATH"},
		{"sql:sqlite:/tmp/x.db?%zz", "iceberg catalog properties"},
	} {
		_, err := OpenIcebergCatalog(ctx, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenIcebergCatalog(%q) = %v, want an error with %q", tc.spec, err, tc.want)
		}
	}
	c, err := OpenIcebergCatalog(ctx, "sql:sqlite:"+filepath.Join(t.TempDir(), "c.db")+"?warehouse=s3://b/wh&name=test")
	if err != nil {
		t.Fatal(err)
	}
	nss, err := c.ListNamespaces(ctx, nil)
	if err != nil || len(nss) != 0 {
		t.Fatalf("a new SQL catalog: namespaces %v, %v", nss, err)
	}
	for _, tc := range []struct {
		name string
		want table.Identifier
	}{{"lake.events", table.Identifier{"lake", "events"}}, {"a.b.c", table.Identifier{"a", "b", "c"}}, {"events", nil}, {"lake.", nil}} {
		got, ok := catalogIdent(tc.name)
		if ok != (tc.want != nil) || strings.Join(got, "/") != strings.Join(tc.want, "/") {
			t.Errorf("catalogIdent(%q) = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}
