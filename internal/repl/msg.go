package repl

import (
	"fmt"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/transport"
)

// The messages of messages.go and catchup.go as values: the core (core.go)
// encodes every message it sends and decodes every one it is given, so the
// simulator, which carries the bytes, exercises the wire format the server
// speaks. Formats are the ones listed in messages.go and catchup.go.

// MsgAck is the type of an acknowledgement (the simulator records them as
// they are sent).
const MsgAck = msgAck

// MsgPositions is the type of a promotion's question of positions (the
// simulator's checkers note what the peer holds as it answers).
const MsgPositions = msgPositions

// MsgVote and MsgVoteReply are raft mode's question and answer (the
// simulator's checker "vote rule" reads them as they pass).
const (
	MsgVote      = msgVote
	MsgVoteReply = msgVoteReply
)

// Msg is one decoded message.
type Msg interface {
	Type() transport.Type
	encode(e *enc)
}

type (
	SubscribeMsg struct {
		Epoch     Epoch
		Advertise string
		Positions []Position
		// Cascade: the subscriber asks to stream from this node even if
		// it is a secondary (its configured upstream). Optional on the
		// wire (absent from older nodes: false).
		Cascade bool
		// LogStore: the subscriber is a log-store node (kind =
		// "log-store"): it takes no copies (LogBegin instead) and its
		// acknowledgements never count as applied. Optional on the wire.
		LogStore bool
	}
	NotPrimaryMsg struct {
		Role    Role
		Epoch   Epoch
		Primary string
		// PrimaryAddr: where the sender reaches its primary ("": not
		// known). Optional on the wire (absent from older nodes).
		PrimaryAddr string
	}
	WelcomeMsg struct {
		Epoch   Epoch
		Primary string
		// Relay: the sender is not Primary but a secondary of it that
		// relays its log (a cascade). Optional on the wire.
		Relay bool
	}
	FramesMsg struct {
		DB     string
		Start  journal.LSN
		Frames []byte
	}
	SeedBeginMsg struct {
		DB         string
		BaseID     []byte
		Quarantine bool
		Reason     string
		Common     journal.LSN
	}
	SeedChunkMsg struct {
		DB   string
		Data []byte
	}
	SeedEndMsg struct {
		DB  string
		LSN journal.LSN
	}
	DropMsg struct {
		DB         string
		Quarantine bool
	}
	HeartbeatMsg struct {
		Ends   []Position // log ends, no history
		Synced []Position // SYNCED_LSN per database
	}
	AccountsMsg struct{ Data []byte }
	AckMsg      struct {
		DB               string
		BaseID           []byte
		Epoch            Epoch
		Written, Applied journal.LSN
	}
	KeepaliveMsg struct{}
	// ProbeMsg and ProbeReplyMsg carry the sender's PeerState: its ID is
	// not sent (the transport proves it), its Addr is its advertised
	// address (optional on the wire: absent from older nodes), so that a
	// node told of a new primary can dial it at once.
	ProbeMsg        struct{ State PeerState }
	ProbeReplyMsg   struct{ State PeerState }
	PositionsMsg    struct{}
	PositionsAreMsg struct{ DBs []PeerDB }
	CatchUpMsg      struct {
		DB       string
		BaseID   []byte
		From, To journal.LSN
	}
	CatchUpEndMsg struct {
		DB  string
		End journal.LSN
	}
	// VoteMsg asks for a vote (or, Pre, whether the member would give
	// one) at Term (§17.9.2); DBs are the candidate's databases with
	// their epoch marks and journal ends.
	VoteMsg struct {
		Cluster   string
		Term      Epoch
		Pre       bool
		Transfer  bool
		Advertise string
		DBs       []Position
	}
	// VoteReplyMsg answers it: Term is the voter's term after the
	// question; a granted real vote carries the voter's positions (the
	// elected node catches up from them); a refusal its reason.
	VoteReplyMsg struct {
		Term    Epoch
		Pre     bool
		Granted bool
		Reason  string
		DBs     []PeerDB
	}
	// LogBeginMsg starts a database on a log-store follower without a
	// copy: it adopts the base id and the epoch marks before Start, and
	// its journal begins at Start, the oldest position the sender
	// retains; Frames from Start follow. Quarantine, Reason and Common
	// are a SeedBegin's (the follower's journal diverged).
	LogBeginMsg struct {
		DB         string
		BaseID     []byte
		Hist       history.History
		Start      journal.LSN
		Quarantine bool
		Reason     string
		Common     journal.LSN
	}
	// LogStateMsg is the sender's log state, sent with each heartbeat to
	// a log-store follower only (the borrowed state): per database its
	// base id, epoch marks, committed end, and the oldest position it
	// retains, which the log store keeps at least.
	LogStateMsg struct{ DBs []PeerDB }
	// CopyElsewhereMsg tells a follower that the log-store node it
	// subscribed to cannot serve it: database DB needs a full copy,
	// which a node with tables gives (Addr: one, "" if none is known).
	CopyElsewhereMsg struct {
		DB     string
		Reason string
		Addr   string
	}
)

