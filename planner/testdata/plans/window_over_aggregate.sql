select l_returnflag, l_linestatus, sum(l_quantity) as q,
  sum(sum(l_quantity)) over (partition by l_returnflag) as flag_total,
  rank() over (partition by l_returnflag order by sum(l_quantity) desc) as rk
from lineitem group by l_returnflag, l_linestatus
