package exec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// DateParts are the fields date_part/EXTRACT and date_diff accept on a date.
var dateParts = map[string]bool{
	"year": true, "month": true, "day": true, "quarter": true, "week": true, "weekofyear": true,
	"dow": true, "dayofweek": true, "isodow": true, "doy": true, "dayofyear": true, "isoyear": true,
	"yearweek": true, "decade": true, "century": true, "millennium": true, "epoch": true,
	"hour": true, "minute": true, "second": true, "millisecond": true, "microsecond": true,
	"era": true, "julian": true,
}

// IsDatePart reports whether field (lower case) is a date_part field.
func IsDatePart(field string) bool { return dateParts[field] }

// isoWeek returns the ISO 8601 year and week of a day number.
func isoWeek(days int64) (int64, int64) {
	// ISO weekday: Monday 1 .. Sunday 7. 1970-01-01 was a Thursday.
	wd := isoDow(days)
	thursday := days - wd + 4 // the Thursday of this week decides the year
	y, _, _ := civilFromDays(thursday)
	jan1 := daysFromCivil(y, 1, 1)
	return y, (thursday-jan1)/7 + 1
}

func isoDow(days int64) int64 { return ((days+3)%7+7)%7 + 1 }

func dayOfYear(days int64) int64 {
	y, _, _ := civilFromDays(days)
	return days - daysFromCivil(y, 1, 1) + 1
}

