-- GROUP BY a select-list alias of an expression; ORDER BY the alias.
select extract(year from o_orderdate) as o_year, count(*) as orders, sum(o_totalprice) as total
from orders
where o_orderstatus <> 'P'
group by o_year
order by o_year desc;
