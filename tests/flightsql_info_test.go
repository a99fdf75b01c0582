package tests

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluicedb/sluice/local"
)

// TestFlightSQLSqlInfo: GetSqlInfo through arrow-go's client answers the
// server's name and versions and what SQL it takes; asking for no ids
// gives all registered ones, and an id not registered is NotFound.
func TestFlightSQLSqlInfo(t *testing.T) {
	st := startStack(t, "", nil)
	addr, err := st.StartFlight(local.FlightOptions{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
	infos := func(ids ...flightsql.SqlInfo) map[flightsql.SqlInfo]any {
		t.Helper()
		fi, err := cl.GetSqlInfo(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := cl.DoGet(ctx, fi.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Release()
		out := map[flightsql.SqlInfo]any{}
		for rd.Next() {
			rec := rd.RecordBatch()
			names := rec.Column(0).(*array.Uint32)
			vals := rec.Column(1).(*array.DenseUnion)
			for i := 0; i < int(rec.NumRows()); i++ {
				child := vals.Field(vals.ChildID(i))
				out[flightsql.SqlInfo(names.Value(i))] = child.GetOneForMarshal(int(vals.ValueOffset(i)))
			}
		}
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := infos(flightsql.SqlInfoFlightSqlServerName, flightsql.SqlInfoFlightSqlServerArrowVersion,
		flightsql.SqlInfoFlightSqlServerReadOnly, flightsql.SqlInfoIdentifierQuoteChar, flightsql.SqlInfoNullOrdering,
		flightsql.SqlInfoFlightSqlServerTransaction)
	for id, want := range map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:         "sluice",
		flightsql.SqlInfoFlightSqlServerArrowVersion: arrow.PkgVersion,
		flightsql.SqlInfoFlightSqlServerReadOnly:     true,
		flightsql.SqlInfoIdentifierQuoteChar:         `"`,
		flightsql.SqlInfoNullOrdering:                int32(flightsql.SqlNullOrderingSortAtEnd),
		flightsql.SqlInfoFlightSqlServerTransaction:  int32(flightsql.SqlTransactionNone),
	} {
		if got[id] != want {
			t.Errorf("info %d: %v (%T), want %v", id, got[id], got[id], want)
		}
	}
	if len(got) != 6 {
		t.Errorf("asked for 6 ids, got %d: %v", len(got), got)
	}
	all := infos()
	if all[flightsql.SqlInfoFlightSqlServerVersion] == nil || all[flightsql.SqlInfoFlightSqlServerSql] != true || len(all) < 10 {
		t.Errorf("all infos: %v", all)
	}
	if fi, err := cl.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoKeywords}); err != nil {
		t.Fatal(err)
	} else if rd, err := cl.DoGet(ctx, fi.Endpoint[0].Ticket); status.Code(err) != codes.NotFound {
		if err == nil {
			rd.Next()
			err = rd.Err()
			rd.Release()
		}
		if status.Code(err) != codes.NotFound {
			t.Errorf("an unregistered id: %v, want NotFound", err)
		}
	}
}
