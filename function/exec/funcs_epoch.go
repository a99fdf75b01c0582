package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// DuckDB's epoch helpers and timestamp constructors: the conversions
// between timestamps and counts since 1970-01-01 00:00:00 that event
// tables keep (milliseconds in logs, microseconds in Parquet, seconds in
// Unix tools). Timestamps are UTC microseconds (timestamp.go); to_timestamp
// gives a TIMESTAMP, where DuckDB gives a TIMESTAMP WITH TIME ZONE of the
// same instant (sluice has no time zone type).

// epochUnit is one epoch function: its name, how many of its units a
// second has, and whether it answers a DOUBLE (epoch: seconds with the
// fraction).
type epochUnit struct {
	name  string
	doc   string
	per   int64 // units per second
	float bool
}

func epochFunctions() []*ScalarFunction {
	ts, i64 := plan.TimestampType, plan.Int64Type
	var fs []*ScalarFunction
	for _, u := range []epochUnit{
		{"epoch", "seconds since 1970-01-01 00:00:00 (a DOUBLE with the fraction)", 1, true},
		{"epoch_ms", "milliseconds since 1970-01-01 00:00:00; of a BIGINT, the timestamp that many milliseconds after it", 1000, false},
		{"epoch_us", "microseconds since 1970-01-01 00:00:00 (make_timestamp(BIGINT) is the inverse)", 1_000_000, false},
		{"epoch_ns", "nanoseconds since 1970-01-01 00:00:00 (of a microsecond timestamp)", 1_000_000_000, false},
	} {
		u := u
		ret := i64
		if u.float {
			ret = plan.Float64Type
		}
		sigs := []Signature{sig(ret, plan.Timestamp), sig(ret, tD)}
		if u.name == "epoch_ms" { // DuckDB's one inverse: epoch_ms(BIGINT) is a timestamp
			sigs = append(sigs, sig(ts, tI))
		}
		fs = append(fs, &ScalarFunction{Name: u.name, Doc: u.doc, Signatures: sigs,
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				switch a.Type().ID {
				case plan.Int64: // a count of units: the timestamp
					return eachRow(c, func(i int, o *out) error {
						us, ok := unitsToMicros(a.Int(i), u.per)
						if !ok {
							return fmt.Errorf("%s(%d): timestamp out of range", u.name, a.Int(i))
						}
						o.i64(us)
						return nil
					})
				default:
					date := a.Type().ID == plan.Date
					return eachRow(c, func(i int, o *out) error {
						us := a.Int(i)
						if date {
							us *= usPerDay
						}
						if u.float {
							o.f64(float64(us) / 1e6)
							return nil
						}
						o.i64(microsToUnits(us, u.per))
						return nil
					})
				}
			}})
	}
	fs = append(fs,
		&ScalarFunction{Name: "make_timestamp", Doc: "the timestamp of a year, month, day, hour, minute and (fractional) second; of one BIGINT, the timestamp that many microseconds after 1970-01-01",
			Signatures: []Signature{sig(ts, tI, tI, tI, tI, tI, tF), sig(ts, tI)},
			Kernel: func(c *Call) (arrow.Array, error) {
				if len(c.Args) == 1 {
					return eachRow(c, func(i int, o *out) error { o.i64(c.Args[0].Int(i)); return nil })
				}
				return eachRow(c, func(i int, o *out) error {
					y, m, d := c.Args[0].Int(i), c.Args[1].Int(i), c.Args[2].Int(i)
					h, mi, s := c.Args[3].Int(i), c.Args[4].Int(i), c.Args[5].Float(i)
					if m < 1 || m > 12 || d < 1 || d > int64(daysInMonth(y, int(m))) || y < -290000 || y > 294000 {
						return fmt.Errorf("make_timestamp: date out of range: %d-%d-%d", y, m, d)
					}
					if h < 0 || h > 24 || mi < 0 || mi > 59 || !(s >= 0 && s < 61) {
						return fmt.Errorf("make_timestamp: time out of range: %d:%d:%g", h, mi, s)
					}
					o.i64(daysFromCivil(y, int(m), int(d))*usPerDay + (h*3600+mi*60)*1_000_000 + int64(math.Round(s*1e6)))
					return nil
				})
			}},
		&ScalarFunction{Name: "to_timestamp", Doc: "the timestamp (UTC) that many seconds, with a fraction, after 1970-01-01 00:00:00 (DuckDB answers a TIMESTAMP WITH TIME ZONE of the same instant)",
			Signatures: []Signature{sig(ts, tF)},
			Kernel: func(c *Call) (arrow.Array, error) {
				return eachRow(c, func(i int, o *out) error {
					s := c.Args[0].Float(i)
					us := math.Round(s * 1e6)
					if math.IsNaN(us) || us > math.MaxInt64/2 || us < math.MinInt64/2 {
						return fmt.Errorf("to_timestamp(%g): timestamp out of range", s)
					}
					o.i64(int64(us))
					return nil
				})
			}},
	)
	return fs
}

// microsToUnits converts microseconds to units of which a second has per,
// truncating toward zero as DuckDB's epoch_ms does.
func microsToUnits(us, per int64) int64 {
	switch {
	case per == 1_000_000:
		return us
	case per > 1_000_000:
		return us * (per / 1_000_000)
	}
	return us / (1_000_000 / per)
}

// unitsToMicros converts a count of units (per a second) to microseconds;
// false when it does not fit.
func unitsToMicros(v, per int64) (int64, bool) {
	switch {
	case per == 1_000_000:
		return v, true
	case per > 1_000_000:
		d := per / 1_000_000
		q := v / d
		if v%d != 0 && v < 0 {
			q--
		}
		return q, true
	}
	m := 1_000_000 / per
	if v > math.MaxInt64/m || v < math.MinInt64/m {
		return 0, false
	}
	return v * m, true
}
