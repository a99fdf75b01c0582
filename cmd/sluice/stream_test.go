package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/sluicedb/sluice/coordinator"
)

// resultServer serves the job result as an Arrow IPC stream of recs (one
// batch each, cut into pieces of 7 rows), cutting the connection after
// cutAfter[k] batches on the k-th request (no entry or -1: the whole
// stream). It counts the requests.
func resultServer(t *testing.T, schema *arrow.Schema, recs []arrow.RecordBatch, cutAfter []int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var pieces []arrow.RecordBatch
	for _, rec := range recs {
		for lo := int64(0); lo < rec.NumRows(); lo += 7 {
			pieces = append(pieces, rec.NewSlice(lo, min(lo+7, rec.NumRows())))
		}
	}
	t.Cleanup(func() {
		for _, p := range pieces {
			p.Release()
		}
	})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := int(n.Add(1)) - 1
		cut := -1
		if k < len(cutAfter) {
			cut = cutAfter[k]
		}
		w.Header().Set("Content-Type", "application/vnd.apache.arrow.stream")
		wr := ipc.NewWriter(w, ipc.WithSchema(schema))
		for i, p := range pieces {
			if i == cut {
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // as the coordinator cuts a stream it cannot finish
			}
			if err := wr.Write(p); err != nil {
				return
			}
		}
		wr.Close()
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestPrintResultStreams: csv and json print a result batch by batch, and
// a read cut short resumes after the rows already printed, so the output
// is the whole answer, each row once, as writeCSV/writeJSON print it
// from the whole result; when every read is cut, the error says how many
// rows were printed and that they are not all.
func TestPrintResultStreams(t *testing.T) {
	schema, recs := result(t, 100) // released by result's cleanup
	for _, format := range []string{"csv", "json"} {
		var want bytes.Buffer
		if err := writeResultFit(&want, format, schema, recs, tableFit{}); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name     string
			cutAfter []int
			reads    int32
			errText  string
		}{
			{"whole", nil, 1, ""},
			{"cut once", []int{5}, 2, ""},
			{"cut twice, at the start", []int{0, 9}, 3, ""},
			{"cut at every read", []int{3, 6, 12}, resultAttempts, "was cut after 84 rows were printed"},
		}
		for _, c := range cases {
			t.Run(format+"/"+c.name, func(t *testing.T) {
				srv, reads := resultServer(t, schema, recs, c.cutAfter)
				cl := &coordinator.Client{URL: srv.URL, HTTP: srv.Client()}
				var out, errw bytes.Buffer
				err := queryOpts{format: format}.printResult(context.Background(), cl, "j1", &out, &errw)
				if got := reads.Load(); got != c.reads {
					t.Errorf("%d reads, want %d", got, c.reads)
				}
				if c.errText == "" {
					if err != nil {
						t.Fatal(err)
					}
					if out.String() != want.String() {
						t.Errorf("output differs from the whole result's:\n%s\nwant:\n%s", head(out.String()), head(want.String()))
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), c.errText) {
					t.Fatalf("err %v, want %q", err, c.errText)
				}
				if !strings.HasPrefix(want.String(), out.String()) || out.Len() == 0 {
					t.Errorf("a cut output must be a prefix of the answer:\n%s", head(out.String()))
				}
			})
		}
	}
}

func head(s string) string {
	if len(s) > 400 {
		return s[:400] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}
