package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluicedb/sluice/local"
)

// flightRows runs q through arrow-go's Flight SQL client and returns the
// records' schema and normalized rows.
func flightRows(t *testing.T, ctx context.Context, cl *flightsql.Client, q string) (*arrow.Schema, []row) {
	t.Helper()
	info, err := cl.Execute(ctx, q)
	if err != nil {
		t.Fatalf("flight sql execute: %v\n%s", err, q)
	}
	return infoRows(t, ctx, cl, info)
}

// TestFlightSQL runs statements and catalog calls through arrow-go's
// Flight SQL client, answers checked against DuckDB; the bearer token is
// required.
func TestFlightSQL(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	addr, err := st.StartFlight(local.FlightOptions{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Without the token: Unauthenticated.
	if _, err := cl.Execute(ctx, "select 1"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v", err)
	}
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
	for _, q := range []string{
		`select n_nationkey, n_name from nation order by n_nationkey`,
		`select l_returnflag, sum(l_extendedprice) as s, avg(l_quantity) as q, count(*) as n, min(l_shipdate) as d from lineitem group by 1 order by 1`,
		`select o_orderkey from orders where o_orderkey < 0`,
	} {
		schema, got := flightRows(t, ctx, cl, q)
		if schema == nil || schema.NumFields() == 0 {
			t.Fatalf("no schema for %s", q)
		}
		compareRows(t, got, duckRows(t, db, q), true)
	}
	// Results arrive as sluice's Arrow types (decimal, date), unconverted.
	schema, _ := flightRows(t, ctx, cl, `select l_extendedprice, l_shipdate from lineitem limit 1`)
	if _, ok := schema.Field(0).Type.(*arrow.Decimal64Type); !ok || schema.Field(1).Type.ID() != arrow.DATE32 {
		t.Fatalf("result types: %s", schema)
	}
	// A user error carries its code.
	if _, err := cl.Execute(ctx, "select nope from nation"); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "SL003") {
		t.Fatalf("unknown column: %v", err)
	}
	// Catalog calls.
	info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{TableNameFilterPattern: ptr("n%"), IncludeSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	var names []string
	for rd.Next() {
		rec := rd.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			names = append(names, rec.Column(2).(*array.String).Value(i))
			ts, err := flight.DeserializeSchema(rec.Column(4).(*array.Binary).Value(i), nil)
			if err != nil || ts.NumFields() == 0 {
				t.Fatalf("table schema: %v %v", ts, err)
			}
		}
	}
	if strings.Join(names, ",") != "nation" {
		t.Fatalf("GetTables n%%: %v", names)
	}
	info, err = cl.GetCatalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer crd.Release()
	if !crd.Next() || crd.RecordBatch().Column(0).(*array.String).Value(0) != "sluice" {
		t.Fatal("GetCatalogs: no sluice catalog")
	}
}

func ptr[T any](v T) *T { return &v }
