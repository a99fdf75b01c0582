-- a row-valued IN conjunct is a semi join on every column
select n_name from nation where (n_regionkey, n_nationkey) in (select r_regionkey, r_regionkey from region)
