package function

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func specBytes(t *testing.T, mod func(*TaskSpec)) []byte {
	t.Helper()
	s := &TaskSpec{Version: SpecVersion, Job: "j1", Stage: 0, Task: 0, Attempt: 1, Prefix: "p",
		PlanKey: "p/jobs/j1/plans/0.json", OutputPrefix: shuffle.AttemptPrefix("p", "j1", 0, 0, 1)}
	if mod != nil {
		mod(s)
	}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHTTPHandlerSignature: with a secret, only invocations signed with it
// over the very body, and not expired, get past the 401.
func TestHTTPHandlerSignature(t *testing.T) {
	secret := []byte("s3cret-shared")
	rt := NewRuntime(objstore.NewMem("b"), nil, nil)
	srv := httptest.NewServer(NewHTTPHandler(rt, HTTPOptions{Secret: secret}))
	defer srv.Close()
	body := specBytes(t, nil)
	future := time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name string
		sign func(h http.Header)
		send []byte
		code int
		msg  string
	}{
		{"unsigned", func(http.Header) {}, body, 401, "unsigned"},
		{"wrong secret", func(h http.Header) { SignRequest(h, []byte("other"), body, future) }, body, 401, "bad signature"},
		{"altered spec", func(h http.Header) { SignRequest(h, secret, body, future) }, bytes.Replace(body, []byte(`"attempt":1`), []byte(`"attempt":2`), 1), 401, "bad signature"},
		{"expired", func(h http.Header) { SignRequest(h, secret, body, time.Now().Add(-2*time.Second)) }, body, 401, "expired"},
		{"forged expiry", func(h http.Header) {
			SignRequest(h, secret, body, time.Now().Add(-2*time.Second))
			h.Set(ExpiresHeader, "99999999999")
		}, body, 401, "bad signature"},
		{"signed", func(h http.Header) { SignRequest(h, secret, body, future) }, body, 200, `"job":"j1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/invoke", bytes.NewReader(tc.send))
			tc.sign(req.Header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(buf.String(), tc.msg) {
				t.Fatalf("HTTP %d %q, want %d with %q", resp.StatusCode, buf.String(), tc.code, tc.msg)
			}
		})
	}
}

// TestRunRefusesOverwrite: a spec (replayed or forged) cannot write over
// an attempt that already wrote its manifest, nor outside its own attempt
// prefix; the committed objects stay as they were.
func TestRunRefusesOverwrite(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("b")
	rt := NewRuntime(b, nil, nil)
	prefix := shuffle.AttemptPrefix("p", "j1", 0, 0, 1)
	committed := map[string][]byte{shuffle.ManifestKey(prefix): []byte(`{"manifest":1}`), shuffle.PartKey(prefix, 0): []byte("result")}
	for k, v := range committed {
		if err := b.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		mod  func(*TaskSpec)
		is   error
		kind ErrorKind
	}{
		{"replayed attempt", nil, ErrAttemptWritten, ErrTransient},
		{"other attempt's prefix", func(s *TaskSpec) { s.Attempt = 2 }, nil, ErrUser},
		{"outside the job", func(s *TaskSpec) { s.OutputPrefix = "tables/lineitem/" }, nil, ErrUser},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res TaskResult
			if err := json.Unmarshal(rt.Handle(ctx, specBytes(t, tc.mod)), &res); err != nil {
				t.Fatal(err)
			}
			if res.Error == "" || res.Kind != tc.kind {
				t.Fatalf("result %+v, want a %s refusal", res, tc.kind)
			}
			if tc.is != nil && !strings.Contains(res.Error, tc.is.Error()) {
				t.Fatalf("error %q, want %q", res.Error, tc.is)
			}
		})
	}
	for k, v := range committed {
		got, err := b.Get(ctx, k)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("committed object %s changed: %q, %v", k, got, err)
		}
	}
	if err := rt.checkOutput(ctx, &TaskSpec{Prefix: "p", Job: "j1", Attempt: 3, OutputPrefix: shuffle.AttemptPrefix("p", "j1", 0, 0, 3)}); err != nil {
		t.Fatalf("a fresh attempt is refused: %v", err)
	}
}

// TestRunChangedFile: a table file rewritten since it was registered is a
// user error naming the file and both sizes.
func TestRunChangedFile(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("b")
	st := plan.Stage{ID: 0, Root: &plan.Node{Kind: plan.KindScan, Schema: plan.Schema{{Name: "x", Type: plan.Int64Type}},
		Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: []string{"x"}}},
		Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}}
	sj, _ := json.Marshal(st)
	if err := b.Put(ctx, "p/jobs/j1/plans/0.json", sj); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "tables/t/f1.parquet", []byte("rewritten: 22 bytes..")); err != nil {
		t.Fatal(err)
	}
	rt := NewRuntime(b, nil, nil)
	var res TaskResult
	_ = json.Unmarshal(rt.Handle(ctx, specBytes(t, func(s *TaskSpec) {
		s.Splits = []Split{{Key: "tables/t/f1.parquet", Size: 1000}}
	})), &res)
	want := "file tables/t/f1.parquet changed since registered: size 1000, now 21"
	if res.Kind != ErrUser || !strings.Contains(res.Error, want) {
		t.Fatalf("result %+v, want a user error %q", res, want)
	}
}
