package shuffle

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// ipcSchema has a column of every type the encoder supports that the
// engine uses, plus binary and a 32-bit integer.
var ipcSchema = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "d", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
}, nil)

// randomBatch builds a batch of n rows from rng: nulls at rate nullRate,
// strings of random lengths (empty ones included), and, when slice is set,
// a slice of a larger batch (non-zero offsets in every buffer).
func randomBatch(mem memory.Allocator, rng *rand.Rand, n int, nullRate float64, slice bool) arrow.RecordBatch {
	extra := 0
	if slice {
		extra = rng.IntN(17) + 1
	}
	b := array.NewRecordBuilder(mem, ipcSchema)
	defer b.Release()
	null := func() bool { return rng.Float64() < nullRate }
	for r := 0; r < n+2*extra; r++ {
		for c, fb := range b.Fields() {
			if null() {
				fb.AppendNull()
				continue
			}
			switch c {
			case 0:
				fb.(*array.BooleanBuilder).Append(rng.IntN(2) == 1)
			case 1:
				fb.(*array.Int64Builder).Append(int64(rng.Uint64()))
			case 2:
				fb.(*array.Int32Builder).Append(int32(rng.Uint32()))
			case 3:
				fb.(*array.Float64Builder).Append(rng.NormFloat64() * 1e6)
			case 4:
				fb.(*array.Decimal64Builder).Append(decimal.Decimal64(rng.Int64N(1e15) - 5e14))
			case 5:
				fb.(*array.StringBuilder).Append(randString(rng))
			case 6:
				fb.(*array.BinaryBuilder).Append([]byte(randString(rng)))
			case 7:
				fb.(*array.Date32Builder).Append(arrow.Date32(rng.IntN(40000)))
			}
		}
	}
	rec := b.NewRecordBatch()
	if !slice {
		return rec
	}
	defer rec.Release()
	return rec.NewSlice(int64(extra), int64(extra+n))
}

func randString(rng *rand.Rand) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 ÄÖü€"
	rs := []rune(alphabet)
	n := rng.IntN(20)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[rng.IntN(len(rs))]
	}
	return string(out)
}

// encodeOurs encodes recs as one IPC file with our encoder.
func encodeOurs(t testing.TB, codec Compression, recs []arrow.RecordBatch) []byte {
	t.Helper()
	mem := memory.DefaultAllocator
	e, err := newBatchEncoder(ipcSchema, codec, 0, mem)
	if err != nil {
		t.Fatal(err)
	}
	var pf partFile
	for _, r := range recs {
		if err := e.encode(r, &pf); err != nil {
			t.Fatal(err)
		}
	}
	// One partition's run as a whole file: header, the run (block offsets
	// shifted past the header), trailer.
	head := e.fileHeader()
	blocks := make([]fileBlock, len(pf.blocks))
	for i, b := range pf.blocks {
		b.offset += int64(len(head))
		blocks[i] = b
	}
	tail, err := fileTrailer(ipcSchema, mem, blocks)
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(head)
	for _, c := range pf.chunks {
		out = append(out, c...)
	}
	out = append(out, tail...)
	return out
}

// encodeArrow encodes recs with arrow-go's ipc.FileWriter.
func encodeArrow(t testing.TB, codec Compression, recs []arrow.RecordBatch) []byte {
	t.Helper()
	opts := []ipc.Option{ipc.WithSchema(ipcSchema)}
	switch codec {
	case CompressionZstd:
		opts = append(opts, ipc.WithZstd())
	case CompressionLZ4:
		opts = append(opts, ipc.WithLZ4())
	}
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decoded is what a reader sees of a file.
type decoded struct {
	schema *arrow.Schema
	recs   []arrow.RecordBatch
}

func decode(t testing.TB, data []byte) decoded {
	t.Helper()
	r, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("open IPC file: %v", err)
	}
	defer r.Close()
	d := decoded{schema: r.Schema()}
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatalf("record batch %d: %v", i, err)
		}
		for c, col := range rec.Columns() {
			if err := validateFull(col); err != nil {
				t.Fatalf("batch %d column %d does not validate: %v", i, c, err)
			}
		}
		rec.Retain()
		d.recs = append(d.recs, rec)
	}
	return d
}

// validateFull checks an array's buffers the way a consumer would trust
// them: offsets monotone and within the data, strings valid UTF-8, nulls
// counted right.
func validateFull(a arrow.Array) error {
	if v, ok := a.(interface{ ValidateFull() error }); ok {
		if err := v.ValidateFull(); err != nil {
			return err
		}
	}
	return validateNulls(a)
}

// validateStructure checks what a reader can promise without a checksum:
// buffers large enough for the array's length and offsets, and nulls
// counted right; not the values (a flipped byte in a string's data may
// leave invalid UTF-8, as one in an integer leaves another integer).
func validateStructure(a arrow.Array) error {
	if v, ok := a.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return validateNulls(a)
}

