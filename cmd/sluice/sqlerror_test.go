package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
)

func TestErrorContext(t *testing.T) {
	long := "select " + strings.Repeat("a, ", 40) + "nosuch from t"
	cases := []struct {
		sql  string
		pos  int
		want string
	}{
		{"select nosuch from t", 8, "LINE 1: select nosuch from t\n               ^"},
		{"select a\nfrom t\nwhere yy > 1", 23, "LINE 3: where yy > 1\n              ^"},
		{"select 'é', x\nfrom\tt", 20, "LINE 2: from t\n             ^"},
		{"select 1", 0, ""},
		{"select 1", 99, ""},
		{"select 1 +", 11, "LINE 1: select 1 +\n                  ^"},
		// 140 characters: the last 76, with the position inside.
		{long, strings.Index(long, "nosuch") + 1, "LINE 1: ..." + long[64:] + "\n" + strings.Repeat(" ", 8+3+127-64) + "^"},
	}
	for _, c := range cases {
		if got := errorContext(c.sql, c.pos); got != c.want {
			t.Errorf("errorContext(%q, %d):\n%s\nwant\n%s", c.sql, c.pos, got, c.want)
		}
	}
	err := &sqlError{sql: "select 1\nfrom nosuch", where: "q.sql:4", err: &coordinator.APIError{Msg: "SL002: unknown table \"nosuch\" at position 15", Code: "SL002", Position: 15}}
	want := "q.sql:4: SL002: unknown table \"nosuch\" at position 15\nLINE 2: from nosuch\n             ^"
	if err.Error() != want {
		t.Errorf("sqlError:\n%s\nwant\n%s", err.Error(), want)
	}
	var ae *coordinator.APIError
	if !errors.As(err, &ae) {
		t.Error("sqlError does not unwrap to the API error")
	}
}
