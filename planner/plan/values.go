package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrDecimalOverflow is returned when a decimal result does not fit in the
// engine's 18-digit representation.
var ErrDecimalOverflow = errors.New("decimal overflow")

// Pow10 holds 10^i for i in [0, 18].
var Pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// FormatDecimal renders an unscaled decimal value with the given scale.
func FormatDecimal(v int64, scale int) string {
	return string(AppendDecimal(nil, v, scale))
}

var epoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// FormatDate renders days since the epoch as YYYY-MM-DD.
func FormatDate(days int32) string {
	return string(AppendDate(nil, days))
}

// formatDateSlow is FormatDate through the time package, for the years
// AppendDate does not print itself.
func formatDateSlow(days int32) string {
	return epoch.AddDate(0, 0, int(days)).Format("2006-01-02")
}

// ParseDate parses YYYY-MM-DD into days since the epoch.
func ParseDate(s string) (int32, error) {
	t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid date %q: %w", s, err)
	}
	return DaysOf(t), nil
}

// DaysOf returns the days since the epoch of t's date.
func DaysOf(t time.Time) int32 {
	y, m, d := t.Date()
	u := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()
	days := u / 86400
	if u%86400 != 0 && u < 0 {
		days--
	}
	return int32(days)
}

// DateOf returns the time at midnight UTC of a day number.
func DateOf(days int32) time.Time { return epoch.AddDate(0, 0, int(days)) }
