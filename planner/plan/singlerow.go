package plan

// KindSingleRow passes its input on and fails the task when it holds more
// than one row: the check of a scalar subquery that is not known to yield
// one row (the planner gathers its rows into one task first). With Exprs
// (the correlation keys of a decorrelated correlated scalar subquery) it
// fails on two rows of the same keys, none of them NULL (a NULL key meets
// no outer row); the planner partitions the rows by the keys first.
const KindSingleRow Kind = "single_row"
