-- Simple CASE, CAST and ::, a string literal compared with a date, division.
select
	o_orderkey,
	case o_orderstatus when 'F' then 'final' when 'O' then 'open' else 'other' end as status,
	cast(o_totalprice as double) / 2 as half,
	o_totalprice::int as rounded,
	substring(o_comment, 1, 10) as note
from orders
where o_orderdate = '1995-01-01' and not (o_shippriority = 1);
