select l_returnflag, l_linestatus, grouping(l_linestatus) as g, sum(l_quantity) as q
from lineitem group by rollup (l_returnflag, l_linestatus)
