package shuffle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Writing Arrow IPC files, many at once, cheaply.
//
// arrow-go's ipc.FileWriter owns a streaming zstd compressor with an 8 MiB
// window: one FileWriter per output partition costs 16 MiB of memory (and
// of zeroing) per partition, and the frames it writes declare that window,
// so that a reader allocates 16 MiB again for every record batch. Instead
// a Writer encodes record batch messages itself (batchEncoder below):
// every buffer is compressed with one process-wide zstd encoder's EncodeAll
// (single-segment frames that declare their content size) or an LZ4 frame,
// as the Arrow format's BUFFER body compression prescribes. The schema
// message and the file footer come from arrow-go: the schema payload from
// ipc.GetSchemaPayload and the footer from a FileWriter that writes as many
// empty batches, whose footer's block entries (fixed-size structs) are then
// overwritten with the real ones. The layout is exactly ipc.FileWriter's:
//
//	"ARROW1" 00 00 | schema message | record batch messages | EOS | footer | int32 footer size | "ARROW1"

var (
	arrowMagic = []byte("ARROW1")
	eosMarker  = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	zeros      [8]byte
)

// Flatbuffer constants of the Arrow format (Schema.fbs, Message.fbs).
const (
	metadataV5          = 4 // MetadataVersion.V5
	headerRecordBatch   = 3 // MessageHeader.RecordBatch
	codecLZ4Frame       = 0 // CompressionType.LZ4_FRAME
	codecZstd           = 1 // CompressionType.ZSTD
	continuationMarker  = 0xffffffff
	recordBatchesSlot   = 3 // Footer.recordBatches
	blockStructSize     = 24
	bufferStructSize    = 16
	fieldNodeStructSize = 16
)

var (
	zstdMu       sync.Mutex
	zstdEncoders = map[zstd.EncoderLevel]*zstd.Encoder{}
)

// DefaultZstdLevel is the zstd level used when WriterOptions.ZstdLevel is
// 0: the fastest, since shuffle data is written once and read once.
const DefaultZstdLevel = 1

// sharedZstd returns the process-wide zstd encoder of a level (zstd's 1 to
// 22, mapped to the encoder's speed classes). EncodeAll is safe for
// concurrent use.
func sharedZstd(level int) (*zstd.Encoder, error) {
	if level == 0 {
		level = DefaultZstdLevel
	}
	l := zstd.EncoderLevelFromZstd(level)
	zstdMu.Lock()
	defer zstdMu.Unlock()
	if enc := zstdEncoders[l]; enc != nil {
		return enc, nil
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(l), zstd.WithLowerEncoderMem(true),
		zstd.WithEncoderCRC(false)) // objects carry their own checksum
	if err != nil {
		return nil, err
	}
	zstdEncoders[l] = enc
	return enc, nil
}

var lz4Writers = sync.Pool{New: func() any {
	w := lz4.NewWriter(nil)
	// As arrow-go and Arrow C++ do.
	_ = w.Apply(lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block64Kb))
	return w
}}

// fileBlock locates one record batch message in an IPC file.
type fileBlock struct {
	offset int64
	meta   int32 // encapsulated metadata length (prefix and padding included)
	body   int64
}

// partFile accumulates one partition's run of record batch messages.
// Block offsets are relative to the start of the run; the first spilled
// bytes of the run may have moved to the writer's spill file (segs).
type partFile struct {
	chunks  [][]byte // the run's messages held in memory, after the spilled bytes
	mem     int64    // bytes in chunks
	blocks  []fileBlock
	rows    int64
	spilled int64      // bytes of the run in the spill file, before buf
	segs    [][2]int64 // (offset, length) of the spilled bytes in the spill file
	sent    bool       // handed to the upload: final, not to be spilled
}

// batchEncoder encodes record batches as IPC messages. Not safe for
// concurrent use.
type batchEncoder struct {
	schema    *arrow.Schema
	codec     Compression
	zstd      *zstd.Encoder
	schemaMsg []byte // the encapsulated schema message

	fb    *flatbuffers.Builder
	raw   [][]byte   // the batch's buffers, in IPC order
	nodes [][2]int64 // (length, null count) per field
	bufs  [][2]int64 // (offset, length) per buffer in the body
	body  bytes.Buffer
	cbuf  []byte
	// sample holds a compressed sample of a buffer (writeBuffer).
	sample bytes.Buffer
}

