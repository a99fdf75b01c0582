-- string_agg(... ORDER BY ...): rows hashed on the group keys, sorted in the task, then aggregated
select o_custkey, string_agg(o_orderstatus, ',' order by o_orderdate desc) from orders group by o_custkey
