package plan

import "testing"

// TestParseTimestampDigits: fields with a leading zero are decimal (a
// parser reading "08" or "09" as octal dropped them).
func TestParseTimestampDigits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // microseconds since 2024-03-05 00:00:00
	}{
		{"2024-03-05 00:00:00", 0},
		{"2024-03-05 08:09:09", (8*3600 + 9*60 + 9) * MicrosPerSecond},
		{"2024-03-05 09:08:07.089", (9*3600+8*60+7)*MicrosPerSecond + 89_000},
		{"2024-03-05T14:07:09.012345", (14*3600+7*60+9)*MicrosPerSecond + 12_345},
	} {
		base, err := ParseTimestamp("2024-03-05")
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseTimestamp(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got-base != tc.want {
			t.Errorf("%s: got %d us after midnight, want %d", tc.in, got-base, tc.want)
		}
	}
}
