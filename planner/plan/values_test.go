package plan

import (
	"testing"
	"time"
)

func TestDates(t *testing.T) {
	cases := []struct {
		s    string
		days int32
	}{
		{"1970-01-01", 0}, {"1970-01-02", 1}, {"1969-12-31", -1},
		{"1998-12-01", 10561}, {"1600-03-01", -135080}, {"2300-01-01", 120530},
	}
	for _, c := range cases {
		d, err := ParseDate(c.s)
		if err != nil || d != c.days {
			t.Errorf("ParseDate(%s) = %d, %v; want %d", c.s, d, err, c.days)
		}
		if got := FormatDate(c.days); got != c.s {
			t.Errorf("FormatDate(%d) = %s, want %s", c.days, got, c.s)
		}
		if got := DaysOf(DateOf(c.days)); got != c.days {
			t.Errorf("DaysOf(DateOf(%d)) = %d", c.days, got)
		}
	}
	if DaysOf(time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)) != -1 {
		t.Error("DaysOf ignores the time of day")
	}
}

func TestFormatDecimal(t *testing.T) {
	cases := []struct {
		v     int64
		scale int
		want  string
	}{{12345, 2, "123.45"}, {-5, 2, "-0.05"}, {0, 3, "0.000"}, {7, 0, "7"}}
	for _, c := range cases {
		if got := FormatDecimal(c.v, c.scale); got != c.want {
			t.Errorf("FormatDecimal(%d,%d) = %s, want %s", c.v, c.scale, got, c.want)
		}
	}
}
