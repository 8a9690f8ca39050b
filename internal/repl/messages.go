package repl

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/transport"
)

// Message types on a replication link (transport frame types).
//
//	secondary → primary
//	  Subscribe   epoch, advertised address, n, n × position, cascade (0/1),
//	              log store (0/1) (both optional)
//	  Ack         database, base id, epoch, written LSN, applied LSN
//	  Keepalive   (empty) answers each Heartbeat: the primary cuts a
//	              secondary silent for 15 s
//	primary → secondary
//	  NotPrimary  role, epoch, primary id   (then the link closes)
//	  Welcome     epoch, primary id
//	  Frames      database, start LSN, frames (the primary's journal bytes)
//	  SeedBegin   database, base id, quarantine (0/1), reason, common LSN
//	  SeedChunk   database, bytes of the copy
//	  SeedEnd     database, LSN of the copy
//	  Drop        database, quarantine (0/1)
//	  Heartbeat   n, n × position (log ends, no history), n, n × position
//	              (SYNCED_LSN: highest position confirmed to clients by
//	              semi-synchronous commit)   every second, and at once
//	              when SYNCED_LSN grows
//	  Accounts    users and grants (whole)
//	primary (or relay) → log-store node (logstore.go)
//	  LogBegin    database, base id, history, start LSN, quarantine (0/1),
//	              reason, common LSN: the database begins at start, no copy
//	  LogState    n × (position, retained LSN): the sender's log state, with
//	              each heartbeat (the borrowed horizon)
//	log-store node → follower
//	  CopyElsewhere database, reason, address of a node with tables: the
//	              follower needs a copy, which a log store cannot give
//	any node → any node (a link of its own)
//	  Probe       role, epoch, primary id: the sender's state; a promoted
//	              primary's announcement is a probe
//	  ProbeReply  role, epoch, primary id
//
//	position  = database, base id, history, journal end
//	history   = n, n × (epoch, node id, LSN)
//
// Integers are uvarints, strings and byte strings are length-prefixed.
// Epochs in every message go through epoch.Check before they are acted on.
const (
	msgSubscribe  transport.Type = 0x10
	msgNotPrimary transport.Type = 0x11
	msgWelcome    transport.Type = 0x12
	msgFrames     transport.Type = 0x13
	msgSeedBegin  transport.Type = 0x14
	msgSeedChunk  transport.Type = 0x15
	msgSeedEnd    transport.Type = 0x16
	msgDrop       transport.Type = 0x17
	msgHeartbeat  transport.Type = 0x18
	msgAccounts   transport.Type = 0x19
	msgAck        transport.Type = 0x1A
	msgProbe      transport.Type = 0x1B
	msgProbeReply transport.Type = 0x1C
	msgKeepalive  transport.Type = 0x1D
)

// ErrProtocol marks a message that does not decode: the link is closed.
var ErrProtocol = errors.New("repl: protocol violation")

type Position struct {
	Name   string
	BaseID []byte
	Hist   history.History
	LSN    uint64
}

type enc struct{ b []byte }

func (e *enc) u(v uint64)     { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) s(v string)     { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) by(v []byte)    { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) pos(p Position) { e.s(p.Name); e.by(p.BaseID); e.hist(p.Hist); e.u(p.LSN) }
func (e *enc) hist(h history.History) {
	e.u(uint64(len(h)))
	for _, m := range h {
		e.u(uint64(m.Epoch))
		e.s(m.Node)
		e.u(uint64(m.LSN))
	}
}
func (e *enc) flag(v bool) {
	if v {
		e.u(1)
	} else {
		e.u(0)
	}
}
func (e *enc) list(ps []Position) {
	e.u(uint64(len(ps)))
	for _, p := range ps {
		e.pos(p)
	}
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad integer", ErrProtocol)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) by() []byte {
	n := d.u()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: length %d beyond the message", ErrProtocol, n)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) s() string { return string(d.by()) }

func (d *dec) pos() Position {
	return Position{Name: d.s(), BaseID: append([]byte(nil), d.by()...), Hist: d.hist(), LSN: d.u()}
}

// maxHistoryMarks bounds an epoch history in one message: one mark per
// promotion that wrote to the database.
const maxHistoryMarks = 1 << 16

func (d *dec) hist() history.History {
	n := d.u()
	if n > maxHistoryMarks {
		d.err = fmt.Errorf("%w: %d epoch marks in one history", ErrProtocol, n)
		return nil
	}
	var h history.History
	for i := uint64(0); i < n && d.err == nil; i++ {
		h = append(h, history.Mark{Epoch: Epoch(d.u()), Node: d.s(), LSN: journal.LSN(d.u())})
	}
	if d.err == nil {
		if err := h.Check(); err != nil {
			d.err = fmt.Errorf("%w: %v", ErrProtocol, err)
		}
	}
	return h
}

func (d *dec) flag() bool {
	v := d.u()
	if d.err == nil && v > 1 {
		d.err = fmt.Errorf("%w: flag %d", ErrProtocol, v)
	}
	return v == 1
}

// maxListEntries bounds a list of databases in one message.
const maxListEntries = 1 << 16

func (d *dec) list() []Position {
	n := d.u()
	if n > maxListEntries {
		d.err = fmt.Errorf("%w: %d databases in one message", ErrProtocol, n)
		return nil
	}
	out := make([]Position, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		out = append(out, d.pos())
	}
	return out
}

func (d *dec) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", ErrProtocol, len(d.b))
	}
	return d.err
}
