package function

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// SecretEnv names the environment variable holding the secret shared by
// the coordinator and HTTP functions: the coordinator signs every TaskSpec
// with it and the function refuses specs without a valid signature.
const SecretEnv = "SLUICE_FUNCTION_SECRET"

// Headers of a signed invocation.
const (
	SignatureHeader = "X-Sluice-Signature" // "v1=" + hex HMAC-SHA256
	ExpiresHeader   = "X-Sluice-Expires"   // Unix seconds
)

// ErrUnauthorized is matched by the error of VerifyRequest.
var ErrUnauthorized = errors.New("task spec not authorized")

// signature is the HMAC-SHA256 of the expiry and the body.
func signature(secret, body []byte, expires int64) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("sluice-task-v1\n" + strconv.FormatInt(expires, 10) + "\n"))
	m.Write(body)
	return m.Sum(nil)
}

// SignRequest sets the signature headers of an invocation carrying body,
// valid until expires.
func SignRequest(h http.Header, secret, body []byte, expires time.Time) {
	e := expires.Unix()
	h.Set(ExpiresHeader, strconv.FormatInt(e, 10))
	h.Set(SignatureHeader, "v1="+hex.EncodeToString(signature(secret, body, e)))
}

// VerifyRequest checks the signature headers of an invocation carrying
// body: present, made with secret over this very body, and not expired.
func VerifyRequest(h http.Header, secret, body []byte, now time.Time) error {
	sig, exp := h.Get(SignatureHeader), h.Get(ExpiresHeader)
	if sig == "" || exp == "" {
		return fmt.Errorf("%w: unsigned request (the function requires %s and %s; is %s set on the coordinator?)",
			ErrUnauthorized, SignatureHeader, ExpiresHeader, SecretEnv)
	}
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad %s %q", ErrUnauthorized, ExpiresHeader, exp)
	}
	if len(sig) < 3 || sig[:3] != "v1=" {
		return fmt.Errorf("%w: unknown signature scheme", ErrUnauthorized)
	}
	got, err := hex.DecodeString(sig[3:])
	if err != nil || !hmac.Equal(got, signature(secret, body, e)) {
		return fmt.Errorf("%w: bad signature (wrong secret, or the spec was altered)", ErrUnauthorized)
	}
	if now.Unix() > e {
		return fmt.Errorf("%w: signature expired at %s", ErrUnauthorized, time.Unix(e, 0).UTC().Format(time.RFC3339))
	}
	return nil
}
