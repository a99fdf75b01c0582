package planner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// oddQueries are valid and invalid statements at the edges of what the
// planner supports; each must plan or fail with an *Error, never panic.
var oddQueries = []string{
	"select 1 from lineitem",
	"select from lineitem",
	"select null from lineitem",
	"select null = null, null + null, -null from lineitem",
	"select * from lineitem where null",
	"select * from lineitem where false",
	"select count(*) from lineitem where 1 = 0 having false",
	"select l_orderkey from lineitem limit 0",
	"select l_orderkey from lineitem limit null offset 0",
	"select l_orderkey from lineitem order by l_orderkey limit 9223372036854775807 offset 9",
	"select l_orderkey, l_orderkey from lineitem order by l_orderkey",
	"select l_orderkey as l_partkey from lineitem order by l_partkey",
	"select sum(l_quantity), sum(l_quantity) from lineitem",
	"select distinct * from orders",
	"select distinct count(*) from lineitem group by l_returnflag order by 1",
	"select distinct l_returnflag from lineitem limit 2",
	"select l_returnflag, count(*) from lineitem group by 1, 1, l_returnflag",
	"select count(*) from lineitem group by l_returnflag, l_linestatus",
	"select l_returnflag from lineitem group by l_returnflag order by max(l_shipdate) desc nulls first limit 1",
	"select sum(x) from lineitem",
	"select lineitem.* from lineitem",
	"select l.*, l.l_orderkey from lineitem l",
	"select * from public.lineitem",
	"select * from a.b.lineitem",
	"select \"L_ORDERKEY\" from lineitem",
	"select l_orderkey from lineitem where l_orderkey in (1, 2, null, 3.5, '4')",
	"select l_orderkey from lineitem where l_orderkey not in (null)",
	"select l_orderkey from lineitem where l_orderkey in (l_partkey, 1)",
	"select l_orderkey from lineitem where l_shipdate between '1998-01-01' and date '1998-12-31'",
	"select l_orderkey from lineitem where l_comment like null",
	"select case when null then 1 end from lineitem",
	"select case when l_orderkey > 1 then null else null end from lineitem",
	"select case l_returnflag when null then 1 else 2 end from lineitem",
	"select coalesce(null, null) from lineitem",
	"select coalesce(l_tax, l_discount, 0.5, 1) from lineitem",
	"select extract(year from null) from lineitem",
	"select extract(hour from l_shipdate) from lineitem",
	"select extract(year from '1998-01-01') from lineitem",
	"select substring(l_comment from 2) from lineitem",
	"select substring(null, 1, 2) from lineitem",
	"select substring(l_comment, 1.5) from lineitem",
	"select 9223372036854775807 + 1 from lineitem",
	"select -9223372036854775808 from lineitem",
	"select 1 / 0, 1 % 0, 1.0 / 0 from lineitem",
	"select 999999999999999999 * 999999999999999999 from lineitem",
	"select 0.999999999999999999 from lineitem",
	"select 99999999999999999.9 * 10 from lineitem",
	"select date '9999-12-31' + interval '1' day from lineitem",
	"select date '0001-01-01' - interval '1' year from lineitem",
	"select date '2000-01-01' + interval '99999999999' year from lineitem",
	"select date '2000-01-01' + interval '1-2' year to month from lineitem",
	"select date '2000-01-01' + interval 'abc' from lineitem",
	"select date '2000-01-01' - interval '3 days' from lineitem",
	"select interval '1' day from lineitem",
	"select interval '1' day - date '2000-01-01' from lineitem",
	"select null + interval '1' day from lineitem",
	"select l_quantity + interval '1' day from lineitem",
	"select cast(null as date), cast(l_orderkey as numeric(10)), cast(l_tax as decimal(40,2)) from lineitem",
	"select cast(l_tax as decimal(2,5)) from lineitem",
	"select '1.5'::float, 'true'::bool, 'x'::bool, 1::bool, true::int from lineitem",
	"select l_orderkey::text::int from lineitem",
	"select l_orderkey from lineitem order by l_orderkey using <",
	"select l_orderkey from lineitem fetch first 3 rows with ties",
	"select l_orderkey from lineitem for update",
	"select l_orderkey from lineitem window w as ()",
	"select row_number() over () from lineitem",
	"select count(*) filter (where l_tax > 0) from lineitem",
	"select string_agg(l_comment, ',' order by l_comment) from lineitem",
	"select count(l_orderkey, l_partkey) from lineitem",
	"select count() from lineitem",
	"select sum(*) from lineitem",
	"select upper(*) from lineitem",
	"select * from lineitem where (l_orderkey, l_partkey) = (1, 2)",
	"select * from lineitem where l_orderkey = any(array[1,2])",
	"select * from lineitem where l_orderkey is distinct from 1",
	"select * from lineitem where l_orderkey is true",
	"select * from lineitem where l_comment similar to 'a%'",
	"select * from lineitem where l_comment like 'a%' escape '!'",
	"select * from lineitem where l_orderkey between symmetric 1 and 2",
	"select $1 from lineitem",
	"select current_date from lineitem",
	"select greatest(1, 2) from lineitem",
	"select l_comment collate \"C\" from lineitem",
	"select array[1] from lineitem",
	"select (l_orderkey) from lineitem",
	"select l_comment[1] from lineitem",
	"select * from lineitem l(a, b)",
	"select * from generate_series(1, 3)",
	"select * from lineitem tablesample system (10)",
	"values (1)",
	"explain select 1",
	"create table t (a int)",
	"select 1 from lineitem union all select 2 from lineitem",
	"select * into t from lineitem",
	";",
	"-- nothing",
	"select l_orderkey from lineitem group by ()",
	"select l_orderkey from lineitem group by cube (l_orderkey)",
	"select count(*) from lineitem group by distinct l_orderkey",
	"select l_orderkey from lineitem group by l_orderkey having l_orderkey",
	"select sum(l_quantity) s from lineitem order by s + 1, sum(l_tax), 1",
	"select l_returnflag f from lineitem group by f order by f",
	"select l_quantity * l_quantity * l_quantity * l_quantity * l_quantity * l_quantity * l_quantity * l_quantity * l_quantity * l_quantity from lineitem",
	"select cast(l_quantity as decimal(18,18)) + l_orderkey from lineitem",
	"select l_shipdate - l_commitdate from lineitem",
	"select -l_shipdate from lineitem",
	"select +l_comment from lineitem",
	"select ~l_orderkey from lineitem",
	"select l_orderkey ^ 2 from lineitem",
	"select '😀' || l_comment from lineitem where l_comment = '😀' and l_foo = 1",
}

func TestOddQueries(t *testing.T) {
	for _, q := range oddQueries {
		checkPlanNoPanic(t, q)
	}
}

func checkPlanNoPanic(t *testing.T, q string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%q: panic: %v", q, r)
		}
	}()
	p, err := Plan(context.Background(), q, testCatalog, Options{})
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) || pe.Code == "" {
			t.Errorf("%q: error %v is not a coded *Error", q, err)
		}
		if pe != nil && (pe.Pos < 0 || pe.Pos > len([]rune(q))+1) {
			t.Errorf("%q: position %d out of range", q, pe.Pos)
		}
		return
	}
	if _, err := json.Marshal(p.Graph); err != nil {
		t.Errorf("%q: marshal: %v", q, err)
	}
	_ = Explain(p)
}

// FuzzPlan plans arbitrary text: it must never panic, and every failure is
// a coded *Error. Run with go test ./planner -fuzz FuzzPlan.
func FuzzPlan(f *testing.F) {
	files, _ := filepath.Glob("testdata/plans/*.sql")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(string(b))
	}
	for _, q := range oddQueries {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		checkPlanNoPanic(t, q)
	})
}
