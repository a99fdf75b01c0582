select o_orderkey from orders where o_totalprice > (select avg(l_extendedprice) from lineitem where l_orderkey = o_orderkey and l_shipdate > o_orderdate)
