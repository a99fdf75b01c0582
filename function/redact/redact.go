// Package redact removes credentials from text bound for errors, logs and
// statuses: passwords in URLs (redis://:PASSWORD@host), credential query
// parameters, bearer tokens, and the secrets sluice reads from its
// environment (S3 secret keys, session tokens, API tokens, the function
// secret). One function, String, is used everywhere.
package redact

import (
	"context"
	"log/slog"
	"os"
	"regexp"
	"strings"
)

// Mask replaces every credential.
const Mask = "[REDACTED]"

// SecretEnvs are the environment variables whose values are secrets
// wherever they appear.
var SecretEnvs = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "SLUICE_TOKEN", "SLUICE_FUNCTION_SECRET", "REDIS_PASSWORD"}

var (
	// scheme://user:password@ and scheme://password@ (no user: the whole
	// userinfo may be a password, as Redis URLs allow).
	urlUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/@\s:"']*)(:[^@\s"']*)?@`)
	queryCred   = regexp.MustCompile(`(?i)((?:password|passwd|pwd|secret|token|signature|credential|secret_key|access_key|x-amz-security-token)=)([^&\s"']+)`)
	bearer      = regexp.MustCompile(`(Bearer\s+)([A-Za-z0-9._~+/=\-]+)`) // the header's form, not the word in prose
)

// String returns s with credentials replaced by Mask, and the values of
// extra (and of SecretEnvs) wherever they appear.
func String(s string, extra ...string) string {
	s = urlUserinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlUserinfo.FindStringSubmatch(m)
		if sub[3] == "" { // only one part: it may be the password
			if sub[2] == "" {
				return m
			}
			return sub[1] + Mask + "@"
		}
		return sub[1] + sub[2] + ":" + Mask + "@"
	})
	s = queryCred.ReplaceAllString(s, "${1}"+Mask)
	s = bearer.ReplaceAllStringFunc(s, func(m string) string {
		sub := bearer.FindStringSubmatch(m)
		if sub[2] == "token" || sub[2] == "tokens" {
			return m // "Bearer token" in prose
		}
		return sub[1] + Mask
	})
	for _, e := range SecretEnvs {
		s = secret(s, os.Getenv(e))
	}
	for _, v := range extra {
		s = secret(s, v)
	}
	return s
}

func secret(s, v string) string {
	if len(v) < 4 { // too short to tell from ordinary text
		return s
	}
	return strings.ReplaceAll(s, v, Mask)
}

// URLPassword returns the password (or lone userinfo) of a URL given as
// text, even one that does not parse, to pass to String as extra.
func URLPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	info := rest[:at]
	if _, pw, ok := strings.Cut(info, ":"); ok {
		return pw
	}
	return info
}

// Error is an error whose message is redacted; it unwraps to the original.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// Err returns err with its message redacted (nil for nil).
func Err(err error, extra ...string) error {
	if err == nil {
		return nil
	}
	msg := String(err.Error(), extra...)
	if msg == err.Error() {
		return err
	}
	return &Error{msg: msg, err: err}
}

// Handler wraps a slog.Handler so that messages and string and error
// attributes are redacted.
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ h slog.Handler }

func (r handler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = attr(a)
	}
	return handler{r.h.WithAttrs(red)}
}

func (r handler) WithGroup(name string) slog.Handler { return handler{r.h.WithGroup(name)} }

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, x := range g {
			red[i] = attr(x)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, String(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, String(s.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
