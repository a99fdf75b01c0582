package shuffle_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicedb/sluice/local/minioserver"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

var (
	server *minioserver.Server
	bucket objstore.Bucket
)

// TestMain runs the package's tests against a real MinIO server.
func TestMain(m *testing.M) {
	ctx := context.Background()
	s, err := minioserver.Start(ctx, minioserver.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "shuffle tests need a real MinIO server: %v\n", err)
		os.Exit(1)
	}
	server = s
	bucket, err = objstore.Open(ctx, objstore.Config{S3: objstore.S3Config{
		Endpoint: s.Endpoint, AccessKey: s.AccessKey, SecretKey: s.SecretKey, Bucket: "shuffle-test",
	}})
	if err == nil {
		err = objstore.EnsureBucket(ctx, bucket)
	}
	if err != nil {
		s.Stop()
		fmt.Fprintf(os.Stderr, "shuffle tests: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "MinIO log tail:\n%s\n", s.Logs())
	}
	s.Stop()
	os.Exit(code)
}

// testSchema has one column of every engine type.
var testSchema = plan.Schema{
	{Name: "b", Type: plan.BoolType},
	{Name: "i", Type: plan.Int64Type},
	{Name: "f", Type: plan.Float64Type},
	{Name: "d", Type: plan.DecimalType(15, 2)},
	{Name: "s", Type: plan.StringType},
	{Name: "dt", Type: plan.DateType},
}.Arrow()

// genRecord builds n rows starting at row number start. Every column has
// NULLs (at different rows); keys repeat (i = row % 97, s over 50 values)
// so that equal keys occur in many batches.
func genRecord(mem memory.Allocator, start, n int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, testSchema)
	defer bld.Release()
	bb := bld.Field(0).(*array.BooleanBuilder)
	ib := bld.Field(1).(*array.Int64Builder)
	fb := bld.Field(2).(*array.Float64Builder)
	db := bld.Field(3).(*array.Decimal64Builder)
	sb := bld.Field(4).(*array.StringBuilder)
	tb := bld.Field(5).(*array.Date32Builder)
	for r := start; r < start+n; r++ {
		if r%11 == 0 {
			bb.AppendNull()
		} else {
			bb.Append(r%3 == 0)
		}
		if r%13 == 0 {
			ib.AppendNull()
		} else {
			ib.Append(int64(r%97) - 40)
		}
		switch {
		case r%17 == 0:
			fb.AppendNull()
		case r%101 == 1:
			fb.Append(math.Copysign(0, -1))
		case r%103 == 2:
			fb.Append(math.NaN())
		default:
			fb.Append(float64(r%89) * 1.25)
		}
		if r%19 == 0 {
			db.AppendNull()
		} else {
			db.Append(decimal.Decimal64(int64(r%83)*1001 - 5000))
		}
		if r%23 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("key-%02d-%s", r%50, strings.Repeat("x", r%7)))
		}
		if r%29 == 0 {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Date32(9000 + r%61))
		}
	}
	return bld.NewRecordBatch()
}

// rowStrings renders every row of rec as one string.
func rowStrings(rec arrow.RecordBatch) []string {
	out := make([]string, rec.NumRows())
	for r := range out {
		var sb strings.Builder
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			if c > 0 {
				sb.WriteByte('|')
			}
			if col.IsNull(r) {
				sb.WriteString("NULL")
			} else if f, ok := col.(*array.Float64); ok {
				fmt.Fprintf(&sb, "%x", math.Float64bits(f.Value(r)))
			} else {
				sb.WriteString(col.ValueStr(r))
			}
		}
		out[r] = sb.String()
	}
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

var jobSeq struct {
	sync.Mutex
	n int
}

// newJob returns a fresh job id for a test.
func newJob(t testing.TB) string {
	jobSeq.Lock()
	defer jobSeq.Unlock()
	jobSeq.n++
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 80 {
		name = name[:80]
	}
	return fmt.Sprintf("%s-%d", name, jobSeq.n)
}

// bucketStats returns the requests the tests' S3 client made so far.
func bucketStats() objstore.RequestStats {
	st, _ := objstore.StatsOf(bucket)
	return st
}
