-- QUALIFY is a filter over the window, below the projection
select n_regionkey, n_name from nation qualify row_number() over (partition by n_regionkey order by n_nationkey desc) = 1
