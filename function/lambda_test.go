package function

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// The Lambda adapter is an aws-lambda-go Handler: lambda.Start passes it
// the raw payload and sends back the raw bytes it returns.
var _ lambda.Handler = (*LambdaHandler)(nil)

func TestIsSpecRef(t *testing.T) {
	for payload, want := range map[string]string{
		`{"spec_key":"p/jobs/j/specs/1-2-a1.json"}`:     "p/jobs/j/specs/1-2-a1.json",
		` {"spec_key": "k"} `:                           "k",
		`{"spec_key":""}`:                               "",
		`{"spec_key":"k","job":"j"}`:                    "",
		`{"version":1,"job":"j","plan_key":"spec_key"}`: "",
		`not json "spec_key"`:                           "",
	} {
		got, ok := IsSpecRef([]byte(payload))
		if got != want || ok != (want != "") {
			t.Errorf("IsSpecRef(%s) = %q, %v; want %q", payload, got, ok, want)
		}
	}
}

func testSpec() *TaskSpec {
	return &TaskSpec{Version: SpecVersion, Job: "j1", Stage: 1, Task: 2, Attempt: 1,
		PlanKey: "jobs/j1/plans/1-r0.json", OutputPrefix: "jobs/j1/stage-1/task-2/a1/"}
}

// TestLambdaHandler: a TaskSpec inline and by reference reach the runtime
// (the plan fragment is missing, so the task reports a failure for the
// right attempt); a reference to a missing object is a failed invocation.
func TestLambdaHandler(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("t")
	h := NewLambdaHandler(NewRuntime(b, nil, nil))
	spec, _ := testSpec().Encode()
	if err := b.Put(ctx, "jobs/j1/specs/1-2-a1.json", spec); err != nil {
		t.Fatal(err)
	}
	for _, payload := range [][]byte{spec, []byte(`{"spec_key":"jobs/j1/specs/1-2-a1.json"}`)} {
		out, err := h.Invoke(ctx, payload)
		if err != nil {
			t.Fatal(err)
		}
		var res TaskResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		if res.Job != "j1" || res.Task != 2 || res.Attempt != 1 || !strings.Contains(res.Error, "plan fragment") {
			t.Fatalf("result %s", out)
		}
	}
	if _, err := h.Invoke(ctx, []byte(`{"spec_key":"jobs/j1/specs/missing.json"}`)); err == nil {
		t.Fatal("missing spec object: no error")
	}
	if _, err := h.Invoke(ctx, []byte(`{"spec_key":"../etc/passwd"}`)); err == nil {
		t.Fatal("bad key: no error")
	}
	// A payload that is no TaskSpec is the user's error, in the result.
	out, err := h.Invoke(ctx, []byte(`{"version":1}`))
	if err != nil || !strings.Contains(string(out), `"kind":"user"`) {
		t.Fatalf("%s %v", out, err)
	}
}

func TestHTTPHandlerSpecRef(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("t")
	spec, _ := testSpec().Encode()
	_ = b.Put(ctx, "jobs/j1/specs/x.json", spec)
	srv := httptest.NewServer(HTTPHandler(NewRuntime(b, nil, nil)))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/invoke", "application/json", bytes.NewReader([]byte(`{"spec_key":"jobs/j1/specs/x.json"}`)))
	if err != nil {
		t.Fatal(err)
	}
	var res TaskResult
	_ = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != 200 || res.Job != "j1" {
		t.Fatalf("status %d result %+v", resp.StatusCode, res)
	}
	resp, err = http.Post(srv.URL+"/invoke", "application/json", bytes.NewReader([]byte(`{"spec_key":"nope"}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("missing spec object: status %d", resp.StatusCode)
	}
}
