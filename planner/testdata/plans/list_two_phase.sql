-- list(x) without ORDER BY or DISTINCT aggregates in two phases
-- (list_unordered: partial lists concatenated in the final step), as min
-- of a nested value does (its state is the value).
select o_orderstatus, list(o_orderkey), min([o_custkey, o_orderkey]), max({'d': o_orderdate}) from orders group by o_orderstatus