func (SubscribeMsg) Type() transport.Type     { return msgSubscribe }
func (NotPrimaryMsg) Type() transport.Type    { return msgNotPrimary }
func (WelcomeMsg) Type() transport.Type       { return msgWelcome }
func (FramesMsg) Type() transport.Type        { return msgFrames }
func (SeedBeginMsg) Type() transport.Type     { return msgSeedBegin }
func (SeedChunkMsg) Type() transport.Type     { return msgSeedChunk }
func (SeedEndMsg) Type() transport.Type       { return msgSeedEnd }
func (DropMsg) Type() transport.Type          { return msgDrop }
func (HeartbeatMsg) Type() transport.Type     { return msgHeartbeat }
func (AccountsMsg) Type() transport.Type      { return msgAccounts }
func (AckMsg) Type() transport.Type           { return msgAck }
func (KeepaliveMsg) Type() transport.Type     { return msgKeepalive }
func (ProbeMsg) Type() transport.Type         { return msgProbe }
func (ProbeReplyMsg) Type() transport.Type    { return msgProbeReply }
func (PositionsMsg) Type() transport.Type     { return msgPositions }
func (PositionsAreMsg) Type() transport.Type  { return msgPositionsAre }
func (CatchUpMsg) Type() transport.Type       { return msgCatchUp }
func (CatchUpEndMsg) Type() transport.Type    { return msgCatchUpEnd }
func (VoteMsg) Type() transport.Type          { return msgVote }
func (VoteReplyMsg) Type() transport.Type     { return msgVoteReply }
func (LogBeginMsg) Type() transport.Type      { return msgLogBegin }
func (LogStateMsg) Type() transport.Type      { return msgLogState }
func (CopyElsewhereMsg) Type() transport.Type { return msgCopyElsewhere }

