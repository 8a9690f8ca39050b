package sqlserver

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// The info string of an OK packet (Records: 3  Duplicates: 0  Warnings: 0,
// Rows matched: 1  Changed: 1  Warnings: 0, Statement prepared) is a
// length-encoded string after the warning count. vitess writes a '#' in
// place of its length (the byte an error packet has before its SQLSTATE),
// which clients read as a length of 35: MariaDB's client took a longer
// info as it was and called a shorter one a malformed packet (2027), so
// PREPARE … FROM '…' failed in every client that checks. The connection
// (clientConn) puts the length there as it writes the packet: the result
// tells it what the packet holds, and it changes the one byte of the
// packet that has exactly that shape.

// maxOKInfo keeps the length of an info string one byte long.
const maxOKInfo = 250

// okInfoFix is an OK packet a connection is about to write and the bytes
// to put in it: the length of its info, or its warning count.
type okInfoFix struct {
	hashAt  int    // offset of the bytes to change from the packet's header
	size    int    // payload length
	payload []byte // the payload's first bytes: 0x00 and the two counts
	tail    []byte // the packet's bytes from hashAt on: '#' and the info
	put     []byte // what goes at hashAt
	// once: the packet is the next write's or never (a prepared
	// statement's, alone in its response); not kept waiting after.
	once bool
}

// fixOKInfo readies c's connection to correct the OK packet of r (no
// columns, an info string), shortening an info that would not fit in a
// one-byte length. The connection sees the packets in the clear, TLS or
// not (tlsconn.go).
func fixOKInfo(c *mysql.Conn, r *sqltypes.Result) {
	if len(r.Info) > maxOKInfo {
		r.Info = r.Info[:maxOKInfo]
	}
	cc := clientOf(c.Conn)
	if cc == nil {
		return
	}
	head := append([]byte{0}, lenEncInt(r.RowsAffected)...)
	head = append(head, lenEncInt(r.InsertID)...)
	cc.okFixes.add(&okInfoFix{
		hashAt:  4 + len(head) + 4,
		size:    len(head) + 4 + 1 + len(r.Info),
		payload: head,
		tail:    append([]byte{'#'}, r.Info...),
		put:     []byte{byte(len(r.Info))},
	})
}

// fixOKWarnings readies c's connection to put the warning count in the OK
// packet that ends a prepared statement without a result set (r), whose
// status flags are flags: vitess writes 0 there, where MariaDB counts the
// statement's warnings, and drivers read the count to decide whether to
// ask for them (Connector/J's getWarnings, mysql-connector-python's
// warning_count).
func fixOKWarnings(c *mysql.Conn, r *sqltypes.Result, flags, warnings uint16) {
	cc := clientOf(c.Conn)
	if cc == nil || warnings == 0 {
		return
	}
	cc.okFixes.add(okWarningsFix(r.RowsAffected, r.InsertID, flags, warnings))
}

// okWarningsFix puts warnings in the OK packet vitess writes for a prepared
// statement's result of affected rows, insertID and flags.
func okWarningsFix(affected, insertID uint64, flags, warnings uint16) *okInfoFix {
	head := append([]byte{0}, lenEncInt(affected)...)
	head = append(head, lenEncInt(insertID)...)
	head = append(head, byte(flags), byte(flags>>8))
	return &okInfoFix{
		hashAt:  4 + len(head),
		size:    len(head) + 2,
		payload: head,
		tail:    []byte{0, 0},
		put:     []byte{byte(warnings), byte(warnings >> 8)},
		once:    true,
	}
}

// maxPendingOKFixes bounds the packets a connection waits to correct: a
// response of many statements writes their OK packets at once; one never
// seen (split over two writes) is given up.
const maxPendingOKFixes = 64

// okInfoFixes are the OK packets a connection is to correct, in order.
type okInfoFixes struct {
	n       atomic.Int32 // len(pending): writes without a fix take no lock
	mu      sync.Mutex
	pending []*okInfoFix
}

func (fs *okInfoFixes) add(f *okInfoFix) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.pending) == maxPendingOKFixes {
		fs.pending = fs.pending[1:]
	}
	fs.pending = append(fs.pending, f)
	fs.n.Store(int32(len(fs.pending)))
}

// apply returns p with the pending packets it holds corrected.
func (fs *okInfoFixes) apply(p []byte) []byte {
	if fs.n.Load() == 0 {
		return p
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.pending) == 0 {
		return p
	}
	kept := fs.pending[:0]
	for _, f := range fs.pending {
		if fixed, ok := f.patch(p); ok {
			p = fixed
			continue
		}
		if !f.once {
			kept = append(kept, f)
		}
	}
	clear(fs.pending[len(kept):])
	fs.pending = kept
	fs.n.Store(int32(len(kept)))
	return p
}

// patch returns p with the packet f describes corrected, and whether p
// held it. p is not changed. The packet is most often the last of p (the
// whole response to a statement), which is looked at first.
func (f *okInfoFix) patch(p []byte) ([]byte, bool) {
	if start := len(p) - 4 - f.size; start >= 0 && f.holdsAt(p, start) {
		return f.fixed(p, start+f.hashAt), true
	}
	for from := 0; from < len(p); {
		i := bytes.Index(p[from:], f.tail)
		if i < 0 {
			return p, false
		}
		i += from
		from = i + 1
		if start := i - f.hashAt; start >= 0 && f.holdsAt(p, start) {
			return f.fixed(p, i), true
		}
	}
	return p, false
}

// holdsAt reports whether the packet f describes starts at p[start].
func (f *okInfoFix) holdsAt(p []byte, start int) bool {
	end := start + 4 + f.size
	if end > len(p) || int(p[start])|int(p[start+1])<<8|int(p[start+2])<<16 != f.size {
		return false
	}
	return bytes.HasPrefix(p[start+4:], f.payload) && bytes.Equal(p[start+f.hashAt:end], f.tail)
}

// fixed returns a copy of p with f's bytes written at p[at].
func (f *okInfoFix) fixed(p []byte, at int) []byte {
	out := bytes.Clone(p)
	copy(out[at:], f.put)
	return out
}

// lenEncInt is MySQL's length-encoded integer.
func lenEncInt(v uint64) []byte {
	switch {
	case v < 251:
		return []byte{byte(v)}
	case v < 1<<16:
		return []byte{0xfc, byte(v), byte(v >> 8)}
	case v < 1<<24:
		return []byte{0xfd, byte(v), byte(v >> 8), byte(v >> 16)}
	}
	return []byte{0xfe, byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24), byte(v >> 32), byte(v >> 40), byte(v >> 48), byte(v >> 56)}
}
