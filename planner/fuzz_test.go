package planner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// oddQueries are valid and invalid statements at the edges of what the
// planner supports; each must plan or fail with an *Error, never panic.
var oddQueries = []string{
	"select 1 from lineitem",
	"select l_orderkey from lineitem qualify",
	"select l_orderkey from lineitem qualify qualify",
	"qualify",
	"select (select 1 qualify row_number() over () = 1) qualify",
	"select l_orderkey from lineitem qualify (row_number() over () = 1",
	"select l_orderkey from lineitem qualify row_number() over () = 1) x",
	"select l_orderkey, count(*) from lineitem group by all",
	"select count(*) from lineitem group by all all",
	"group by all",
	"select l_orderkey from lineitem where (l_orderkey, l_partkey) > all (select 1, 2)",
	"select (1, 2) in ((1), (1, 2, 3))",
	"select (l_orderkey) in (select 1, 2) from lineitem",
	"select () = ()",
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
	// joins, subqueries, CTEs, unions
	"select * from lineitem, orders",
	"select * from lineitem cross join orders where l_orderkey = o_orderkey",
	"select * from orders o join lineitem l on true",
	"select * from orders o join lineitem l on false",
	"select * from orders full join lineitem on o_orderkey = l_orderkey",
	"select * from orders right join lineitem on o_orderkey = l_orderkey and l_tax > 0",
	"select * from orders left join lineitem on o_orderkey = l_orderkey and o_orderkey = 5 where l_tax is null",
	"select * from orders left join lineitem on o_orderkey + 1 = l_orderkey * 2",
	"select * from orders left join lineitem on (o_orderkey = l_orderkey and l_tax > 0) or (o_orderkey = l_orderkey and l_tax < 0)",
	"select * from (select * from orders) o, (select * from lineitem) l where o.o_orderkey = l.l_orderkey",
	"select * from (select 1 from orders) x",
	"select x from (select o_orderkey x from orders) t(a)",
	"select a, b from (select o_orderkey, o_custkey from orders) t(a, b, c)",
	"with a as (select * from orders), b as (select * from a) select count(*) from b",
	"with a as (select * from b), b as (select * from orders) select * from a",
	"with a as (select 1 from orders), a as (select 2 from orders) select * from a",
	"with a (x, y) as (select o_orderkey from orders) select * from a",
	"select * from orders where o_orderkey in (select o_orderkey from orders where o_orderkey in (select l_orderkey from lineitem))",
	"select * from orders where exists (select * from lineitem where exists (select * from part where p_partkey = l_partkey and o_orderkey = l_orderkey))",
	"select * from orders where exists (select * from lineitem where l_orderkey = o_orderkey and exists (select * from part where p_partkey = l_partkey))",
	"select (select max(l_tax) from lineitem where l_orderkey = o_orderkey) from orders",
	"select o_orderkey, (select count(*) from lineitem) from orders",
	"select o_custkey, (select max(l_tax) from lineitem where l_suppkey = o_custkey) from orders group by o_custkey",
	"select o_custkey, (select max(l_tax) from lineitem where l_suppkey = o_orderkey) from orders group by o_custkey",
	"select count(*) from orders group by o_custkey having count(*) > (select avg(o_totalprice) from orders)",
	"select count(*) from orders group by o_custkey having o_custkey in (select l_suppkey from lineitem)",
	"select count(*) from orders group by o_custkey having exists (select * from lineitem where l_suppkey = o_custkey)",
	"select * from lineitem where l_orderkey = (select o_orderkey from orders where o_orderkey = l_orderkey)",
	"select * from lineitem where l_tax < (select sum(o_totalprice) from orders where o_orderkey = l_orderkey and o_custkey = l_suppkey + 1)",
	"select * from lineitem where l_tax < (select coalesce(sum(o_totalprice), 0) from orders where o_orderkey = l_orderkey)",
	"select * from lineitem where l_tax < (select sum(o_totalprice) from orders where o_orderkey = l_orderkey having count(*) > 1)",
	"select * from lineitem where l_tax < (select sum(o_totalprice) from orders where o_orderkey = l_orderkey group by o_custkey)",
	"select * from lineitem where l_tax < (select sum(o_totalprice) from orders where o_orderkey in (select l_orderkey from lineitem l2 where l2.l_suppkey = lineitem.l_suppkey))",
	"select * from lineitem union all select * from lineitem",
	"select l_orderkey from lineitem union select o_orderkey from orders order by 1 limit 3",
	"select l_orderkey from lineitem union all select o_orderkey from orders order by l_orderkey desc",
	"select l_orderkey from lineitem union all select null from orders",
	"select l_tax from lineitem union all select o_totalprice from orders union all select 1 from part",
	"select * from orders where o_orderkey in (select null from lineitem)",
	"select * from orders where null in (select l_orderkey from lineitem)",
	"select * from orders where 5 in (select l_orderkey from lineitem)",
	"select * from orders where o_orderkey not in (select 1 from lineitem)",
	"select * from orders where o_totalprice not in (select l_tax from lineitem where l_orderkey = o_orderkey)",
	"select count(distinct o_custkey) from orders",
	"select count(distinct o_custkey), count(distinct o_orderkey) from orders",
	"select sum(distinct o_totalprice), avg(distinct o_totalprice), max(o_totalprice) from orders group by o_custkey",
	"select count(distinct o_custkey + 1) from orders having count(distinct o_custkey + 1) > 1",
	"select * from orders o, lineitem l where o.o_orderkey = l.l_orderkey and o.o_orderkey in (select l_orderkey from lineitem)",
	"select exists (select * from orders) from lineitem",
	"select * from nation n1 join nation n2 on n1.n_regionkey = n2.n_regionkey join region on n1.n_regionkey = r_regionkey",
	"select * from lineitem where l_orderkey in (select o_orderkey from orders limit 5)",
	"select * from (select * from orders order by o_totalprice limit 10) t join lineitem on o_orderkey = l_orderkey",
	"select * from orders where exists (select * from lineitem where l_orderkey = o_orderkey limit 1)",
	"select * from orders where exists (select count(*) from lineitem where l_orderkey = o_orderkey)",
	"select * from orders where (select count(*) from lineitem) > 0 and exists (select * from part)",
	"select * from orders where o_orderkey = (select max(l_orderkey) from lineitem) or o_orderkey = 1",
	"select sum((select max(l_tax) from lineitem)) from orders",
	"select * from orders where o_orderkey in (select l_orderkey from lineitem union all select p_partkey from part)",
	"select * from orders join (select l_orderkey, count(*) c from lineitem group by l_orderkey) x on o_orderkey = x.l_orderkey where c > 3",
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
	for _, file := range planCases(f) {
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
