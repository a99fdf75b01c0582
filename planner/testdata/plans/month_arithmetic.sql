-- Month arithmetic clamps to the end of the month (2000-01-31 + 1 month =
-- 2000-02-29); count(*) alone reads the narrowest column.
select count(*)
from orders
where o_orderdate >= date '2000-01-31' + interval '1' month
  and o_orderdate < date '2000-01-31' + interval '3' month - interval '1' day;
