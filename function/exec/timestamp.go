package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Timestamps are int64 microseconds since 1970-01-01 00:00:00 (arrow
// Timestamp(us), no zone); they share the int64 layout, so hashing,
// sorting, grouping, joins, take and min/max need no code of their own.
// This file holds what differs: casts, interval arithmetic and the
// field kernels.

const usPerDay = plan.MicrosPerDay

// floorDivI is a / b rounded towards negative infinity (b > 0).
func floorDivI(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// appendTimestamp renders us as DuckDB prints a timestamp.
func appendTimestamp(dst []byte, us int64) []byte {
	return append(dst, plan.FormatTimestamp(us)...)
}

// castTimestamp converts to or from a timestamp.
func castTimestamp(mem memory.Allocator, a arrow.Array, from, to plan.DataType) (arrow.Array, error) {
	n := a.Len()
	at := to.Arrow()
	vb, voff := validityOf(a)
	valid := func() *memory.Buffer { return copyValidity(mem, a) }
	if to.ID == plan.Timestamp {
		buf, out := newFixed[int64](mem, n)
		switch from.ID {
		case plan.Date:
			for i, d := range values[int32](a) {
				out[i] = int64(d) * usPerDay
			}
		case plan.String:
			offs, data := strOffsets(a)
			for i := 0; i < n; i++ {
				if !isValid(vb, voff, i) {
					continue
				}
				s := data[offs[i]:offs[i+1]]
				v, err := plan.ParseTimestamp(string(s))
				if err != nil {
					buf.Release()
					return nil, fmt.Errorf("cannot cast string %q to timestamp", s)
				}
				out[i] = v
			}
		default:
			buf.Release()
			return nil, fmt.Errorf("unsupported cast from %s to %s", from, to)
		}
		return makeArray(at, n, valid(), buf), nil
	}
	x := values[int64](a)
	switch to.ID {
	case plan.Date:
		buf, out := newFixed[int32](mem, n)
		for i, v := range x {
			d := floorDivI(v, usPerDay)
			if d < math.MinInt32 || d > math.MaxInt32 {
				d = 0
			}
			out[i] = int32(d)
		}
		return makeArray(at, n, valid(), buf), nil
	case plan.String:
		sb := newStrBuilder(mem, n, n*19)
		var tmp [40]byte
		for i, v := range x {
			if !isValid(vb, voff, i) {
				sb.appendEmpty()
				continue
			}
			sb.append(appendTimestamp(tmp[:0], v))
		}
		return sb.finish(valid())
	}
	return nil, fmt.Errorf("unsupported cast from %s to %s", from, to)
}

// AddInterval adds an interval to a timestamp (microseconds) the way
// DuckDB does: months first (the day clamped to the month's end), then
// days, then microseconds.
func AddInterval(us int64, months, days int32, micros int64) int64 {
	return addInterval(us, months, days, micros)
}

func addInterval(us int64, months, days int32, micros int64) int64 {
	if months != 0 {
		day := floorDivI(us, usPerDay)
		tod := us - day*usPerDay
		y, m, d := civilFromDays(day)
		total := y*12 + int64(m-1) + int64(months)
		ny, nm := floorDivI(total, 12), int(total-floorDivI(total, 12)*12)+1
		if last := daysInMonth(ny, nm); d > last {
			d = last
		}
		us = daysFromCivil(ny, nm, d)*usPerDay + tod
	}
	return us + int64(days)*usPerDay + micros
}

// timestampArith computes timestamp|date ± interval (the interval a
// literal) as a timestamp. The planner types every such expression.
func (ev *evaluator) timestampArith(op plan.Op, a, b vec, rt plan.DataType) (arrow.Array, error) {
	if op == plan.OpAdd && a.t.ID == plan.Interval {
		a, b = b, a
	}
	if b.t.ID != plan.Interval || !b.scalar() || (op != plan.OpAdd && op != plan.OpSub) || a.scalar() {
		return nil, fmt.Errorf("unsupported timestamp arithmetic %s %s %s", a.t, op, b.t)
	}
	iv := b.lit
	months, days, micros := iv.Months, iv.Days, iv.I
	if op == plan.OpSub {
		months, days, micros = -months, -days, -micros
	}
	n := ev.n
	buf, out := newFixed[int64](ev.mem, n)
	switch a.t.ID {
	case plan.Timestamp:
		for i, v := range values[int64](a.arr) {
			out[i] = addInterval(v, months, days, micros)
		}
	case plan.Date:
		for i, v := range values[int32](a.arr) {
			out[i] = addInterval(int64(v)*usPerDay, months, days, micros)
		}
	default:
		buf.Release()
		return nil, fmt.Errorf("unsupported timestamp arithmetic %s %s %s", a.t, op, b.t)
	}
	res := makeArray(plan.ArrowTimestamp, n, copyValidity(ev.mem, a.arr), buf)
	if rt.ID == plan.Date {
		defer res.Release()
		return castTimestamp(ev.mem, res, plan.TimestampType, plan.DateType)
	}
	return res, nil
}

// timestampField returns one field of timestamp us (year ... microsecond,
// plus the date fields dow, doy, quarter, epoch), ok false for an unknown
// field name.
func timestampField(field string, us int64) (int64, bool) {
	day := floorDivI(us, usPerDay)
	tod := us - day*usPerDay
	switch field {
	case "hour":
		return tod / (3600 * plan.MicrosPerSecond), true
	case "minute":
		return tod / (60 * plan.MicrosPerSecond) % 60, true
	case "second":
		return tod / plan.MicrosPerSecond % 60, true
	case "millisecond":
		return tod / 1000 % 60000, true
	case "microsecond":
		return tod % (60 * plan.MicrosPerSecond), true
	case "epoch":
		return floorDivI(us, plan.MicrosPerSecond), true
	}
	y, m, d := civilFromDays(day)
	switch field {
	case "year":
		return y, true
	case "month":
		return int64(m), true
	case "day":
		return int64(d), true
	case "quarter":
		return int64((m-1)/3 + 1), true
	case "dow":
		return (day%7 + 11) % 7, true // 1970-01-01 was a Thursday (4)
	case "doy":
		return day - daysFromCivil(y, 1, 1) + 1, true
	}
	return 0, false
}

// extractTimestamp computes EXTRACT(field FROM ts) as int64.
func (ev *evaluator) extractTimestamp(field string, a arrow.Array) (arrow.Array, error) {
	x := values[int64](a)
	buf, out := newFixed[int64](ev.mem, len(x))
	for i, v := range x {
		r, ok := timestampField(field, v)
		if !ok {
			buf.Release()
			return nil, fmt.Errorf("unsupported timestamp field %q", field)
		}
		out[i] = r
	}
	return makeArray(arrow.PrimitiveTypes.Int64, len(x), copyValidity(ev.mem, a), buf), nil
}

// truncTimestamp computes date_trunc(field, ts) as a timestamp.
func truncTimestamp(field string, us int64) (int64, bool) {
	day := floorDivI(us, usPerDay)
	tod := us - day*usPerDay
	switch field {
	case "microsecond", "microseconds":
		return us, true
	case "millisecond", "milliseconds":
		return floorDivI(us, 1000) * 1000, true
	case "second", "seconds":
		return floorDivI(us, plan.MicrosPerSecond) * plan.MicrosPerSecond, true
	case "minute", "minutes":
		return day*usPerDay + tod/(60*plan.MicrosPerSecond)*(60*plan.MicrosPerSecond), true
	case "hour", "hours":
		return day*usPerDay + tod/(3600*plan.MicrosPerSecond)*(3600*plan.MicrosPerSecond), true
	case "day", "days":
		return day * usPerDay, true
	}
	y, m, _ := civilFromDays(day)
	switch field {
	case "week", "weeks": // ISO weeks start on Monday
		dow := (day%7 + 10) % 7 // Monday = 0
		return (day - dow) * usPerDay, true
	case "month", "months":
		return daysFromCivil(y, m, 1) * usPerDay, true
	case "quarter", "quarters":
		return daysFromCivil(y, (m-1)/3*3+1, 1) * usPerDay, true
	case "year", "years":
		return daysFromCivil(y, 1, 1) * usPerDay, true
	case "decade", "decades":
		return daysFromCivil(floorDivI(y, 10)*10, 1, 1) * usPerDay, true
	case "century", "centuries":
		return daysFromCivil(floorDivI(y-1, 100)*100+1, 1, 1) * usPerDay, true
	}
	return 0, false
}

// TruncTimestamps applies date_trunc(field, ·) to a timestamp array; the
// function library registers it for timestamp arguments.
func TruncTimestamps(mem memory.Allocator, field string, a arrow.Array) (arrow.Array, error) {
	x := values[int64](a)
	buf, out := newFixed[int64](mem, len(x))
	for i, v := range x {
		r, ok := truncTimestamp(field, v)
		if !ok {
			buf.Release()
			return nil, fmt.Errorf("unsupported date_trunc field %q", field)
		}
		out[i] = r
	}
	return makeArray(plan.ArrowTimestamp, len(x), copyValidity(mem, a), buf), nil
}

// timestampToMicros converts a timestamp array of any unit and zone to the
// engine's Timestamp(us) without a zone. A zoned (UTC-adjusted) value keeps
// its UTC wall clock. Nanoseconds are truncated towards the earlier
// microsecond, as DuckDB reads timestamp[ns] into TIMESTAMP.
func timestampToMicros(mem memory.Allocator, a arrow.Array, tt *arrow.TimestampType) (arrow.Array, error) {
	if tt.Unit == arrow.Microsecond && tt.TimeZone == "" {
		a.Retain()
		return a, nil
	}
	x := values[int64](a)
	n := len(x)
	vb, voff := validityOf(a)
	buf, out := newFixed[int64](mem, n)
	for i, v := range x {
		switch tt.Unit {
		case arrow.Second:
			r := v * plan.MicrosPerSecond
			if v != 0 && r/plan.MicrosPerSecond != v && isValid(vb, voff, i) {
				buf.Release()
				return nil, fmt.Errorf("%w: timestamp %d s out of range", ErrIntegerOverflow, v)
			}
			out[i] = r
		case arrow.Millisecond:
			r := v * 1000
			if v != 0 && r/1000 != v && isValid(vb, voff, i) {
				buf.Release()
				return nil, fmt.Errorf("%w: timestamp %d ms out of range", ErrIntegerOverflow, v)
			}
			out[i] = r
		case arrow.Microsecond:
			out[i] = v
		case arrow.Nanosecond:
			out[i] = floorDivI(v, 1000)
		}
	}
	return makeArray(plan.ArrowTimestamp, n, copyValidity(mem, a), buf), nil
}

// dateOfTimestampText parses a timestamp's text and returns its day.
func dateOfTimestampText(b []byte) (int32, bool) {
	us, err := plan.ParseTimestamp(string(b))
	if err != nil {
		return 0, false
	}
	d := floorDivI(us, usPerDay)
	if d < math.MinInt32 || d > math.MaxInt32 {
		return 0, false
	}
	return int32(d), true
}
