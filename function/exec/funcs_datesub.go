package exec

import (
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// date_diff and date_sub over dates and timestamps, as DuckDB's:
//
//   - date_diff(part, start, end) counts the part boundaries crossed from
//     start to end (the calendar parts from the dates, weeks as whole
//     7-day spans of the dates, hours, minutes, seconds and milliseconds
//     from the epoch values each truncated to the part);
//   - date_sub(part, start, end) counts the complete parts between them:
//     months (and quarters, years, decades, centuries, millennia as
//     months / 3, 12, ...) as an age in months, where an end on the last
//     day of its month completes a month started on a later day (January
//     31 to February 29 is one month); days, weeks and the parts of a day
//     as the elapsed microseconds divided by the part (towards zero).
//
// A date is its midnight. Both are negative when end is before start.

// diffPart is the canonical name of a date part as date_diff and date_sub
// take it, or "" when it is none.
func diffPart(field string) string {
	switch field {
	case "year", "years", "yr", "yrs", "y":
		return "year"
	case "isoyear":
		return "isoyear"
	case "quarter", "quarters":
		return "quarter"
	case "month", "months", "mon", "mons":
		return "month"
	case "week", "weeks", "w", "weekofyear", "yearweek":
		return "week"
	case "day", "days", "d", "dayofmonth", "dow", "dayofweek", "isodow", "doy", "dayofyear", "julian":
		return "day"
	case "decade", "decades", "dec", "decs":
		return "decade"
	case "century", "centuries", "cent", "c":
		return "century"
	case "millennium", "millennia", "millenium", "mil", "mils":
		return "millennium"
	case "hour", "hours", "hr", "hrs", "h":
		return "hour"
	case "minute", "minutes", "min", "mins", "m":
		return "minute"
	case "second", "seconds", "sec", "secs", "s", "epoch":
		return "second"
	case "millisecond", "milliseconds", "ms", "msec", "msecs", "millis":
		return "millisecond"
	case "microsecond", "microseconds", "us", "usec", "usecs", "micros":
		return "microsecond"
	}
	return ""
}

// isoYearOf is the ISO-8601 year of a day number.
func isoYearOf(days int64) int64 {
	y, _ := isoWeek(days)
	return y
}

// diffTimestamps is date_diff(field, a, b) over timestamps (microseconds).
func diffTimestamps(field string, a, b int64) (int64, error) {
	part := diffPart(field)
	switch part {
	case "microsecond":
		return b - a, nil
	case "millisecond":
		return b/1000 - a/1000, nil
	case "second":
		return b/plan.MicrosPerSecond - a/plan.MicrosPerSecond, nil
	case "minute":
		return b/plan.MicrosPerSecond/60 - a/plan.MicrosPerSecond/60, nil
	case "hour":
		return b/plan.MicrosPerSecond/3600 - a/plan.MicrosPerSecond/3600, nil
	case "":
		return 0, fmt.Errorf("unknown date part %q", field)
	}
	return diffDates(part, floorDivI(a, usPerDay), floorDivI(b, usPerDay))
}

// diffDates is date_diff(part, a, b) over day numbers, part canonical.
func diffDates(part string, a, b int64) (int64, error) {
	y1, m1, _ := civilFromDays(a)
	y2, m2, _ := civilFromDays(b)
	switch part {
	case "year":
		return y2 - y1, nil
	case "isoyear":
		return isoYearOf(b) - isoYearOf(a), nil
	case "quarter":
		return (y2*12+int64(m2)-1)/3 - (y1*12+int64(m1)-1)/3, nil
	case "month":
		return (y2*12 + int64(m2)) - (y1*12 + int64(m1)), nil
	case "week":
		return (b - a) / 7, nil
	case "day":
		return b - a, nil
	case "decade":
		return y2/10 - y1/10, nil
	case "century":
		return y2/100 - y1/100, nil
	case "millennium":
		return y2/1000 - y1/1000, nil
	}
	return diffTimestamps(part, a*usPerDay, b*usPerDay)
}

// subTimestamps is date_sub(field, a, b) over timestamps (microseconds).
func subTimestamps(field string, a, b int64) (int64, error) {
	part := diffPart(field)
	var per int64
	switch part {
	case "year", "isoyear":
		return monthsBetween(a, b) / 12, nil
	case "quarter":
		return monthsBetween(a, b) / 3, nil
	case "month":
		return monthsBetween(a, b), nil
	case "decade":
		return monthsBetween(a, b) / 120, nil
	case "century":
		return monthsBetween(a, b) / 1200, nil
	case "millennium":
		return monthsBetween(a, b) / 12000, nil
	case "week":
		per = 7 * usPerDay
	case "day":
		per = usPerDay
	case "hour":
		per = 3600 * plan.MicrosPerSecond
	case "minute":
		per = 60 * plan.MicrosPerSecond
	case "second":
		per = plan.MicrosPerSecond
	case "millisecond":
		per = 1000
	case "microsecond":
		per = 1
	default:
		return 0, fmt.Errorf("unknown date part %q", field)
	}
	d := b - a
	if a < 0 && b > 0 && d < 0 || a > 0 && b < 0 && d > 0 {
		return 0, fmt.Errorf("%w: date_sub(%s) out of range", ErrIntegerOverflow, field)
	}
	return d / per, nil
}

// monthsBetween is the number of complete months from a to b
// (microseconds), negative when b is before a: the age in months, where
// b on the last day of its month completes the month of a start on a
// later day of the month (or on that day at a later time).
func monthsBetween(a, b int64) int64 {
	if a > b {
		return -monthsBetween(b, a)
	}
	ad := floorDivI(a, usPerDay)
	at := a - ad*usPerDay
	bd := floorDivI(b, usPerDay)
	bt := b - bd*usPerDay
	y1, m1, d1 := civilFromDays(ad)
	y2, m2, d2 := civilFromDays(bd)
	if last := daysInMonth(y2, m2); d2 == last && (d1 > last || d1 == last && at < bt) {
		d1 = last
	}
	months := (y2-y1)*12 + int64(m2) - int64(m1)
	if d2 < d1 || d2 == d1 && bt < at {
		months--
	}
	return months
}
