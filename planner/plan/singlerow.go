package plan

// KindSingleRow passes its input on and fails the task when it holds more
// than one row: the check of a scalar subquery that is not known to yield
// one row (the planner gathers its rows into one task first).
const KindSingleRow Kind = "single_row"
