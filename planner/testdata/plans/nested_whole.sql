-- A struct column used whole is read whole: nested_paths leaves it, but
-- the filter on its field is a pruning filter (the leaf's statistics).
select e_info, e_info.a
from events
where e_info.a > 5;
