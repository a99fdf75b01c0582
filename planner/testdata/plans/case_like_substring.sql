-- Searched CASE in an aggregate, NOT LIKE, SUBSTRING, IS NOT NULL.
select
	o_orderpriority,
	sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
	count(*) as order_count
from orders
where o_comment not like '%special%requests%'
  and substring(o_clerk from 7 for 3) = '000'
  and o_custkey is not null
group by o_orderpriority
order by o_orderpriority;
