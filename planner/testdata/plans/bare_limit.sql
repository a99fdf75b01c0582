-- LIMIT without ORDER BY; SELECT * expands every column.
select * from orders limit 5;
