-- rewrite_sums: the sums of l_linenumber plus or minus a constant become
-- one sum(l_linenumber) and one count(l_linenumber) under a projection
-- (ClickBench's Q29 has 90 of them); two sums of l_suppkey * k become
-- k * sum(l_suppkey). Not rewritten: a single sum(x + k)
-- of another column.
select l_returnflag,
	sum(l_linenumber), sum(l_linenumber + 1), sum(l_linenumber + 2), sum(l_linenumber - 3), sum(4 - l_linenumber),
	sum(l_orderkey + 1), sum(l_suppkey * 2), sum(l_suppkey * 3)
from lineitem
group by l_returnflag;
