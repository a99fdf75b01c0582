package main

import "testing"

func TestParseByteSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512MiB", 512 << 20, true},
		{"1GiB", 1 << 30, true},
		{"1gib", 1 << 30, true},
		{"1.5G", 3 << 29, true},
		{"64MB", 64e6, true},
		{"4096", 4096, true},
		{" 2 GiB ", 2 << 30, true},
		{"10b", 10, true},
		{"", 0, false},
		{"-1GiB", 0, false},
		{"lots", 0, false},
		{"1PiB", 0, false},
	}
	for _, c := range cases {
		got, err := parseByteSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
	b := ByteSize(512 << 20)
	if b.String() != "512MiB" {
		t.Errorf("String = %q", b.String())
	}
}
