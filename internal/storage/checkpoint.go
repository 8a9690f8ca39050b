package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/vfs"
)

// A checkpoint file is a sequence of journal frames that rebuild a catalog
// from nothing, through the same apply function as the journal:
//
//	frame ckptHeader   uvarint LSN, uvarint seq
//	frame OpDatabase   database options
//	per epoch mark of the journal: frame OpEpoch
//	per table:  frame OpCreateTable (definition, counters)
//	            frame OpInsert per row
//	per object: frame OpPutObject
//	frame FrameCommit  (a file without it is incomplete and ignored)
//
// A checkpoint taken while transactions are open (stream.go) says how
// many in its header (a third uvarint; older files have none) and carries
// their frames after the catalog, so that whoever loads it resumes them:
//
//	per run of one open transaction's frames (in journal order, so the
//	transactions' runs interleave):
//	    frame ckptOpen  uvarint id, uvarint first LSN
//	    its change frames
//	frame FrameCommit
//
// It is written to a temporary file, fsync'd, then renamed: a checkpoint
// file either exists whole or not at all.
const (
	ckptHeader journal.FrameType = 2
	ckptOpen   journal.FrameType = 3
)

const ckptSuffix = ".ckpt"

type ckptName struct {
	lsn, seq uint64
	path     string
}

// CheckpointFile is a checkpoint file of a database folder: the LSN it
// was written at, and its path.
type CheckpointFile struct {
	LSN  journal.LSN
	Path string
}

// Checkpoints returns the checkpoint files in dir (a database's folder,
// or one moved to quarantine), newest first.
func Checkpoints(dir string) ([]CheckpointFile, error) {
	names, err := listCheckpoints(vfs.Default, dir)
	out := make([]CheckpointFile, len(names))
	for i, c := range names {
		out[i] = CheckpointFile{LSN: journal.LSN(c.lsn), Path: c.path}
	}
	return out, err
}

func listCheckpoints(fs vfs.FS, dir string) ([]ckptName, error) {
	ents, err := fs.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []ckptName
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "checkpoint-") || !strings.HasSuffix(n, ckptSuffix) {
			continue
		}
		parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(n, "checkpoint-"), ckptSuffix), "-")
		if len(parts) != 2 {
			continue
		}
		lsn, err1 := strconv.ParseUint(parts[0], 10, 64)
		seq, err2 := strconv.ParseUint(parts[1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, ckptName{lsn: lsn, seq: seq, path: filepath.Join(dir, n)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].lsn != out[j].lsn {
			return out[i].lsn > out[j].lsn
		}
		return out[i].seq > out[j].seq
	})
	return out, nil
}

// writeCheckpoint writes the catalog at lsn, and the transactions open
// there (open writes their frames), into dir and returns the file's path.
func writeCheckpoint(fs vfs.FS, dir string, cat *Catalog, lsn journal.LSN, open openWriter) (string, error) {
	final := filepath.Join(dir, fmt.Sprintf("checkpoint-%020d-%020d%s", uint64(lsn), cat.seq, ckptSuffix))
	tmp := final + ".tmp"
	f, err := fs.Create(tmp, 0o644)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", tmp, err)
	}
	defer fs.Remove(tmp)
	w := bufio.NewWriterSize(f, 1<<20)
	if err := writeCatalog(w, cat, lsn, open); err != nil {
		f.Close()
		return "", fmt.Errorf("checkpoint %s: %w", tmp, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", fmt.Errorf("checkpoint %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", fmt.Errorf("checkpoint %s: fsync: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", final, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return "", fmt.Errorf("checkpoint %s: fsync %s: %w", final, dir, err)
	}
	return final, nil
}

// openWriter writes the section of a checkpoint's open transactions
// (stream.go): n of them; nil or n 0 for none.
type openWriter struct {
	n     int
	write func(w io.Writer) error
}

// writeCatalog writes the frames of a checkpoint of cat at lsn to w, then
// those of the transactions open at lsn.
func writeCatalog(w io.Writer, cat *Catalog, lsn journal.LSN, open openWriter) error {
	var buf []byte
	flush := func(force bool) error {
		if len(buf) >= 1<<20 || force {
			_, err := w.Write(buf)
			buf = buf[:0]
			return err
		}
		return nil
	}
	var hdr []byte
	hdr = appendUvarint(hdr, uint64(lsn))
	hdr = appendUvarint(hdr, cat.seq)
	if open.n > 0 {
		hdr = appendUvarint(hdr, uint64(open.n))
	}
	buf = journal.AppendFrame(buf, ckptHeader, hdr)
	buf = AppendOp(buf, &Op{Kind: OpDatabase, BaseID: cat.baseID, Data: cat.options})
	for _, m := range cat.history {
		buf = AppendOp(buf, &Op{Kind: OpEpoch, Mark: m})
	}
	for _, e := range cat.tables.e {
		t := e.t
		buf = AppendOp(buf, &Op{Kind: OpCreateTable, Def: t.shape.def, NextID: t.ctr.nextID.Load(), NextAuto: t.ctr.nextAuto.Load()})
		var werr error
		t.primary.Scan(func(r *Row) bool {
			buf = AppendOp(buf, &Op{Kind: OpInsert, Table: t.Name(), Row: r})
			werr = flush(false)
			return werr == nil
		})
		if werr != nil {
			return werr
		}
	}
	for _, key := range sortedKeys(cat.objects) {
		o := cat.objects[key]
		buf = AppendOp(buf, &Op{Kind: OpPutObject, ObjKind: o.Kind, ObjName: o.Name, Data: o.Data})
	}
	buf = journal.AppendFrame(buf, journal.FrameCommit, nil)
	if err := flush(true); err != nil || open.n == 0 {
		return err
	}
	if err := open.write(w); err != nil {
		return err
	}
	_, err := w.Write(journal.AppendFrame(nil, journal.FrameCommit, nil))
	return err
}

