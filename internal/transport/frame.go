package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame wire layout (every message between nodes, in both directions, inside
// the TLS stream):
//
//	 0               4       5
//	+---+---+---+---+-------+---------------- … ----+
//	|     length    | type  |       payload          |
//	+---+---+---+---+-------+---------------- … ----+
//	 uint32 big-endian        length bytes
//	 (payload bytes only,
//	  header excluded)
//
// type 0x00 is invalid; 0x01–0x0F belong to the transport (hello, ready,
// refuse); 0x10–0xFF are free for the layers above (replication, election…).
// A frame whose length exceeds the link's limit is never buffered: the link
// is closed as soon as the header has been read.

// Frame sizes.
const (
	// HeaderBytes is the size of the length and type fields.
	HeaderBytes = 5
	// DefaultMaxFrameBytes is the limit of every link (§17.2.5: 16 MiB).
	DefaultMaxFrameBytes = 16 << 20
	// MaxStreamFrameBytes is the most SetMaxFrame allows, for a secondary's
	// link with its primary and a catch-up the node initiated (§17.2.5:
	// 256 MiB, a log record can be large).
	MaxStreamFrameBytes = 256 << 20
	// minMaxFrameBytes keeps SetMaxFrame from starving the handshake frames
	// and small control messages.
	minMaxFrameBytes = 4 << 10
)

// Type is a frame's type byte.
type Type byte

// Frame types reserved by the transport.
const (
	typeInvalid Type = 0x00
	typeHello   Type = 0x01 // both ways: protocol version, cluster name, node id
	typeReady   Type = 0x02 // dialer → listener: hello accepted, link established
	typeRefuse  Type = 0x03 // either way: refusal code, then the link closes

	// FirstUserType is the lowest type Send accepts.
	FirstUserType Type = 0x10
)

// Frame is one decoded message.
type Frame struct {
	Type    Type
	Payload []byte
}

// Errors of frame decoding; a link that meets one is closed.
var (
	ErrFrameTooLarge = errors.New("transport: frame exceeds the link's limit")
	ErrFrameType     = errors.New("transport: invalid frame type")
)

// AppendFrame appends the encoding of one frame to dst.
func AppendFrame(dst []byte, typ Type, payload []byte) []byte {
	if uint64(len(payload)) > uint64(MaxStreamFrameBytes) {
		// Send checks the limit first; reaching here is a bug.
		panic(fmt.Sprintf("transport: AppendFrame: payload of %d bytes", len(payload)))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	dst = append(dst, byte(typ))
	return append(dst, payload...)
}

// ReadFrame reads one frame whose payload is at most maxPayload bytes. On
// ErrFrameTooLarge nothing beyond the header has been read. io.EOF means the
// stream ended cleanly between frames; io.ErrUnexpectedEOF inside one.
func ReadFrame(r io.Reader, maxPayload int) (Frame, error) {
	var hdr [HeaderBytes]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	typ := Type(hdr[4])
	if typ == typeInvalid {
		return Frame{}, fmt.Errorf("%w: 0x%02x", ErrFrameType, byte(typ))
	}
	if uint64(n) > uint64(maxPayload) {
		return Frame{Type: typ}, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n, maxPayload)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return Frame{Type: typ, Payload: payload}, nil
}
