package planner

import (
	"strings"
	"testing"
)

// TestMaskTimeTravel: FOR VERSION / TIMESTAMP AS OF after a table name
// becomes the name "t@ref" at the same length; nothing else changes.
func TestMaskTimeTravel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"select * from ev for version as of 123 where id = 1",
			`select * from "ev@123"               where id = 1`},
		{"select * from Ev FOR TIMESTAMP AS OF '2024-03-01 10:00:00' e",
			`select * from "ev@2024-03-01 10:00:00"                   e`},
		{`select * from "My-T" for version as of 7 join u on true`,
			`select * from "My-T@7"                    join u on true`},
		{"select 1 for update", "select 1 for update"},
		{"select * from t for version as of 8011104131183844749", `select * from "t@8011104131183844749"`},
		{"select * from t for version as of 1.5", "select * from t for version as of 1.5"},
		{"select * from t for version as of 'x'", `select * from "t@x"`}, // the catalog says a snapshot is a number
		{"select 'for version as of 1'", "select 'for version as of 1'"},
	} {
		got := maskTimeTravel(tc.in)
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(tc.want), " ") {
			t.Errorf("maskTimeTravel(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if len(got) != len(tc.in) {
			t.Errorf("maskTimeTravel(%q) changed the length", tc.in)
		}
	}
}
