-- Table alias, qualified columns, a decimal literal wider than the column.
select l.l_orderkey, l.l_quantity
from lineitem as l
where l.l_quantity > 10.505 and l.l_linenumber between 1 and 3
order by l.l_orderkey
limit 3;