func (m SubscribeMsg) encode(e *enc) {
	e.u(uint64(m.Epoch))
	e.s(m.Advertise)
	e.list(m.Positions)
	e.flag(m.Cascade)
	e.flag(m.LogStore)
}
func (m NotPrimaryMsg) encode(e *enc) {
	e.s(string(m.Role))
	e.u(uint64(m.Epoch))
	e.s(m.Primary)
	e.s(m.PrimaryAddr)
}
func (m WelcomeMsg) encode(e *enc) { e.u(uint64(m.Epoch)); e.s(m.Primary); e.flag(m.Relay) }
func (m FramesMsg) encode(e *enc) {
	e.s(m.DB)
	e.u(uint64(m.Start))
	e.b = append(e.b, m.Frames...)
}
func (m SeedBeginMsg) encode(e *enc) {
	e.s(m.DB)
	e.by(m.BaseID)
	e.flag(m.Quarantine)
	e.s(m.Reason)
	e.u(uint64(m.Common))
}
func (m SeedChunkMsg) encode(e *enc) { e.s(m.DB); e.b = append(e.b, m.Data...) }
func (m SeedEndMsg) encode(e *enc)   { e.s(m.DB); e.u(uint64(m.LSN)) }
func (m DropMsg) encode(e *enc)      { e.s(m.DB); e.flag(m.Quarantine) }
func (m HeartbeatMsg) encode(e *enc) { e.list(m.Ends); e.list(m.Synced) }
func (m AccountsMsg) encode(e *enc)  { e.b = append(e.b, m.Data...) }
func (m AckMsg) encode(e *enc) {
	e.s(m.DB)
	e.by(m.BaseID)
	e.u(uint64(m.Epoch))
	e.u(uint64(m.Written))
	e.u(uint64(m.Applied))
}
func (KeepaliveMsg) encode(*enc)      {}
func (m ProbeMsg) encode(e *enc)      { encodeState(e, m.State) }
func (m ProbeReplyMsg) encode(e *enc) { encodeState(e, m.State) }
func (PositionsMsg) encode(*enc)      {}
func (m PositionsAreMsg) encode(e *enc) {
	e.u(uint64(len(m.DBs)))
	for _, d := range m.DBs {
		e.pos(d.Position)
		e.u(uint64(d.Retained))
	}
}
func (m CatchUpMsg) encode(e *enc) {
	e.s(m.DB)
	e.by(m.BaseID)
	e.u(uint64(m.From))
	e.u(uint64(m.To))
}
func (m CatchUpEndMsg) encode(e *enc) { e.s(m.DB); e.u(uint64(m.End)) }
func (m VoteMsg) encode(e *enc) {
	e.s(m.Cluster)
	e.u(uint64(m.Term))
	e.flag(m.Pre)
	e.flag(m.Transfer)
	e.s(m.Advertise)
	e.list(m.DBs)
}
func (m VoteReplyMsg) encode(e *enc) {
	e.u(uint64(m.Term))
	e.flag(m.Pre)
	e.flag(m.Granted)
	e.s(m.Reason)
	PositionsAreMsg{DBs: m.DBs}.encode(e)
}

func (m LogBeginMsg) encode(e *enc) {
	e.s(m.DB)
	e.by(m.BaseID)
	e.hist(m.Hist)
	e.u(uint64(m.Start))
	e.flag(m.Quarantine)
	e.s(m.Reason)
	e.u(uint64(m.Common))
}
func (m LogStateMsg) encode(e *enc)      { PositionsAreMsg{DBs: m.DBs}.encode(e) }
func (m CopyElsewhereMsg) encode(e *enc) { e.s(m.DB); e.s(m.Reason); e.s(m.Addr) }

func encodeState(e *enc, s PeerState) {
	e.s(string(s.Role))
	e.u(uint64(s.Epoch))
	e.s(s.Primary)
	e.u(s.Flags)
	e.u(uint64(max(s.Lag, 0)))
	e.s(s.Addr)
}

// EncodeMsg returns m's payload.
func EncodeMsg(m Msg) []byte {
	e := &enc{}
	m.encode(e)
	return e.b
}

