-- Lists of structs read with only the element fields used (list_fields):
-- e_items{a, c.x} reads the leaves under a and c.x of the elements, and
-- e_deep.l (a list in a struct, a field column of nested_paths) only q.
select e_id, e_items[1].a, x.c.x, e_deep.l[1].q
from events, unnest(e_items) as u(x)
where e_id > 5;
