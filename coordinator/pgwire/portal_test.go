package pgwire

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
)

// fakeEngine answers every query with the numbers 0..rows-1 in batches of
// four, and records the jobs cancelled. With gate set, the records after
// the first wait until it is closed (a result still being read).
type fakeEngine struct {
	rows      int
	cancelled chan string
	gate      chan struct{}
}

var fakeSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)

func (f *fakeEngine) Submit(context.Context, string) (string, error) { return "j1", nil }
func (f *fakeEngine) Wait(ctx context.Context, _ string) error {
	if f.rows < 0 { // a query that runs until cancelled
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}
func (f *fakeEngine) Cancel(_ context.Context, job string) error { f.cancelled <- job; return nil }
func (f *fakeEngine) Schema(context.Context, string) (*arrow.Schema, error) {
	return fakeSchema, nil
}
func (f *fakeEngine) Tables(context.Context) ([]coordinator.TableInfo, error) { return nil, nil }
func (f *fakeEngine) Describe(context.Context, string) (*arrow.Schema, error) {
	return fakeSchema, nil
}
func (f *fakeEngine) ParamTypes(context.Context, string) ([]plan.DataType, error) { return nil, nil }
func (f *fakeEngine) Result(ctx context.Context, _ string, fn func(arrow.RecordBatch) error) (*arrow.Schema, error) {
	for lo := 0; lo < f.rows; lo += 4 {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for i := lo; i < min(lo+4, f.rows); i++ {
			b.Append(int64(i))
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(fakeSchema, []arrow.Array{col}, int64(col.Len()))
		col.Release()
		b.Release()
		if lo > 0 && f.gate != nil {
			select {
			case <-f.gate:
			case <-ctx.Done():
				rec.Release()
				return nil, ctx.Err()
			}
		}
		err := fn(rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
	}
	return fakeSchema, nil
}

// fakeClient serves one connection of a server over fake over a pipe and
// returns the client's protocol end, started up.
func fakeClient(t *testing.T, fake *fakeEngine) (*pgproto3.Frontend, net.Conn) {
	t.Helper()
	s := &Server{Engine: fake, Log: slog.New(slog.DiscardHandler)}
	client, server := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.serveConn(ctx, server) }()
	t.Cleanup(func() { cancel(); client.Close(); <-done })
	fe := pgproto3.NewFrontend(client, client)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return fe, client
		}
	}
}

// TestExecuteMaxRows: row-limited Executes of one portal send the rows in
// order across record batches, each ending with PortalSuspended, the last
// with CommandComplete; Sync drops a suspended portal.
func TestExecuteMaxRows(t *testing.T) {
	fe, _ := fakeClient(t, &fakeEngine{rows: 10})
	got := ""
	recv := func() string {
		t.Helper()
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				got += string(m.Values[0]) + " "
			case *pgproto3.PortalSuspended:
				return "suspended"
			case *pgproto3.CommandComplete:
				return string(m.CommandTag)
			case *pgproto3.ReadyForQuery:
				return "ready"
			case *pgproto3.ErrorResponse:
				t.Fatalf("error %s", m.Message)
			}
		}
	}
	send := func(msgs ...pgproto3.FrontendMessage) {
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	send(&pgproto3.Parse{Query: "select n from t"}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 3}, &pgproto3.Flush{})
	var ends []string
	ends = append(ends, recv())
	for range 3 {
		send(&pgproto3.Execute{MaxRows: 3}, &pgproto3.Flush{})
		ends = append(ends, recv())
	}
	if want := "[suspended suspended suspended SELECT 1] 0 1 2 3 4 5 6 7 8 9 "; fmt.Sprint(ends)+" "+got != want {
		t.Fatalf("got %v %s, want %s", ends, got, want)
	}
	// A suspended portal is gone after Sync.
	got = ""
	send(&pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 4}, &pgproto3.Sync{})
	if e, r := recv(), recv(); e != "suspended" || r != "ready" || got != "0 1 2 3 " {
		t.Fatalf("%s %s %q", e, r, got)
	}
	send(&pgproto3.Execute{MaxRows: 4}, &pgproto3.Sync{})
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := msg.(*pgproto3.ErrorResponse); ok {
			if m.Code != "34000" {
				t.Fatalf("execute after sync: %s %s", m.Code, m.Message)
			}
			break
		}
	}
}

// TestDisconnectCancels: a client that closes its connection while its
// query runs has the job cancelled.
func TestDisconnectCancels(t *testing.T) {
	fake := &fakeEngine{rows: -1, cancelled: make(chan string, 1)}
	fe, client := fakeClient(t, fake)
	fe.Send(&pgproto3.Query{String: "select n from t"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	client.Close()
	select {
	case job := <-fake.cancelled:
		if job != "j1" {
			t.Fatalf("cancelled %s", job)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job was not cancelled")
	}
}
