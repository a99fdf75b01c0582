package main

import "testing"

// TestHTTPEndpoint: an HTTP endpoint given without its scheme means what
// an S3 endpoint does: http on loopback, https elsewhere; a scheme stays.
func TestHTTPEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:7070":            "http://127.0.0.1:7070",
		"localhost:7070/":           "http://localhost:7070/",
		"[::1]:8080":                "http://[::1]:8080",
		"http://127.0.0.1:7070":     "http://127.0.0.1:7070",
		"https://127.0.0.1:7070":    "https://127.0.0.1:7070",
		"sluice.example.com":        "https://sluice.example.com",
		"10.1.2.3:7070/v1":          "https://10.1.2.3:7070/v1",
		"http://sluice.example.com": "http://sluice.example.com",
		"":                          "",
	} {
		if got := httpEndpoint(in); got != want {
			t.Errorf("httpEndpoint(%q) = %q, want %q", in, got, want)
		}
	}
}