// DecodeMsg decodes a payload of type typ; anything malformed, trailing or
// of an unknown type is ErrProtocol. Byte strings of the result are copies
// only where the message is kept (positions' base ids); frames and chunks
// alias payload.
func DecodeMsg(typ transport.Type, payload []byte) (Msg, error) {
	d := &dec{b: payload}
	var m Msg
	switch typ {
	case msgSubscribe:
		sm := SubscribeMsg{Epoch: Epoch(d.u()), Advertise: d.s(), Positions: d.list()}
		if len(d.b) > 0 {
			sm.Cascade = d.flag()
		}
		if len(d.b) > 0 {
			sm.LogStore = d.flag()
		}
		m = sm
	case msgNotPrimary:
		np := NotPrimaryMsg{Role: Role(d.s()), Epoch: Epoch(d.u()), Primary: d.s()}
		if len(d.b) > 0 {
			np.PrimaryAddr = d.s()
		}
		m = np
	case msgWelcome:
		wm := WelcomeMsg{Epoch: Epoch(d.u()), Primary: d.s()}
		if len(d.b) > 0 {
			wm.Relay = d.flag()
		}
		m = wm
	case msgFrames:
		f := FramesMsg{DB: d.s(), Start: journal.LSN(d.u())}
		f.Frames, d.b = d.b, nil
		m = f
	case msgSeedBegin:
		m = SeedBeginMsg{DB: d.s(), BaseID: append([]byte(nil), d.by()...), Quarantine: d.flag(), Reason: d.s(), Common: journal.LSN(d.u())}
	case msgSeedChunk:
		c := SeedChunkMsg{DB: d.s()}
		c.Data, d.b = d.b, nil
		m = c
	case msgSeedEnd:
		m = SeedEndMsg{DB: d.s(), LSN: journal.LSN(d.u())}
	case msgDrop:
		m = DropMsg{DB: d.s(), Quarantine: d.flag()}
	case msgHeartbeat:
		m = HeartbeatMsg{Ends: d.list(), Synced: d.list()}
	case msgAccounts:
		m = AccountsMsg{Data: payload}
		d.b = nil
	case msgAck:
		m = AckMsg{DB: d.s(), BaseID: append([]byte(nil), d.by()...), Epoch: Epoch(d.u()), Written: journal.LSN(d.u()), Applied: journal.LSN(d.u())}
	case msgKeepalive:
		m = KeepaliveMsg{}
	case msgProbe:
		m = ProbeMsg{State: decodeStateFrom(d)}
	case msgProbeReply:
		m = ProbeReplyMsg{State: decodeStateFrom(d)}
	case msgPositions:
		m = PositionsMsg{}
	case msgPositionsAre:
		m = PositionsAreMsg{DBs: d.peerDBs()}
	case msgCatchUp:
		m = CatchUpMsg{DB: d.s(), BaseID: append([]byte(nil), d.by()...), From: journal.LSN(d.u()), To: journal.LSN(d.u())}
	case msgCatchUpEnd:
		m = CatchUpEndMsg{DB: d.s(), End: journal.LSN(d.u())}
	case msgVote:
		m = VoteMsg{Cluster: d.s(), Term: Epoch(d.u()), Pre: d.flag(), Transfer: d.flag(), Advertise: d.s(), DBs: d.list()}
	case msgVoteReply:
		m = VoteReplyMsg{Term: Epoch(d.u()), Pre: d.flag(), Granted: d.flag(), Reason: d.s(), DBs: d.peerDBs()}
	case msgLogBegin:
		m = LogBeginMsg{DB: d.s(), BaseID: append([]byte(nil), d.by()...), Hist: d.hist(), Start: journal.LSN(d.u()),
			Quarantine: d.flag(), Reason: d.s(), Common: journal.LSN(d.u())}
	case msgLogState:
		m = LogStateMsg{DBs: d.peerDBs()}
	case msgCopyElsewhere:
		m = CopyElsewhereMsg{DB: d.s(), Reason: d.s(), Addr: d.s()}
	default:
		return nil, fmt.Errorf("%w: message type %#x", ErrProtocol, int(typ))
	}
	if err := d.end(); err != nil {
		return nil, fmt.Errorf("message type %#x: %w", int(typ), err)
	}
	return m, nil
}

// peerDBs reads a PositionsAre list.
func (d *dec) peerDBs() []PeerDB {
	k := d.u()
	if k > maxListEntries {
		d.err = fmt.Errorf("%w: %d databases in one message", ErrProtocol, k)
		return nil
	}
	var out []PeerDB
	for j := uint64(0); j < k && d.err == nil; j++ {
		out = append(out, PeerDB{Position: d.pos(), Retained: journal.LSN(d.u())})
	}
	return out
}

func decodeStateFrom(d *dec) PeerState {
	s := PeerState{Role: Role(d.s()), Epoch: Epoch(d.u()), Primary: d.s(), Flags: d.u(), Lag: int64(d.u())}
	if len(d.b) > 0 {
		s.Addr = d.s()
	}
	return s
}
