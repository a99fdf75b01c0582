-- A struct column used whole is read whole: nested_paths leaves it, and
-- its field in the filter does not prune.
select e_info, e_info.a
from events
where e_info.a > 5;