func validateNulls(a arrow.Array) error {
	nulls := 0
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			nulls++
		}
	}
	if nulls != a.NullN() {
		return errors.New("null count differs from the validity bitmap")
	}
	return nil
}

func sameBatches(t testing.TB, what string, got []arrow.RecordBatch, want []arrow.RecordBatch) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d record batches, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].NumRows() != want[i].NumRows() {
			t.Fatalf("%s: batch %d has %d rows, want %d", what, i, got[i].NumRows(), want[i].NumRows())
		}
		for c := range want[i].Columns() {
			g, w := got[i].Column(c), want[i].Column(c)
			if g.NullN() != w.NullN() || !array.Equal(g, w) {
				t.Fatalf("%s: batch %d column %s differs:\n got %v\nwant %v", what, i, ipcSchema.Field(c).Name, g, w)
			}
		}
	}
}

// TestEncoderMatchesArrowFileWriter: for every codec, our encoder and
// arrow-go's ipc.FileWriter produce files that decode to the same schema
// (metadata included), the same number of record batches and the same
// values, null counts and lengths, over plain and sliced batches.
func TestEncoderMatchesArrowFileWriter(t *testing.T) {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []arrow.RecordBatch
	for _, c := range []struct {
		n     int
		nulls float64
		slice bool
	}{{1, 0, false}, {1000, 0, false}, {1000, 0.3, false}, {777, 1, false}, {513, 0.1, true}, {64, 0.5, true}} {
		recs = append(recs, randomBatch(mem, rng, c.n, c.nulls, c.slice))
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, codec := range []Compression{CompressionZstd, CompressionLZ4, CompressionNone} {
		t.Run(string(codec), func(t *testing.T) {
			ours, theirs := decode(t, encodeOurs(t, codec, recs)), decode(t, encodeArrow(t, codec, recs))
			if !ours.schema.Equal(theirs.schema) || !ours.schema.Metadata().Equal(theirs.schema.Metadata()) {
				t.Fatalf("schema %v, arrow-go's %v", ours.schema, theirs.schema)
			}
			sameBatches(t, "ours vs input", ours.recs, recs)
			sameBatches(t, "arrow-go vs input", theirs.recs, recs)
			sameBatches(t, "ours vs arrow-go", ours.recs, theirs.recs)
		})
	}
}

// FuzzEncoder encodes random batches (shape drawn from the fuzz input)
// and checks that arrow-go decodes exactly them, fully validated. The
// seeds run as a normal test.
func FuzzEncoder(f *testing.F) {
	for _, s := range [][]byte{{0}, {1, 2, 3}, {255, 0, 7, 9}, {42, 42, 42, 42, 42}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		var a, b uint64
		for i, x := range seed {
			if i%2 == 0 {
				a = a*131 + uint64(x)
			} else {
				b = b*137 + uint64(x)
			}
		}
		rng := rand.New(rand.NewPCG(a, b))
		mem := memory.DefaultAllocator
		var recs []arrow.RecordBatch
		for i := 0; i < 1+rng.IntN(3); i++ {
			recs = append(recs, randomBatch(mem, rng, 1+rng.IntN(300), rng.Float64(), rng.IntN(2) == 1))
		}
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		codec := []Compression{CompressionZstd, CompressionLZ4, CompressionNone}[rng.IntN(3)]
		got := decode(t, encodeOurs(t, codec, recs))
		sameBatches(t, string(codec), got.recs, recs)
	})
}

