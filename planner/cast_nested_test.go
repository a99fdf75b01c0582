package planner

import (
	"context"
	"strings"
	"testing"
)

// TestNestedCastBinding: the nested cast syntax binds to DuckDB's types
// (STRUCT(...) and MAP(...) read back from the SQL after masking, T[] a
// list), row(...) is an unnamed struct, and the casts DuckDB refuses are
// SL008 type errors naming both types.
func TestNestedCastBinding(t *testing.T) {
	for q, want := range map[string]string{
		"select cast([o_orderkey] as varchar[]) from orders":                                           "VARCHAR[]",
		"select [o_orderkey]::decimal(9,2)[] is null, cast([[1]] as decimal(9,2)[][]) from orders":     "DECIMAL(9,2)[][]",
		"select cast({'a': o_orderkey, 'b': o_comment} as struct(b varchar, a double)) from orders":    "STRUCT(b VARCHAR, a DOUBLE)",
		"select cast(o_comment as STRUCT(\"x y\" BIGINT, z MAP(VARCHAR, DECIMAL(9,2)[]))) from orders": `STRUCT("x y" BIGINT, z MAP(VARCHAR, DECIMAL(9,2)[]))`,
		"select cast(o_comment as struct(a bigint)[]), 1 from orders":                                  "STRUCT(a BIGINT)[]):STRUCT(a BIGINT)[], 1",
		"select o_comment::map(varchar, bigint) from orders":                                           "MAP(VARCHAR, BIGINT)",
		"select try_cast(o_comment as bigint[]) from orders":                                           "BIGINT[]",
		"select row(o_orderkey, o_comment) from orders":                                                `STRUCT("" BIGINT, "" VARCHAR)`,
		"select (o_orderkey, o_comment)::varchar from orders":                                          "AS string",
		"select o_orderkey from orders where {'a': o_orderkey, 'b': 1} = row(o_custkey, 2)":            "",
		"select min([o_orderkey]), max({'c': o_comment}) from orders group by o_custkey":               "",
	} {
		p, err := Plan(context.Background(), q, testCatalog, Options{})
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if got := Explain(p); want != "" && !strings.Contains(got, want) {
			t.Errorf("%s: plan has no %s:\n%s", q, want, got)
		}
	}
	for q, want := range map[string]string{
		"select [o_orderkey]::bigint from orders":                                       "cannot cast BIGINT[] to int64",
		"select o_orderkey::bigint[] from orders":                                       "cannot cast int64 to BIGINT[]",
		"select cast({'a': o_orderkey} as struct(zz bigint)) from orders":               "cannot cast",
		"select cast([o_orderkey] as struct(a bigint)) from orders":                     "cannot cast",
		"select cast(o_comment::map(varchar, bigint) as map(bigint, date)) from orders": "cannot cast",
		"select [o_orderkey]::double[][] from orders":                                   "cannot cast",
		"select cast(o_comment as struct(a bigint, a varchar)) from orders":             "duplicate struct field",
	} {
		_, err := Plan(context.Background(), q, testCatalog, Options{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "SL") {
			t.Errorf("%s: %v, want an SL error with %q", q, err, want)
		}
	}
}
