-- GROUP BY position; HAVING with aggregates absent from the select list
-- and one on a group key (pushed below the aggregation); top-k on an alias.
select l_suppkey, sum(l_quantity) as qty
from lineitem
group by 1
having count(*) > 10 and avg(l_discount) > 0.05 and l_suppkey < 1000
order by qty desc
limit 10;