// FuzzReaderCorruptObject writes one shuffle object, damages it as the
// fuzz input says (byte flips at positions, or a truncation), and reads it
// back: the reader must return a *CorruptError or, when the damage left a
// decodable file and the ref does not check size or checksum, batches whose
// structure validates (validateStructure); with a checked ref no damaged
// object may pass. It must never panic or hang. The seeds, and the inputs
// fuzzing found (testdata/fuzz), run as a normal test.
func FuzzReaderCorruptObject(f *testing.F) {
	f.Add([]byte{0, 10, 0xff}, false)
	f.Add([]byte{1, 200}, false)                    // truncate
	f.Add([]byte{0, 0, 1, 0, 3, 0x80}, true)        // header bytes, checked ref
	f.Add([]byte{2, 0x7f, 0x01, 0x33, 0x55}, false) // several flips
	mem := memory.DefaultAllocator
	ctx := context.Background()
	b := objstore.NewMem("fuzz")
	rng := rand.New(rand.NewPCG(7, 7))
	rec := randomBatch(mem, rng, 500, 0.2, false)
	w := NewWriter(b, AttemptPrefix("", "fuzzjob", 0, 0, 0), ipcSchema, plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, WriterOptions{BatchRows: 128})
	if err := w.Write(ctx, rec); err != nil {
		f.Fatal(err)
	}
	rec.Release()
	m, err := w.Close(ctx)
	if err != nil {
		f.Fatal(err)
	}
	ps := m.Partitions[0]
	good, err := b.Get(ctx, ps.Key)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, damage []byte, checked bool) {
		if len(damage) == 0 {
			return
		}
		data := bytes.Clone(good)
		switch damage[0] % 3 {
		case 1: // truncate
			var n uint64
			for _, x := range damage[1:] {
				n = n*256 + uint64(x)
			}
			data = data[:n%uint64(len(data))]
		default: // flips: (position byte pairs, xor)
			for i := 1; i+1 < len(damage); i += 2 {
				pos := (int(damage[i]) * 7919) % len(data)
				data[pos] ^= damage[i+1] | 1
			}
		}
		mb := objstore.NewMem("fuzz")
		if err := mb.Put(ctx, ps.Key, data); err != nil {
			t.Fatal(err)
		}
		ref := ObjectRef{Key: ps.Key}
		if checked {
			ref = ps.Ref()
		}
		rows := int64(0)
		err := ReadObjects(ctx, mb, []ObjectRef{ref}, func(r arrow.RecordBatch) error {
			for _, c := range r.Columns() {
				if err := validateStructure(c); err != nil {
					return err
				}
			}
			rows += r.NumRows()
			return nil
		})
		if err == nil {
			if checked && !bytes.Equal(data, good) {
				t.Fatal("a damaged object passed a checked read")
			}
			return
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("damaged object: %v, want ErrCorrupt", err)
		}
	})
}

// TestEncoderStoresIncompressibleRaw: a buffer that does not shrink by a
// tenth is stored uncompressed (IPC length -1) without the compressor
// running over it whole, one that does is compressed, small ones are
// stored raw; every batch decodes to its rows (arrow-go's reader), and the
// bytes do not depend on the encoder's history.
func TestEncoderStoresIncompressibleRaw(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "random", Type: arrow.PrimitiveTypes.Int64},
		{Name: "constant", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String},
	}, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	batch := func(n int) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := 0; i < n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(rng.Uint64()))
			b.Field(1).(*array.Int64Builder).Append(42)
			b.Field(2).(*array.StringBuilder).Append("the same words again and again " + string(rune('a'+i%26)))
		}
		return b.NewRecordBatch()
	}
	// Buffers in IPC order: random values, constant values, text
	// offsets, text bytes (validity bitmaps are absent: no NULLs).
	for _, c := range []struct {
		name string
		rows int
		raw  []bool // per non-empty buffer: stored uncompressed
	}{
		{"sampled", 50_000, []bool{true, false, true, false}}, // offsets do not shrink either
		{"compressed whole", 1_000, []bool{true, false, true, false}},
		{"small", 10, []bool{true, true, true, true}},
	} {
		for _, codec := range []Compression{CompressionLZ4, CompressionZstd} {
			t.Run(c.name+"/"+string(codec), func(t *testing.T) {
				rec := batch(c.rows)
				defer rec.Release()
				var objs [][]byte
				for _, history := range []int{0, 3} {
					e, err := newBatchEncoder(schema, codec, 0, memory.DefaultAllocator)
					if err != nil {
						t.Fatal(err)
					}
					for range history { // batches of another shape first
						other := batch(777)
						if err := e.encode(other, &partFile{}); err != nil {
							t.Fatal(err)
						}
						other.Release()
					}
					var pf partFile
					if err := e.encode(rec, &pf); err != nil {
						t.Fatal(err)
					}
					msg := pf.chunks[0]
					body := msg[pf.blocks[0].meta:]
					var raw []bool
					for _, b := range e.bufs {
						if b[1] == 0 {
							continue
						}
						raw = append(raw, int64(binary.LittleEndian.Uint64(body[b[0]:])) == -1)
					}
					if !slices.Equal(raw, c.raw) {
						t.Errorf("buffers stored raw %v, want %v", raw, c.raw)
					}
					objs = append(objs, msg)
					head := e.fileHeader()
					blocks := []fileBlock{pf.blocks[0]}
					blocks[0].offset += int64(len(head))
					tail, err := fileTrailer(schema, memory.DefaultAllocator, blocks)
					if err != nil {
						t.Fatal(err)
					}
					got := decode(t, append(append(bytes.Clone(head), msg...), tail...))
					sameBatches(t, "decoded vs input", got.recs, []arrow.RecordBatch{rec})
				}
				if !bytes.Equal(objs[0], objs[1]) {
					t.Error("the message depends on the batches the encoder saw before")
				}
			})
		}
	}
}
