package coordinator

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Browser sessions for the web UI when the API requires a bearer token.
//
// A browser cannot attach an Authorization header to a page load, so the
// UI gets a login page (/ui/login) that takes the token once and sets a
// session cookie. The cookie holds an HMAC of the token, never the token:
// it proves knowledge of the token, stops working when the token changes,
// and a leaked cookie does not give the bearer token for the write routes.
// The cookie is HttpOnly, SameSite=Strict, Secure on TLS, and it is
// honoured only on GET and HEAD: writes (submit, cancel) always need the
// bearer header, so a cookie alone never changes anything (no CSRF).
// A link such as /ui/?token=T (what `local start` could print) logs in and
// redirects to the same page without the token in the address.

const (
	sessionCookie = "sluice_session"
	sessionTTL    = 12 * time.Hour
	loginPath     = "/ui/login"
)

// sessionValue is what a valid session cookie holds for token.
func sessionValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("sluice web ui session v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// authorized reports whether r carries the token: the bearer header on any
// route, or a session cookie on a read.
func (a *API) authorized(r *http.Request) bool {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+a.Token)) == 1 {
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	c, err := r.Cookie(sessionCookie)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(sessionValue(a.Token))) == 1
}

// setSession gives the browser a session cookie.
func (a *API) setSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: sessionValue(a.Token), Path: "/",
		MaxAge: int(sessionTTL.Seconds()), HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
}

// safeNext keeps a post-login redirect on this server's UI.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/ui") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/ui/"
	}
	return next
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sluice: sign in</title>
<link rel="stylesheet" href="/ui/static/ui.css"></head>
<body><main class="login"><h1>sluice</h1>
<p>This coordinator requires its API token.</p>
{{if .Wrong}}<p class="error" id="login-error">That token is not the coordinator's token.</p>{{end}}
<form method="post" action="/ui/login">
<input type="hidden" name="next" value="{{.Next}}">
<label>Token <input type="password" name="token" id="token" autocomplete="current-password" autofocus></label>
<button type="submit" id="login">Sign in</button>
</form></main></body></html>
`))

// login serves GET and POST /ui/login.
func (a *API) login(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.FormValue("next"))
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if err := r.ParseForm(); err != nil {
			writeErr(w, http.StatusBadRequest, err)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(a.Token)) == 1 {
			a.setSession(w, r)
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = loginPage.Execute(w, struct {
		Next  string
		Wrong bool
	}{next, r.Method == http.MethodPost})
}

// guard applies the token to a request; it returns false when it answered
// the request itself (refused it, or logged a browser in).
func (a *API) guard(w http.ResponseWriter, r *http.Request) bool {
	if a.Token == "" || unauthenticated(r.URL.Path) || r.URL.Path == loginPath ||
		strings.HasPrefix(r.URL.Path, "/ui/static/") {
		return true
	}
	if a.authorized(r) {
		return true
	}
	ui := r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, "/ui/")
	if ui && r.Method == http.MethodGet {
		q := r.URL.Query()
		if tok := q.Get("token"); tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(a.Token)) == 1 {
			a.setSession(w, r)
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return false
		}
		http.Redirect(w, r, loginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return false
	}
	writeErr(w, http.StatusUnauthorized, errMissingToken)
	return false
}

var errMissingToken = errors.New("missing or wrong bearer token")
