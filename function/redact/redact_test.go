package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMIK7MDENG")
	for _, tc := range []struct{ in, want string }{
		{"redis://:hunter2@localhost:6379/0", "redis://:[REDACTED]@localhost:6379/0"},
		{"dial rediss://default:s3cr#t@redis.example:6380 failed", "dial rediss://default:[REDACTED]@redis.example:6380 failed"},
		{"redis://onlypassword@host:1", "redis://[REDACTED]@host:1"},
		{"redis://host:6379/0", "redis://host:6379/0"},
		{"http://u:p@h/x?password=abc&x=1", "http://u:[REDACTED]@h/x?password=[REDACTED]&x=1"},
		{"GET /o?X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA/x", "GET /o?X-Amz-Signature=[REDACTED]&X-Amz-Credential=[REDACTED]"},
		{"Authorization: Bearer tok-123", "Authorization: Bearer [REDACTED]"},
		{"secret key wJalrXUtnFEMIK7MDENG rejected", "secret key [REDACTED] rejected"},
		{"no secrets here: 10 rows", "no secrets here: 10 rows"},
		{"missing or wrong bearer token", "missing or wrong bearer token"},
		{"want a Bearer token", "want a Bearer token"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestURLPasswordAndErr(t *testing.T) {
	raw := "redis://:p%zz wd@localhost:6379"
	if got := URLPassword(raw); got != "p%zz wd" {
		t.Fatalf("URLPassword = %q", got)
	}
	base := errors.New(`parse "` + raw + `": invalid URL escape "%zz"`)
	err := Err(fmt.Errorf("redis URL: %w", base), URLPassword(raw))
	if strings.Contains(err.Error(), "p%zz") || !errors.Is(err, base) {
		t.Fatalf("Err = %q (unwraps: %v)", err, errors.Is(err, base))
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil))).With("redis", "redis://:pw1234@h:1")
	log.Error("connect redis://:pw1234@h:1", "err", errors.New("dial redis://u:pw1234@h:1: refused"), slog.Group("g", "url", "redis://:pw1234@h"))
	if strings.Contains(buf.String(), "pw1234") {
		t.Fatalf("log leaks the password: %s", buf.String())
	}
	if !strings.Contains(buf.String(), Mask) {
		t.Fatalf("log not redacted: %s", buf.String())
	}
}
