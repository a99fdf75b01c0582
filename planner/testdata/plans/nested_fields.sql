-- Struct fields read alone (nested_paths): e_info.a, e_info.c become scan
-- columns with paths (e_info.c.x a field of e_info.c), and the pushed
-- filter on e_info.a is a pruning filter on a plain column.
select e_id, e_info.c.x, e_info.c, e_info['b'] as b
from events
where e_info.a > 5 and e_info.c.y = 'k'
order by e_info.a;
