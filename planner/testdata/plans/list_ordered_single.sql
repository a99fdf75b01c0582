-- An ordered list next to an unordered one: one step after a shuffle on
-- the keys, the rows sorted in each task.
select o_orderstatus, list(o_orderkey), list(o_totalprice order by o_orderdate) from orders group by o_orderstatus
