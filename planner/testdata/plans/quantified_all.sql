-- x > ALL (q): two one-row aggregations of q (its kind: empty / has a NULL, and its max), cross-joined
select n_name from nation where n_nationkey > all (select r_regionkey from region where r_name like 'A%')
