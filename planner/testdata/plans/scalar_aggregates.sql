-- Aggregates without GROUP BY: min/max of dates and strings, %, unary
-- minus, division (float64), count of a column.
select min(l_shipdate), max(l_comment), sum(l_linenumber % 3), avg(-l_tax), sum(l_quantity / 2), count(l_comment)
from lineitem;
