package coordinator

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestAPIAuthBrowserSession checks the token rules of the API with the
// web UI's session cookie: bearer header on every route, a cookie from
// /ui/login or ?token= on reads only, nothing without either.
func TestAPIAuthBrowserSession(t *testing.T) {
	e := newFakeEnv(t, 2)
	c := e.coordinator(t, testConfig("c1"))
	api := NewAPI(c)
	api.Token = "s3cret-token"
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()

	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	plain := &http.Client{CheckRedirect: noRedirect}
	do := func(cl *http.Client, method, path, bearer, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if method == http.MethodPost && strings.HasPrefix(path, "/ui/login") {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	for _, tc := range []struct {
		name, method, path, bearer string
		want                       int
		location                   string // prefix of the redirect, if any
	}{
		{"health needs nothing", "GET", "/healthz", "", 200, ""},
		{"api without token", "GET", "/v1/jobs", "", 401, ""},
		{"api with wrong token", "GET", "/v1/jobs", "nope", 401, ""},
		{"api with token", "GET", "/v1/jobs", "s3cret-token", 200, ""},
		{"ui without token goes to login", "GET", "/ui/", "", 303, "/ui/login?next="},
		{"login page is open", "GET", "/ui/login", "", 200, ""},
		{"static assets are open", "GET", "/ui/static/ui.css", "", 200, ""},
		{"wrong query token goes to login", "GET", "/ui/?token=nope", "", 303, "/ui/login"},
		{"query token logs in and drops itself", "GET", "/ui/?state=running&token=s3cret-token", "", 303, "/ui/?state=running"},
		{"cancel without token", "POST", "/v1/jobs/20260101-000000-00000000/cancel", "", 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(plain, tc.method, tc.path, tc.bearer, "")
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
			}
			if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, tc.location) || strings.Contains(loc, "s3cret") {
				t.Fatalf("Location %q, want prefix %q and no token", loc, tc.location)
			}
		})
	}

	// A browser: wrong token refused, right token gives a cookie that opens
	// the UI and the JSON views but not the write routes.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: noRedirect}
	form := url.Values{"token": {"wrong"}, "next": {"/ui/"}}.Encode()
	if resp := do(browser, "POST", "/ui/login", "", form); resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong login: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	form = url.Values{"token": {"s3cret-token"}, "next": {"//evil.example/"}}.Encode()
	resp := do(browser, "POST", "/ui/login", "", form)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("login: %d to %q, want 303 to /ui/ (an off-site next is refused)", resp.StatusCode, resp.Header.Get("Location"))
	}
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || strings.Contains(ck.Value, "s3cret") {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, no token inside", ck)
	}
	if resp := do(browser, "GET", "/ui/", "", ""); resp.StatusCode != 200 {
		t.Fatalf("ui with session: %d", resp.StatusCode)
	}
	if resp := do(browser, "GET", "/v1/jobs?detail=1", "", ""); resp.StatusCode != 200 {
		t.Fatalf("json view with session: %d", resp.StatusCode)
	}
	if resp := do(browser, "POST", "/v1/jobs", "", `{"sql":"select 1"}`); resp.StatusCode != 401 {
		t.Fatalf("submit with only a session cookie: %d, want 401", resp.StatusCode)
	}
	// A changed token ends old sessions.
	api2 := NewAPI(c)
	api2.Token = "rotated"
	srv2 := httptest.NewServer(api2.Handler())
	defer srv2.Close()
	req, _ := http.NewRequest("GET", srv2.URL+"/v1/jobs", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: ck.Value})
	r2, err := plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 401 {
		t.Fatalf("old session after token rotation: %d, want 401", r2.StatusCode)
	}
}