func sortedKeys(m map[string]*Object) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var errIncomplete = errors.New("incomplete checkpoint")

// frameReader reads journal frames one at a time from a stream.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
	off int64
}

// next returns the next frame; ok is false at a damaged or cut frame.
func (fr *frameReader) next() (typ journal.FrameType, payload []byte, ok bool, err error) {
	var hdr [journal.HeaderBytes]byte
	if _, err := io.ReadFull(fr.r, hdr[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, nil, false, nil
		}
		return 0, nil, false, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[0:4]))
	if n > journal.MaxPayloadBytes {
		return 0, nil, false, nil
	}
	if cap(fr.buf) < journal.HeaderBytes+n {
		fr.buf = make([]byte, journal.HeaderBytes+n)
	}
	fr.buf = fr.buf[:journal.HeaderBytes+n]
	copy(fr.buf, hdr[:])
	if _, err := io.ReadFull(fr.r, fr.buf[journal.HeaderBytes:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, nil, false, nil
		}
		return 0, nil, false, err
	}
	typ, payload, size, ok := journal.DecodeFrame(fr.buf)
	if !ok {
		return 0, nil, false, nil
	}
	fr.off += int64(size)
	return typ, payload, true, nil
}

// readCheckpoint rebuilds the catalog stored in a checkpoint file, reading
// it as a stream (a checkpoint can be as large as the database).
func readCheckpoint(fs vfs.FS, path string, bind Binder) (*Catalog, journal.LSN, error) {
	cat, lsn, _, err := readCheckpointFile(fs, path, bind)
	return cat, lsn, err
}

// readCheckpointFile is readCheckpoint that also returns the transactions
// open at the checkpoint's LSN, with their changes before it.
func readCheckpointFile(fs vfs.FS, path string, bind Binder) (*Catalog, journal.LSN, []openTxn, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	defer f.Close()
	fr := &frameReader{r: bufio.NewReaderSize(f, 1<<20)}
	typ, payload, ok, err := fr.next()
	if err != nil {
		return nil, 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	if !ok || typ != ckptHeader {
		return nil, 0, nil, fmt.Errorf("%s at offset 0: %w: bad header", path, errIncomplete)
	}
	d := &decoder{b: payload}
	lsn, seq := d.uvarint(), d.uvarint()
	nOpen := uint64(0)
	if len(d.b) > 0 {
		nOpen = d.uvarint()
	}
	if d.err != nil {
		return nil, 0, nil, fmt.Errorf("%s: header: %w", path, d.err)
	}
	if seq > verMask {
		return nil, 0, nil, fmt.Errorf("%s: header: commit sequence %d past the largest, %d", path, seq, uint64(verMask))
	}
	a := newApplier(newCatalog(), seq, bind)
	for {
		at := fr.off
		typ, payload, ok, err := fr.next()
		if err != nil {
			return nil, 0, nil, fmt.Errorf("%s at offset %d: %w", path, at, err)
		}
		if !ok {
			return nil, 0, nil, fmt.Errorf("%s at offset %d: %w: bad frame", path, at, errIncomplete)
		}
		if typ == journal.FrameCommit {
			break
		}
		op, err := DecodeOp(OpKind(typ), payload)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("%s at offset %d: %w", path, at, err)
		}
		if err := a.apply(op); err != nil {
			return nil, 0, nil, fmt.Errorf("%s at offset %d: %w", path, at, err)
		}
	}
	a.cat.seq = seq
	var open []openTxn
	cur := 0
	for nOpen > 0 {
		at := fr.off
		typ, payload, ok, err := fr.next()
		if err != nil {
			return nil, 0, nil, fmt.Errorf("%s at offset %d: %w", path, at, err)
		}
		if !ok {
			return nil, 0, nil, fmt.Errorf("%s at offset %d: %w: bad frame among the open transactions", path, at, errIncomplete)
		}
		switch {
		case typ == journal.FrameCommit:
			if len(open) != int(nOpen) {
				return nil, 0, nil, fmt.Errorf("%s at offset %d: %w: %d open transactions of %d", path, at, errIncomplete, len(open), nOpen)
			}
			nOpen = 0
		case typ == ckptOpen:
			d := &decoder{b: payload}
			txn, start := d.uvarint(), d.uvarint()
			if d.err != nil {
				return nil, 0, nil, fmt.Errorf("%s at offset %d: open transaction: %w", path, at, d.err)
			}
			// A transaction's frames come in runs, each after a
			// header: those of the open transactions interleave.
			k := slices.IndexFunc(open, func(o openTxn) bool { return o.txn == txn })
			if k < 0 {
				open = append(open, openTxn{txn: txn, start: journal.LSN(start)})
				k = len(open) - 1
			}
			cur = k
		case len(open) == 0 || typ.Ends():
			return nil, 0, nil, fmt.Errorf("%s at offset %d: %w: frame of type %d among the open transactions", path, at, ErrDecode, typ)
		default:
			op, err := DecodeOp(OpKind(typ), payload)
			if err != nil {
				return nil, 0, nil, fmt.Errorf("%s at offset %d: %w", path, at, err)
			}
			o := &open[cur]
			o.ops = append(o.ops, op)
		}
	}
	return a.cat, journal.LSN(lsn), open, nil
}
