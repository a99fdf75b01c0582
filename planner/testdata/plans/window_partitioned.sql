select o_custkey, o_orderkey,
  row_number() over (partition by o_custkey order by o_orderdate desc, o_orderkey) as rn,
  sum(o_totalprice) over (partition by o_custkey order by o_orderkey rows between 2 preceding and current row) as s3,
  rank() over (order by o_totalprice desc) as overall
from orders where o_orderstatus = 'F'
