package plan

// The variance family: sample and population variance and standard
// deviation over float64 arguments. Their partial state is [count int64,
// mean float64, m2 float64] (Welford's running moments), merged across
// partial and final stages with Chan's formula, so they are exact up to
// float64 rounding however the rows are split.
const (
	AggVarSamp    AggFunc = "var_samp"
	AggVarPop     AggFunc = "var_pop"
	AggStddevSamp AggFunc = "stddev_samp"
	AggStddevPop  AggFunc = "stddev_pop"
)

// The holistic aggregates: exact, over every value of a group, so they
// have no partial form; the planner shuffles rows on the group keys and
// aggregates each group in one task (as count(DISTINCT)).
const (
	AggMedian         AggFunc = "median"
	AggPercentileCont AggFunc = "percentile_cont" // AggCall.Fraction
	AggPercentileDisc AggFunc = "percentile_disc" // AggCall.Fraction
	AggStringAgg      AggFunc = "string_agg"      // AggCall.Sep
	AggList           AggFunc = "list"            // array_agg: the values, NULLs too, as a list
	// AggListWrapped is list over one-element lists (list_value(x)),
	// skipping NULL arguments: list where expandOrderedAggregates feeds
	// NULLs for the rows of other copies.
	AggListWrapped AggFunc = "list_wrapped"
	// AggListUnordered is list without ORDER BY or DISTINCT, planned in
	// two phases: the partial state is the list so far, the final step
	// concatenates.
	AggListUnordered AggFunc = "list_unordered"
)

// AggApproxCountDistinct estimates the number of distinct non-NULL values
// with a HyperLogLog sketch of 2^12 registers (about 1.6% standard error);
// its partial state is the sketch (a string column of register bytes),
// merged by taking the larger register, so it runs in partial and final
// stages like sum.
const AggApproxCountDistinct AggFunc = "approx_count_distinct"

// HLLRegisters is the number of registers of an approx_count_distinct sketch.
const HLLRegisters = 1 << 12

// The aggregates of two arguments (AggCall.Arg, the value, and More[0],
// the key): DuckDB's arg_min/arg_max and their _null forms.
const (
	AggArgMin     AggFunc = "arg_min"
	AggArgMax     AggFunc = "arg_max"
	AggArgMinNull AggFunc = "arg_min_null"
	AggArgMaxNull AggFunc = "arg_max_null"
)
