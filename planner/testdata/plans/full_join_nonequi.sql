-- an outer join without an equality: a hash join on a constant key, the condition its residual
select n_name, r_name from nation full join region on n_nationkey < r_regionkey - 2