func newBatchEncoder(schema *arrow.Schema, codec Compression, zstdLevel int, mem memory.Allocator) (*batchEncoder, error) {
	e := &batchEncoder{schema: schema, codec: codec, fb: flatbuffers.NewBuilder(1024)}
	switch codec {
	case CompressionZstd:
		enc, err := sharedZstd(zstdLevel)
		if err != nil {
			return nil, err
		}
		e.zstd = enc
	case CompressionLZ4, CompressionNone:
	default:
		return nil, fmt.Errorf("unknown compression %q", codec)
	}
	for _, f := range schema.Fields() {
		if err := checkEncodable(f.Type); err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
	}
	p := ipc.GetSchemaPayload(schema, mem)
	defer p.Release()
	var b bytes.Buffer
	if _, err := p.WritePayload(&b); err != nil {
		return nil, err
	}
	e.schemaMsg = b.Bytes()
	return e, nil
}

func checkEncodable(t arrow.DataType) error {
	switch t.ID() {
	case arrow.NULL, arrow.BOOL, arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return nil
	case arrow.LIST, arrow.MAP:
		return checkEncodable(t.(arrow.ListLikeType).Elem())
	case arrow.STRUCT:
		for _, f := range t.(*arrow.StructType).Fields() {
			if err := checkEncodable(f.Type); err != nil {
				return err
			}
		}
		return nil
	}
	if fw, ok := t.(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 && t.ID() != arrow.FIXED_SIZE_BINARY && t.ID() != arrow.DICTIONARY {
		return nil
	}
	return fmt.Errorf("unsupported column type %s", t)
}

// encode appends rec (rows > 0) as one record batch message to pf.
func (e *batchEncoder) encode(rec arrow.RecordBatch, pf *partFile) error {
	e.raw, e.nodes, e.bufs = e.raw[:0], e.nodes[:0], e.bufs[:0]
	for _, col := range rec.Columns() {
		if err := e.addColumn(col); err != nil {
			return err
		}
	}
	// Body: every buffer (compressed: int64 uncompressed length, then the
	// compressed bytes) padded to 8 bytes.
	e.body.Reset()
	for _, raw := range e.raw {
		start := int64(e.body.Len())
		if len(raw) > 0 {
			if err := e.writeBuffer(raw); err != nil {
				return err
			}
		}
		n := int64(e.body.Len()) - start
		e.bufs = append(e.bufs, [2]int64{start, n})
		if pad := e.body.Len() % 8; pad != 0 {
			e.body.Write(zeros[:8-pad])
		}
	}
	meta := e.message(rec.NumRows(), int64(e.body.Len()))
	metaLen := len(meta) + 8
	if r := metaLen % 8; r != 0 {
		metaLen += 8 - r
	}
	// One allocation of the message's exact size: the run holds it as is.
	msg := make([]byte, metaLen+e.body.Len())
	binary.LittleEndian.PutUint32(msg[0:], continuationMarker)
	binary.LittleEndian.PutUint32(msg[4:], uint32(metaLen-8))
	copy(msg[8:], meta)
	copy(msg[metaLen:], e.body.Bytes())
	pf.add(msg, int32(metaLen), int64(e.body.Len()), rec.NumRows())
	return nil
}

// add appends one encoded message (metaLen bytes of header and metadata,
// then body bytes) of rows rows to the run.
func (pf *partFile) add(msg []byte, metaLen int32, body, rows int64) {
	pf.blocks = append(pf.blocks, fileBlock{offset: pf.spilled + pf.mem, meta: metaLen, body: body})
	pf.chunks = append(pf.chunks, msg)
	pf.mem += int64(len(msg))
	pf.rows += rows
}

// Compressing a buffer that does not shrink costs the compressor's time
// on write and a decompression on every read. A buffer whose compressed
// size would be above minCompressedRatio of its size is stored
// uncompressed (IPC's length -1): string offsets, hashes, random keys. A
// big buffer is judged by compressing a sample of it first (its first
// sampleBytes), so the compressor never runs over one that does not
// shrink; a small one is compressed and kept raw when that did not pay.
// The choice depends on the buffer's bytes only, so an object's bytes do
// not depend on which encoder (worker) encoded which batch.
const (
	minCompressedRatio = 0.9
	minCompressBytes   = 512
	sampleBytes        = 4 << 10
)

// writeBuffer appends one buffer of the batch to the body: compressed as
// the codec says (behind its uncompressed length), or raw.
func (e *batchEncoder) writeBuffer(raw []byte) error {
	if e.codec == CompressionNone {
		e.body.Write(raw)
		return nil
	}
	var n [8]byte
	if len(raw) < minCompressBytes || (len(raw) >= 4*sampleBytes && !e.shrinks(raw[:sampleBytes])) {
		e.writeRaw(raw)
		return nil
	}
	binary.LittleEndian.PutUint64(n[:], uint64(len(raw)))
	start := e.body.Len()
	e.body.Write(n[:])
	if err := e.compress(&e.body, raw); err != nil {
		return err
	}
	if float64(e.body.Len()-start-8) > minCompressedRatio*float64(len(raw)) {
		e.body.Truncate(start)
		e.writeRaw(raw)
	}
	return nil
}

// writeRaw appends raw uncompressed, behind the length -1.
func (e *batchEncoder) writeRaw(raw []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], ^uint64(0))
	e.body.Write(n[:])
	e.body.Write(raw)
}

