-- Filter and projection only: IN list, column comparison, arithmetic.
select l_orderkey, l_extendedprice * (1 - l_discount) as net, l_shipmode
from lineitem
where l_shipmode in ('MAIL', 'SHIP')
  and l_commitdate < l_receiptdate
  and l_receiptdate >= date '1994-01-01'
  and l_receiptdate < date '1994-01-01' + interval '1' year;