// datePart computes one field of a date.
func datePart(field string, days int64) (int64, error) {
	y, m, d := civilFromDays(days)
	switch field {
	case "year":
		return y, nil
	case "month":
		return int64(m), nil
	case "day":
		return int64(d), nil
	case "quarter":
		return int64((m-1)/3 + 1), nil
	case "week", "weekofyear":
		_, w := isoWeek(days)
		return w, nil
	case "isoyear":
		iy, _ := isoWeek(days)
		return iy, nil
	case "yearweek":
		iy, w := isoWeek(days)
		return iy*100 + w, nil
	case "dow", "dayofweek":
		return isoDow(days) % 7, nil
	case "isodow":
		return isoDow(days), nil
	case "doy", "dayofyear":
		return dayOfYear(days), nil
	case "decade":
		return floorDiv(y, 10), nil
	case "century":
		if y > 0 {
			return (y-1)/100 + 1, nil
		}
		return -((-y)/100 + 1), nil
	case "millennium":
		if y > 0 {
			return (y-1)/1000 + 1, nil
		}
		return -((-y)/1000 + 1), nil
	case "era":
		if y > 0 {
			return 1, nil
		}
		return 0, nil
	case "julian":
		return days + 2440588, nil
	case "epoch":
		return days * 86400, nil
	case "hour", "minute", "second", "millisecond", "microsecond":
		return 0, nil
	}
	return 0, fmt.Errorf("unknown date part %q", field)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// dateTrunc truncates a day number to the start of its field.
func dateTrunc(field string, days int64) (int64, error) {
	y, m, _ := civilFromDays(days)
	switch field {
	case "millennium":
		return daysFromCivil(floorDiv(y, 1000)*1000, 1, 1), nil
	case "century":
		return daysFromCivil(floorDiv(y, 100)*100, 1, 1), nil
	case "decade":
		return daysFromCivil(floorDiv(y, 10)*10, 1, 1), nil
	case "year", "isoyear":
		if field == "isoyear" {
			iy, _ := isoWeek(days)
			jan4 := daysFromCivil(iy, 1, 4)
			return jan4 - isoDow(jan4) + 1, nil
		}
		return daysFromCivil(y, 1, 1), nil
	case "quarter":
		return daysFromCivil(y, (m-1)/3*3+1, 1), nil
	case "month":
		return daysFromCivil(y, m, 1), nil
	case "week", "weekofyear", "yearweek":
		return days - isoDow(days) + 1, nil
	case "day", "dayofmonth", "doy", "dow", "isodow", "hour", "minute", "second", "millisecond", "microsecond":
		return days, nil
	}
	return 0, fmt.Errorf("unknown date part %q", field)
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// strftime formats a date with DuckDB's (C strftime) format specifiers.
func strftime(days int64, format string) (string, error) {
	return strftimeAt(days, 0, format)
}

// strftimeTimestamp formats a timestamp (microseconds since the epoch).
func strftimeTimestamp(us int64, format string) (string, error) {
	days := floorDivI(us, usPerDay)
	return strftimeAt(days, us-days*usPerDay, format)
}

// strftimeAt formats the instant tod microseconds into day days.
func strftimeAt(days, tod int64, format string) (string, error) {
	y, m, d := civilFromDays(days)
	hour, minute, sec, micro := tod/3_600_000_000, tod/60_000_000%60, tod/1_000_000%60, tod%1_000_000
	dow := isoDow(days) % 7
	var b strings.Builder
	pad := func(v int64, w int) {
		s := strconv.FormatInt(v, 10)
		for len(s) < w {
			s = "0" + s
		}
		b.WriteString(s)
	}
	for k := 0; k < len(format); k++ {
		ch := format[k]
		if ch != '%' || k+1 == len(format) {
			b.WriteByte(ch)
			continue
		}
		k++
		spec := format[k]
		noPad := false
		if spec == '-' && k+1 < len(format) {
			noPad = true
			k++
			spec = format[k]
		}
		w := 2
		if noPad {
			w = 1
		}
		switch spec {
		case 'Y':
			pad(y, 4)
		case 'y':
			pad(((y%100)+100)%100, w)
		case 'm':
			pad(int64(m), w)
		case 'd':
			pad(int64(d), w)
		case 'e':
			s := strconv.Itoa(d)
			if len(s) < 2 {
				s = " " + s
			}
			b.WriteString(s)
		case 'B':
			b.WriteString(monthNames[m-1])
		case 'b', 'h':
			b.WriteString(monthNames[m-1][:3])
		case 'A':
			b.WriteString(dayNames[dow])
		case 'a':
			b.WriteString(dayNames[dow][:3])
		case 'w':
			pad(dow, 1)
		case 'u':
			pad(isoDow(days), 1)
		case 'j':
			if noPad {
				pad(dayOfYear(days), 1)
			} else {
				pad(dayOfYear(days), 3)
			}
		case 'V':
			_, wk := isoWeek(days)
			pad(wk, w)
		case 'G':
			iy, _ := isoWeek(days)
			pad(iy, 4)
		case 'H':
			pad(hour, w)
		case 'I':
			h12 := hour % 12
			if h12 == 0 {
				h12 = 12
			}
			pad(h12, w)
		case 'M':
			pad(minute, w)
		case 'S':
			pad(sec, w)
		case 'p':
			if hour < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'f':
			pad(micro, 6)
		case 'g':
			pad(micro/1000, 3)
		case 'T':
			pad(hour, 2)
			b.WriteByte(':')
			pad(minute, 2)
			b.WriteByte(':')
			pad(sec, 2)
		case 'F':
			b.WriteString(string(appendDate(nil, int32(days))))
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("unsupported format specifier %%%c", spec)
		}
	}
	return b.String(), nil
}

// fieldKernel applies f(field, day) with a constant or per-row field name.
func fieldKernel(f func(field string, c *Call, i int, o *out) error) Kernel {
	return func(c *Call) (arrow.Array, error) {
		return eachRow(c, func(i int, o *out) error {
			return f(strings.ToLower(c.Args[0].Str(i)), c, i, o)
		})
	}
}

func dateFunctions() []*ScalarFunction {
	date, i64, str := plan.DateType, plan.Int64Type, plan.StringType
	return []*ScalarFunction{
		{Name: "date_part", Aliases: []string{"datepart"}, Doc: "a field of a date: year, quarter, month, week, day, dow, isodow, doy, isoyear, yearweek, decade, century, millennium, epoch, era, julian, hour...microsecond (0 on a date)",
			Signatures: []Signature{sig(i64, tS, tD)},
			Kernel: fieldKernel(func(field string, c *Call, i int, o *out) error {
				v, err := datePart(field, c.Args[1].Int(i))
				if err != nil {
					return err
				}
				o.i64(v)
				return nil
			})},
		{Name: "date_trunc", Aliases: []string{"datetrunc"}, Doc: "the date (a date) or timestamp (a timestamp) truncated to the start of the field (year, quarter, month, week, day, hour, minute, second, ...)",
			Signatures: []Signature{sig(date, tS, tD), sig(plan.TimestampType, tS, plan.Timestamp)},
			Kernel: fieldKernel(func(field string, c *Call, i int, o *out) error {
				if c.Args[1].Type().ID == plan.Timestamp {
					v, ok := truncTimestamp(field, c.Args[1].Int(i))
					if !ok {
						return fmt.Errorf("unsupported date_trunc field %q", field)
					}
					o.i64(v)
					return nil
				}
				v, err := dateTrunc(field, c.Args[1].Int(i))
				if err != nil {
					return err
				}
				o.i64(v)
				return nil
			})},
		{Name: "date_diff", Aliases: []string{"datediff"}, Doc: "the number of part boundaries crossed from the first date or timestamp to the second (weeks: whole 7-day spans)",
			Signatures: []Signature{sig(i64, tS, tD, tD), sig(i64, tS, plan.Timestamp, plan.Timestamp)},
			Kernel: fieldKernel(func(field string, c *Call, i int, o *out) error {
				var v int64
				var err error
				if c.Args[1].Type().ID == plan.Timestamp {
					v, err = diffTimestamps(field, c.Args[1].Int(i), c.Args[2].Int(i))
				} else if part := diffPart(field); part == "" {
					err = fmt.Errorf("unknown date part %q", field)
				} else {
					v, err = diffDates(part, c.Args[1].Int(i), c.Args[2].Int(i))
				}
				if err != nil {
					return err
				}
				o.i64(v)
				return nil
			})},
		{Name: "date_sub", Aliases: []string{"datesub"}, Doc: "the number of complete parts from the first date or timestamp to the second (months as an age: 2024-01-31 to 2024-02-29 is one month)",
			Signatures: []Signature{sig(i64, tS, tD, tD), sig(i64, tS, plan.Timestamp, plan.Timestamp)},
			Kernel: fieldKernel(func(field string, c *Call, i int, o *out) error {
				a, b := c.Args[1].Int(i), c.Args[2].Int(i)
				if c.Args[1].Type().ID != plan.Timestamp {
					a, b = a*usPerDay, b*usPerDay
				}
				v, err := subTimestamps(field, a, b)
				if err != nil {
					return err
				}
				o.i64(v)
				return nil
			})},
		{Name: "make_date", Doc: "the date of a year, month and day",
			Signatures: []Signature{sig(date, tI, tI, tI)},
			Kernel: func(c *Call) (arrow.Array, error) {
				return eachRow(c, func(i int, o *out) error {
					y, m, d := c.Args[0].Int(i), c.Args[1].Int(i), c.Args[2].Int(i)
					if m < 1 || m > 12 || d < 1 || d > int64(daysInMonth(y, int(m))) || y < -290000 || y > 294000 {
						return fmt.Errorf("date out of range: %d-%d-%d", y, m, d)
					}
					o.i64(daysFromCivil(y, int(m), int(d)))
					return nil
				})
			}},
		{Name: "dayname", Doc: "the English name of the day of the week (Sunday...Saturday)",
			Signatures: []Signature{sig(str, tD), sig(str, plan.Timestamp)},
			Kernel:     dayKernel(func(days int64, o *out) { o.str(dayNames[isoDow(days)%7]) })},
		{Name: "monthname", Doc: "the English name of the month (January...December)",
			Signatures: []Signature{sig(str, tD), sig(str, plan.Timestamp)},
			Kernel: dayKernel(func(days int64, o *out) {
				_, m, _ := civilFromDays(days)
				o.str(monthNames[m-1])
			})},
		{Name: "last_day", Doc: "the last day of the month of the date",
			Signatures: []Signature{sig(date, tD), sig(date, plan.Timestamp)},
			Kernel: dayKernel(func(days int64, o *out) {
				y, m, _ := civilFromDays(days)
				o.i64(daysFromCivil(y, m, daysInMonth(y, m)))
			})},
		{Name: "strftime", Doc: "the date or timestamp formatted with strftime specifiers (%Y-%m-%d, %H:%M:%S, %f, %B, %a, %j, ...)",
			Signatures: []Signature{sig(str, tD, tS), sig(str, plan.Timestamp, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				format := strftime
				if c.Args[0].Type().ID == plan.Timestamp {
					format = strftimeTimestamp
				}
				return eachRow(c, func(i int, o *out) error {
					s, err := format(c.Args[0].Int(i), c.Args[1].Str(i))
					if err != nil {
						return err
					}
					o.str(s)
					return nil
				})
			}},
	}
}

// dayKernel applies f to the day number of a date, or of a timestamp's
// date.
func dayKernel(f func(days int64, o *out)) Kernel {
	return func(c *Call) (arrow.Array, error) {
		ts := c.Args[0].Type().ID == plan.Timestamp
		return eachRow(c, func(i int, o *out) error {
			v := c.Args[0].Int(i)
			if ts {
				v = floorDivI(v, 86_400_000_000)
			}
			f(v, o)
			return nil
		})
	}
}