// shrinks tells whether sample compresses below minCompressedRatio.
func (e *batchEncoder) shrinks(sample []byte) bool {
	e.sample.Reset()
	if err := e.compress(&e.sample, sample); err != nil {
		return true // let the real compression report it
	}
	return float64(e.sample.Len()) <= minCompressedRatio*float64(len(sample))
}

// compress appends raw compressed with the codec to out.
func (e *batchEncoder) compress(out *bytes.Buffer, raw []byte) error {
	switch e.codec {
	case CompressionZstd:
		e.cbuf = e.zstd.EncodeAll(raw, e.cbuf[:0])
		out.Write(e.cbuf)
		return nil
	case CompressionLZ4:
		w := lz4Writers.Get().(*lz4.Writer)
		defer lz4Writers.Put(w)
		w.Reset(out)
		if _, err := w.Write(raw); err != nil {
			return err
		}
		return w.Close()
	}
	return fmt.Errorf("unknown compression %q", e.codec)
}

// addColumn appends the field node and buffers of one (flat) column, with
// its offset applied: bitmaps shifted, fixed-width values sliced, binary
// offsets rebased to 0.
func (e *batchEncoder) addColumn(a arrow.Array) error {
	d := a.Data()
	off, n := d.Offset(), d.Len()
	e.nodes = append(e.nodes, [2]int64{int64(n), int64(a.NullN())})
	dt := a.DataType()
	if dt.ID() == arrow.NULL {
		return nil // no buffers
	}
	bufBytes := func(i int) []byte {
		bs := d.Buffers()
		if i >= len(bs) || bs[i] == nil {
			return nil
		}
		return bs[i].Bytes()
	}
	if a.NullN() == 0 {
		e.raw = append(e.raw, nil)
	} else {
		e.raw = append(e.raw, e.bitmap(bufBytes(0), off, n))
	}
	switch dt.ID() {
	case arrow.BOOL:
		e.raw = append(e.raw, e.bitmap(bufBytes(1), off, n))
	case arrow.STRING, arrow.BINARY:
		ob, first, last := rebasedOffsets(bufBytes(1), off, n)
		e.raw = append(e.raw, ob, bufBytes(2)[first:last])
	case arrow.LIST, arrow.MAP:
		// Offsets rebased to 0, then the child rows they span (IPC lists
		// a nested column's nodes and buffers parent first).
		ob, first, last := rebasedOffsets(bufBytes(1), off, n)
		e.raw = append(e.raw, ob)
		return e.addChild(d.Children()[0], int64(first), int64(last))
	case arrow.STRUCT:
		for _, c := range d.Children() {
			if err := e.addChild(c, int64(off), int64(off+n)); err != nil {
				return err
			}
		}
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs := arrow.Int64Traits.CastFromBytes(bufBytes(1))[off : off+n+1]
		first, last := offs[0], offs[n]
		ob := arrow.Int64Traits.CastToBytes(offs)
		if first != 0 {
			rb := make([]int64, n+1)
			for i, o := range offs {
				rb[i] = o - first
			}
			ob = arrow.Int64Traits.CastToBytes(rb)
		}
		e.raw = append(e.raw, ob, bufBytes(2)[first:last])
	default:
		fw, ok := dt.(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 {
			return fmt.Errorf("unsupported column type %s", dt)
		}
		w := fw.BitWidth() / 8
		e.raw = append(e.raw, bufBytes(1)[off*w:(off+n)*w])
	}
	return nil
}

// addChild appends rows [lo, hi) of child data c.
func (e *batchEncoder) addChild(c arrow.ArrayData, lo, hi int64) error {
	sd := array.NewSliceData(c, lo, hi)
	defer sd.Release()
	ca := array.MakeFromData(sd)
	defer ca.Release()
	return e.addColumn(ca)
}

// bitmap returns n bits of src from bit off, starting at bit 0.
func (e *batchEncoder) bitmap(src []byte, off, n int) []byte {
	nb := int(bitutil.BytesForBits(int64(n)))
	if off%8 == 0 {
		return src[off/8 : off/8+nb]
	}
	dst := make([]byte, nb)
	bitutil.CopyBitmap(src, off, n, dst, 0)
	return dst
}

// message builds the Message flatbuffer of a record batch.
func (e *batchEncoder) message(length, bodyLen int64) []byte {
	b := e.fb
	b.Reset()
	b.StartVector(fieldNodeStructSize, len(e.nodes), 8)
	for i := len(e.nodes) - 1; i >= 0; i-- {
		b.Prep(8, fieldNodeStructSize)
		b.PrependInt64(e.nodes[i][1]) // null_count
		b.PrependInt64(e.nodes[i][0]) // length
	}
	nodes := b.EndVector(len(e.nodes))
	b.StartVector(bufferStructSize, len(e.bufs), 8)
	for i := len(e.bufs) - 1; i >= 0; i-- {
		b.Prep(8, bufferStructSize)
		b.PrependInt64(e.bufs[i][1]) // length
		b.PrependInt64(e.bufs[i][0]) // offset
	}
	buffers := b.EndVector(len(e.bufs))
	var comp flatbuffers.UOffsetT
	if e.codec != CompressionNone {
		codec := int8(codecZstd)
		if e.codec == CompressionLZ4 {
			codec = codecLZ4Frame
		}
		b.StartObject(2)               // BodyCompression
		b.PrependInt8Slot(0, codec, 0) // codec
		b.PrependInt8Slot(1, 0, 0)     // method: BUFFER
		comp = b.EndObject()
	}
	b.StartObject(5) // RecordBatch
	b.PrependInt64Slot(0, length, 0)
	b.PrependUOffsetTSlot(1, nodes, 0)
	b.PrependUOffsetTSlot(2, buffers, 0)
	if e.codec != CompressionNone {
		b.PrependUOffsetTSlot(3, comp, 0)
	}
	rb := b.EndObject()
	b.StartObject(5) // Message
	b.PrependInt64Slot(3, bodyLen, 0)
	b.PrependUOffsetTSlot(2, rb, 0)
	b.PrependInt16Slot(0, metadataV5, 0)
	b.PrependByteSlot(1, headerRecordBatch, 0)
	msg := b.EndObject()
	b.Finish(msg)
	return b.FinishedBytes()
}

// fileHeader returns the bytes of an IPC file before its first record
// batch: magic, padding and the schema message.
func (e *batchEncoder) fileHeader() []byte {
	h := make([]byte, 0, len(arrowMagic)+2+len(e.schemaMsg))
	h = append(h, arrowMagic...)
	h = append(h, zeros[:2]...)
	return append(h, e.schemaMsg...)
}

// fileTrailer returns the bytes of an IPC file after its last record
// batch (EOS, footer, footer size, magic), for the given blocks.
func fileTrailer(schema *arrow.Schema, mem memory.Allocator, blocks []fileBlock) ([]byte, error) {
	footer, err := footerFor(schema, mem, blocks)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(eosMarker)
	b.Write(footer)
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(footer)))
	b.Write(n[:])
	b.Write(arrowMagic)
	return b.Bytes(), nil
}

