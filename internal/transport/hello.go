package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// protocolVersion is the inter-node protocol this transport speaks.
// Version 2: subscriptions carry epoch histories, acks name the database
// identity and epoch, probes and announcements.
// Version 3: heartbeats announce SYNCED_LSN (semi-synchronous commit).
const protocolVersion = 3

// maxHelloBytes bounds the hello frame: a version, a cluster name (≤ 255
// bytes) and a node id (≤ 64 characters, ≤ 256 bytes in UTF-8).
const maxHelloBytes = 2 + 2 + 255 + 2 + 256

// Hello wire layout (payload of a typeHello frame):
//
//	 0       2       4              4+n     6+n
//	+-------+-------+---- … -------+-------+---- … ----+
//	|version| n     | cluster name | m     | node id   |
//	+-------+-------+---- … -------+-------+---- … ----+
//	 uint16  uint16  n bytes UTF-8  uint16  m bytes UTF-8
//	 (all big-endian)

// Hello is what each side declares at the start of a link.
type Hello struct {
	Version uint16
	Cluster string
	NodeID  string
}

// ErrMalformedHello marks a hello that does not follow the layout.
var ErrMalformedHello = errors.New("transport: malformed hello")

func (h Hello) encode() []byte {
	b := make([]byte, 0, 6+len(h.Cluster)+len(h.NodeID))
	b = binary.BigEndian.AppendUint16(b, h.Version)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.Cluster)))
	b = append(b, h.Cluster...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.NodeID)))
	b = append(b, h.NodeID...)
	if len(b) > maxHelloBytes {
		panic(fmt.Sprintf("transport: hello of %d bytes (cluster %q, node %q)", len(b), h.Cluster, h.NodeID))
	}
	return b
}

// DecodeHello parses a hello payload.
func DecodeHello(p []byte) (Hello, error) {
	var h Hello
	if len(p) > maxHelloBytes {
		return h, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformedHello, len(p), maxHelloBytes)
	}
	if len(p) < 2 {
		return h, fmt.Errorf("%w: truncated", ErrMalformedHello)
	}
	h.Version = binary.BigEndian.Uint16(p)
	p = p[2:]
	var err error
	if h.Cluster, p, err = readString(p); err != nil {
		return h, err
	}
	if h.NodeID, p, err = readString(p); err != nil {
		return h, err
	}
	if len(p) != 0 {
		return h, fmt.Errorf("%w: %d trailing bytes", ErrMalformedHello, len(p))
	}
	if h.NodeID == "" {
		return h, fmt.Errorf("%w: empty node id", ErrMalformedHello)
	}
	return h, nil
}

func readString(p []byte) (string, []byte, error) {
	if len(p) < 2 {
		return "", nil, fmt.Errorf("%w: truncated", ErrMalformedHello)
	}
	n := int(binary.BigEndian.Uint16(p))
	p = p[2:]
	if n > len(p) {
		return "", nil, fmt.Errorf("%w: string of %d bytes, %d left", ErrMalformedHello, n, len(p))
	}
	s := string(p[:n])
	if !utf8.ValidString(s) {
		return "", nil, fmt.Errorf("%w: invalid UTF-8", ErrMalformedHello)
	}
	return s, p[n:], nil
}

// RefuseCode is the reason a peer gives in a typeRefuse frame. Peers
// exchange codes, not strings.
type RefuseCode uint16

// Refusal codes.
const (
	RefuseUnknown       RefuseCode = 0
	RefuseVersion       RefuseCode = 1 // unsupported protocol version
	RefuseClusterName   RefuseCode = 2 // different cluster name
	RefuseIdentity      RefuseCode = 3 // declared id differs from the certificate's
	RefuseNotMember     RefuseCode = 4 // not in members
	RefuseMalformed     RefuseCode = 5 // malformed handshake
	RefuseWrongNode     RefuseCode = 6 // not the node the dialer asked for
	RefuseShuttingDown  RefuseCode = 7
	RefuseTooMany       RefuseCode = 8 // over the incoming connection limit
	refuseCodeSentinel  RefuseCode = 9 // first unassigned code
	refuseFramePayloadN            = 2
)

func (c RefuseCode) String() string {
	switch c {
	case RefuseVersion:
		return "unsupported protocol version"
	case RefuseClusterName:
		return "different cluster name"
	case RefuseIdentity:
		return "declared identity differs from the certificate"
	case RefuseNotMember:
		return "not in the member list"
	case RefuseMalformed:
		return "malformed handshake"
	case RefuseWrongNode:
		return "not the node that was dialled"
	case RefuseShuttingDown:
		return "node shutting down"
	case RefuseTooMany:
		return "too many inter-node connections"
	default:
		return fmt.Sprintf("refusal code %d", uint16(c))
	}
}

func refusePayload(c RefuseCode) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(c))
}

func decodeRefuse(p []byte) RefuseCode {
	if len(p) != refuseFramePayloadN {
		return RefuseUnknown
	}
	c := RefuseCode(binary.BigEndian.Uint16(p))
	if c >= refuseCodeSentinel {
		return RefuseUnknown
	}
	return c
}
