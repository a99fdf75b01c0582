package plan

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Dec128 returns the 128-bit decimal value of v (I + H*2^64).
func (v Value) Dec128() decimal128.Num {
	return decimal128.FromI64(v.I).Add(decimal128.New(v.H, 0))
}

// Dec128Value encodes a 128-bit unscaled decimal as a Value: H is 0 when n
// fits an int64, so narrow and wide literals of one value are equal.
func Dec128Value(n decimal128.Num) Value {
	lo := int64(n.LowBits())
	return Value{I: lo, H: n.HighBits() - lo>>63}
}

// MaxDecimal128 is the largest unscaled value of a 38-digit decimal.
var MaxDecimal128 = decimal128.GetMaxValue(MaxDecimalPrecision)

// Microseconds per unit.
const (
	MicrosPerSecond = int64(1_000_000)
	MicrosPerDay    = 86_400 * MicrosPerSecond
)

// FormatTimestamp renders microseconds since the epoch as DuckDB prints a
// timestamp: YYYY-MM-DD HH:MM:SS with a fraction only when not zero.
func FormatTimestamp(us int64) string {
	days := floorDiv(us, MicrosPerDay)
	rem := us - days*MicrosPerDay
	date := epoch.AddDate(0, 0, int(days)).Format("2006-01-02")
	secs := rem / MicrosPerSecond
	frac := rem % MicrosPerSecond
	s := fmt.Sprintf("%s %02d:%02d:%02d", date, secs/3600, secs/60%60, secs%60)
	if frac != 0 {
		f := strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
		s += "." + f
	}
	return s
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// ParseTimestamp parses YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]] (a bare date
// is midnight) into microseconds since the epoch. A trailing "Z" or
// "+00"-style offset is applied, as DuckDB does when casting to TIMESTAMP.
func ParseTimestamp(s string) (int64, error) {
	in := strings.TrimSpace(s)
	bad := func() (int64, error) { return 0, fmt.Errorf("invalid timestamp %q", s) }
	if len(in) < 10 {
		return bad()
	}
	d, err := time.Parse("2006-01-02", in[:10])
	if err != nil {
		return bad()
	}
	days := floorDiv(d.Unix(), 86400)
	rest := in[10:]
	var micros int64
	if rest != "" {
		if rest[0] != ' ' && rest[0] != 'T' {
			return bad()
		}
		rest = strings.TrimSpace(rest[1:])
		var offset int64
		if i := strings.IndexAny(rest, "Z+-"); i >= 0 {
			off := rest[i:]
			rest = rest[:i]
			if off != "Z" {
				sign := int64(1)
				if off[0] == '-' {
					sign = -1
				}
				var hh, mm int64
				body := strings.ReplaceAll(off[1:], ":", "")
				switch len(body) {
				case 2:
					_, err = fmt.Sscanf(body, "%2d", &hh)
				case 4:
					_, err = fmt.Sscanf(body, "%2d%2d", &hh, &mm)
				default:
					err = fmt.Errorf("bad offset")
				}
				if err != nil {
					return bad()
				}
				offset = sign * (hh*3600 + mm*60) * MicrosPerSecond
			}
		}
		parts := strings.Split(rest, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return bad()
		}
		var h, m int64
		if !digitsOnly(parts[0], 1, 2) || !digitsOnly(parts[1], 2, 2) {
			return bad()
		}
		// Decimal digits only (fmt.Sscan would read "09" as bad octal).
		h, m = decimalDigits(parts[0]), decimalDigits(parts[1])
		var sec, frac int64
		if len(parts) == 3 {
			whole, f, hasFrac := strings.Cut(parts[2], ".")
			if !digitsOnly(whole, 2, 2) || (hasFrac && !digitsOnly(f, 1, 9)) {
				return bad()
			}
			sec = decimalDigits(whole)
			if hasFrac {
				if len(f) > 6 {
					f = f[:6]
				}
				f += strings.Repeat("0", 6-len(f))
				frac = decimalDigits(f)
			}
		}
		if h > 24 || m > 59 || sec > 60 || (h == 24 && (m != 0 || sec != 0 || frac != 0)) {
			return bad()
		}
		micros = (h*3600+m*60+sec)*MicrosPerSecond + frac - offset
	}
	if days > math.MaxInt64/MicrosPerDay-1 || days < math.MinInt64/MicrosPerDay+1 {
		return bad()
	}
	return days*MicrosPerDay + micros, nil
}

// decimalDigits is the value of a string of decimal digits (checked by
// digitsOnly before).
func decimalDigits(s string) int64 {
	var v int64
	for _, c := range s {
		v = v*10 + int64(c-'0')
	}
	return v
}

func digitsOnly(s string, minLen, maxLen int) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
