-- Sort key not in the select list: a hidden column, dropped at the end.
select o_orderkey, o_orderdate from orders order by o_totalprice desc nulls first, 2;
