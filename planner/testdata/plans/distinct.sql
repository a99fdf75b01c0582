-- DISTINCT is a grouping on every output column.
select distinct l_returnflag, l_linestatus from lineitem order by 1, 2;