// footerFor returns the IPC file footer (the Footer flatbuffer) of a file
// with the given schema and record batch blocks.
func footerFor(schema *arrow.Schema, mem memory.Allocator, blocks []fileBlock) ([]byte, error) {
	var tmp bytes.Buffer
	fw, err := ipc.NewFileWriter(&tmp, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	empty := array.NewRecordBatch(schema, cols, 0)
	for _, c := range cols {
		c.Release()
	}
	defer empty.Release()
	for range blocks {
		if err := fw.Write(empty); err != nil {
			return nil, err
		}
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	data := tmp.Bytes()
	if len(data) < 10+len(arrowMagic) {
		return nil, errors.New("footer template: file too short")
	}
	size := int(binary.LittleEndian.Uint32(data[len(data)-10:]))
	if size <= 0 || size > len(data)-10 {
		return nil, errors.New("footer template: bad footer size")
	}
	footer := bytes.Clone(data[len(data)-10-size : len(data)-10])
	if err := patchFooterBlocks(footer, blocks); err != nil {
		return nil, fmt.Errorf("footer template: %w", err)
	}
	return footer, nil
}

// patchFooterBlocks overwrites the recordBatches vector of a Footer
// flatbuffer (File.fbs: table Footer { version; schema; dictionaries:
// [Block]; recordBatches: [Block]; ... }, struct Block { offset: long;
// metaDataLength: int; bodyLength: long } of 24 bytes) with blocks. The
// vector must already have len(blocks) entries.
func patchFooterBlocks(fb []byte, blocks []fileBlock) error {
	u32 := func(at int) (int, error) {
		if at < 0 || at+4 > len(fb) {
			return 0, errors.New("offset out of range")
		}
		return int(binary.LittleEndian.Uint32(fb[at:])), nil
	}
	root, err := u32(0)
	if err != nil {
		return err
	}
	soff, err := u32(root)
	if err != nil {
		return err
	}
	vt := root - int(int32(uint32(soff)))
	if vt < 0 || vt+4 > len(fb) {
		return errors.New("bad vtable")
	}
	vtSize := int(binary.LittleEndian.Uint16(fb[vt:]))
	slot := 4 + 2*recordBatchesSlot
	if slot+2 > vtSize || vt+slot+2 > len(fb) {
		if len(blocks) == 0 {
			return nil
		}
		return errors.New("no recordBatches field")
	}
	fo := int(binary.LittleEndian.Uint16(fb[vt+slot:]))
	if fo == 0 {
		if len(blocks) == 0 {
			return nil
		}
		return errors.New("no recordBatches field")
	}
	field := root + fo
	rel, err := u32(field)
	if err != nil {
		return err
	}
	vec := field + rel
	n, err := u32(vec)
	if err != nil {
		return err
	}
	if n != len(blocks) || vec+4+blockStructSize*n > len(fb) {
		return fmt.Errorf("recordBatches has %d entries, want %d", n, len(blocks))
	}
	for i, b := range blocks {
		e := fb[vec+4+blockStructSize*i:]
		binary.LittleEndian.PutUint64(e[0:], uint64(b.offset))
		binary.LittleEndian.PutUint32(e[8:], uint32(b.meta))
		binary.LittleEndian.PutUint64(e[16:], uint64(b.body))
	}
	return nil
}

// rebasedOffsets returns the int32 offsets of rows [off, off+n) of an
// offsets buffer, rebased to start at 0 (the buffer itself when they
// already do), and the first and last offset they span.
func rebasedOffsets(buf []byte, off, n int) (ob []byte, first, last int32) {
	offs := arrow.Int32Traits.CastFromBytes(buf)[off : off+n+1]
	first, last = offs[0], offs[n]
	if first == 0 {
		return arrow.Int32Traits.CastToBytes(offs), first, last
	}
	rb := make([]int32, n+1)
	for i, o := range offs {
		rb[i] = o - first
	}
	return arrow.Int32Traits.CastToBytes(rb), first, last
}
