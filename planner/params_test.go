package planner

import (
	"context"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

func TestParamTypes(t *testing.T) {
	null := plan.NullType
	for _, tc := range []struct {
		sql  string
		want []plan.DataType
	}{
		{`select n_name from nation where n_nationkey = $1`, []plan.DataType{i64}},
		{`select n_name from nation where $1 = n_name`, []plan.DataType{str}},
		{`select o_orderkey from orders where o_orderdate < $1 and o_totalprice > $2`, []plan.DataType{date, money}},
		{`select n_name from nation limit $1 offset $2`, []plan.DataType{i64, i64}},
		{`select $1 + n_nationkey from nation`, []plan.DataType{i64}},
		{`select l_extendedprice * $1 from lineitem`, []plan.DataType{money}},
		{`select n_name from nation where n_regionkey = coalesce($2, 1) and n_name <> $1`, []plan.DataType{str, i64}},
		{`select $1::date, cast($2 as double)`, []plan.DataType{date, plan.Float64Type}},
		{`select n_name from nation where n_nationkey in ($1, $2)`, []plan.DataType{i64, i64}},
		{`select l_discount from lineitem where l_discount between $1 and $2`, []plan.DataType{money, money}},
		{`select n_name from nation where n_regionkey = (select r_regionkey from region where r_name = $1)`, []plan.DataType{str}},
		{`select $1 as untyped from nation where n_nationkey = $2`, []plan.DataType{null, i64}},
		{`select n_name from nation where n_nationkey = $3`, []plan.DataType{null, null, i64}},
		{`select n_name from nation where n_name like $1`, []plan.DataType{str}},
		{`select 1`, []plan.DataType{}},
	} {
		got, err := ParamTypes(context.Background(), tc.sql, testCatalog, Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.sql, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: $%d is %s, want %s", tc.sql, i+1, got[i], tc.want[i])
			}
		}
	}
	if _, err := ParamTypes(context.Background(), `select nope from nation where n_nationkey = $1`, testCatalog, Options{}); plan.CodeOf(err) != CodeUnknownCol {
		t.Errorf("unknown column: %v", err)
	}
}
