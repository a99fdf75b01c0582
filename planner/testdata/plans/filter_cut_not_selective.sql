-- No runtime-filter cut: the IN subquery's build side has no filter (an
-- aggregate alone is not selective), and NOT IN keeps its build side in
-- the join's stage whatever its HAVING. Compare tpch/q18, which is cut.
select o_orderkey, o_totalprice
from orders
where o_orderkey in (select l_orderkey from lineitem group by l_orderkey)
  and o_orderkey not in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300);
