package plan

// KindUnnest emits, for each input row, one row per element of the list
// Node.Exprs[0] (over the input): the input's columns repeated, then the
// element (the node's last schema field). A NULL or empty list gives no
// rows, as DuckDB's UNNEST in a select list. It is row by row, so it runs
// wherever its input does.
const KindUnnest Kind = "unnest"
