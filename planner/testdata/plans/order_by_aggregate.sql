-- ORDER BY an aggregate that is not selected.
select l_returnflag from lineitem group by l_returnflag order by count(*) desc, l_returnflag;
