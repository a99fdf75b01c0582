package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluicedb/sluice/coordinator"
)

// TestPGWireDisconnect: a client that goes away mid-query (its connection
// closed, no cancel request: pgx would send one, so the query goes out as
// a raw Query message on a hijacked connection) has its job cancelled.
func TestPGWireDisconnect(t *testing.T) {
	st, pg := pgStack(t)
	ctx := context.Background()
	pc, err := pgconn.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := pc.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	hc.Frontend.Send(&pgproto3.Query{String: `select count(*) from lineitem a, lineitem b where a.l_orderkey <> b.l_orderkey`})
	if err := hc.Frontend.Flush(); err != nil {
		t.Fatal(err)
	}
	cl := coordinator.NewClient(st.APIURL, "")
	var job string
	deadline := time.Now().Add(30 * time.Second)
	for job == "" {
		ids, err := cl.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 {
			job = ids[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the query's job never started")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // let it run
	if err := hc.Conn.Close(); err != nil {
		t.Fatal(err)
	}
	for {
		js, err := cl.Status(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		if js.State == coordinator.StateCancelled {
			return
		}
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("job %s is %s after its client went away, want cancelled", job, js.State)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestPGWireMaxRows: Execute with a row limit sends that many rows and
// PortalSuspended; the next Execute of the portal continues where it
// stopped, and the last one ends with CommandComplete. Raw pgproto3
// messages over a pgconn connection, checked against DuckDB.
func TestPGWireMaxRows(t *testing.T) {
	_, pg := pgStack(t)
	db := openDuck(t, dataDir(t, *sfFlag))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pc, err := pgconn.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := pc.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Conn.Close()
	fe := hc.Frontend
	go func() { <-ctx.Done(); hc.Conn.Close() }()
	q := "select n_nationkey, n_name from nation order by n_nationkey"
	var got []row
	// receive reads messages up to one of the kinds in until and collects
	// the data rows.
	receive := func(until ...string) string {
		t.Helper()
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			kind := fmt.Sprintf("%T", msg)
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				got = append(got, row{string(m.Values[0]), string(m.Values[1])})
			case *pgproto3.ErrorResponse:
				t.Fatalf("error: %s %s", m.Code, m.Message)
			case *pgproto3.CommandComplete:
				kind += " " + string(m.CommandTag)
			}
			for _, u := range until {
				if fmt.Sprintf("%T", msg) == u {
					return kind
				}
			}
		}
	}
	send := func(msgs ...pgproto3.FrontendMessage) {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	send(&pgproto3.Parse{Query: q}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: 10}, &pgproto3.Flush{})
	const suspended, complete = "*pgproto3.PortalSuspended", "*pgproto3.CommandComplete"
	for i, want := range []struct {
		kind string
		rows int
	}{{suspended, 10}, {suspended, 20}, {complete + " SELECT 5", 25}} {
		if i > 0 {
			send(&pgproto3.Execute{MaxRows: 10}, &pgproto3.Flush{})
		}
		if kind := receive(suspended, complete); kind != want.kind || len(got) != want.rows {
			t.Fatalf("execute %d: %s after %d rows, want %s after %d", i, kind, len(got), want.kind, want.rows)
		}
	}
	send(&pgproto3.Sync{})
	receive("*pgproto3.ReadyForQuery")
	compareRows(t, got, duckRows(t, db, "select cast(n_nationkey as varchar), n_name from nation order by n_nationkey"), true)

	// A limit the rows end at exactly still suspends (as Postgres does);
	// the next Execute sends none and completes. Without a limit all rows
	// come at once.
	got = nil
	send(&pgproto3.Parse{Query: q}, &pgproto3.Bind{DestinationPortal: "p"}, &pgproto3.Execute{Portal: "p", MaxRows: 25}, &pgproto3.Flush{})
	if kind := receive(suspended, complete); kind != suspended || len(got) != 25 {
		t.Fatalf("%s after %d rows", kind, len(got))
	}
	send(&pgproto3.Execute{Portal: "p", MaxRows: 25}, &pgproto3.Sync{})
	if kind := receive(suspended, complete); kind != complete+" SELECT 0" {
		t.Fatalf("%s after %d rows", kind, len(got))
	}
	receive("*pgproto3.ReadyForQuery")
	got = nil
	send(&pgproto3.Bind{DestinationPortal: "p"}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	if kind := receive(suspended, complete); kind != complete+" SELECT 25" || len(got) != 25 {
		t.Fatalf("%s after %d rows", kind, len(got))
	}
	receive("*pgproto3.ReadyForQuery")
	send(&pgproto3.Terminate{})
}
