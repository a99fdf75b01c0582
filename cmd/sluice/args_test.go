package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeArgs(t *testing.T) {
	app := newApp()
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"flag after positionals", "sluice|tables|add|people|s3://sluice/raw/people/|--format|csv",
			"sluice|tables|add|--format|csv|--|people|s3://sluice/raw/people/"},
		{"flag after job id", "sluice|jobs|show|J1|--coordinator|http://x",
			"sluice|jobs|show|--coordinator|http://x|--|J1"},
		{"value flag with equals", "sluice|submit|select 1|--format=csv",
			"sluice|submit|--format=csv|--|select 1"},
		{"bool flag takes no value", "sluice|submit|--stats|select 1",
			"sluice|submit|--stats|--|select 1"},
		{"sql starting with a comment stays positional", "sluice|submit|-- top\nselect 1|--format|json",
			"sluice|submit|--format|json|--|-- top\nselect 1"},
		{"double dash ends flags", "sluice|submit|--format|csv|--|--stats",
			"sluice|submit|--format|csv|--|--stats"},
		{"global flag before command", "sluice|--log-level|debug|submit|select 1|--stats",
			"sluice|--log-level|debug|submit|--stats|--|select 1"},
		{"unknown flag-like token stays positional", "sluice|submit|-1",
			"sluice|submit|--|-1"},
		{"help anywhere", "sluice|local|query|select 1|--help",
			"sluice|local|query|--help|--|select 1"},
		{"no command", "sluice|--version", "sluice|--version"},
		{"bytes with units", "sluice|local|query|select 1|--split-bytes|8MiB|--data|d",
			"sluice|local|query|--split-bytes|8MiB|--data|d|--|select 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := normalizeArgs(app, strings.Split(tc.in, "|"))
			if want := strings.Split(tc.want, "|"); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("normalizeArgs(%q)\n got %q, %v\nwant %q", tc.in, got, err, want)
			}
		})
	}
}

// TestUnknownFlags: a typo in a flag is an error naming the nearest flag,
// before or after the arguments, never SQL or a table name.
func TestUnknownFlags(t *testing.T) {
	app := newApp()
	cases := []struct{ in, want string }{
		{"sluice|submit|--fromat|csv|select 1", "unknown flag --fromat for 'sluice submit' (did you mean --format?)"},
		{"sluice|submit|select 1|--stat", "unknown flag --stat for 'sluice submit' (did you mean --stats?)"},
		{"sluice|local|start|--functoins|8", "unknown flag --functoins for 'sluice local start' (did you mean --functions?)"},
		{"sluice|--log-levle|debug|submit|select 1", "unknown flag --log-levle for 'sluice' (did you mean --log-level?)"},
		{"sluice|submit|--zzzzzz|select 1", "unknown flag --zzzzzz for 'sluice submit'; run"},
	}
	for _, tc := range cases {
		_, err := normalizeArgs(app, strings.Split(tc.in, "|"))
		var uf *unknownFlagError
		if !errors.As(err, &uf) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestByteSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"8MiB", 8 << 20, false},
		{"1GiB", 1 << 30, false},
		{"64MB", 64_000_000, false},
		{"512 KiB", 512 << 10, false},
		{"1024", 1024, false},
		{"-1", -1, false},
		{"0", 0, false},
		{"lots", 0, true},
		{"-8MiB", 0, true},
		{"1.5G", 3 << 29, false},
	}
	for _, tc := range cases {
		var b ByteSize
		err := b.Set(tc.in)
		if (err != nil) != tc.err || (!tc.err && int64(b) != tc.want) {
			t.Errorf("Set(%q) = %d, %v; want %d, err=%v", tc.in, b, err, tc.want, tc.err)
		}
	}
}

func TestJSONKeys(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"n_name", "n_name", "n_name"}, []string{"n_name", "n_name_1", "n_name_2"}},
		{[]string{"x", "x", "x_1"}, []string{"x", "x_2", "x_1"}},
	}
	for _, tc := range cases {
		if got := jsonKeys(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("jsonKeys(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
