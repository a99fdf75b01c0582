-- ORDER BY with LIMIT/OFFSET: a top-k per task, then one final top-k.
select l_orderkey, l_extendedprice
from lineitem
where l_shipdate > date '1995-03-15'
order by l_extendedprice desc, l_orderkey
limit 10 offset 5;
