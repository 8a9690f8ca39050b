package sqlserver

import (
	"bytes"
	"fmt"

	"github.com/dolthub/vitess/go/mysql"
)

// The client's handshake response, checked before vitess parses it.
//
// vitess' parser (parseClientHandshakePacket) reads some fields without a
// bounds check: a response cut after the 32 fixed bytes, or a length that
// points past the packet, panics in readNullString or readBytesCopy; the
// listener recovers and logs a stack trace, and the client gets no answer.
// A response is therefore walked here first, field by field, as MySQL
// lays it out; one that does not hold together is refused with MySQL's
// answer to a bad handshake (1043, SQLSTATE 08S01) and the connection
// closed.
//
// Layout (HandshakeResponse41, payload):
//
//	[capabilities:4] [max packet:4] [charset:1] [reserved:23]
//	[user: NUL-terminated]
//	[auth response: lenenc length + bytes  (CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
//	              | 1-byte length + bytes  (CLIENT_SECURE_CONNECTION)
//	              | NUL-terminated         (otherwise)]
//	[database: NUL-terminated]             (CLIENT_CONNECT_WITH_DB)
//	[auth plugin: NUL-terminated]          (CLIENT_PLUGIN_AUTH)
//	[attributes: lenenc total, then key and value pairs]  (CLIENT_CONNECT_ATTRS, not checked)

// errHandshake is MySQL's ER_HANDSHAKE_ERROR.
const errHandshake = 1043

// handshakeFixedBytes is the fixed part of HandshakeResponse41.
const handshakeFixedBytes = 32

// errBadHandshake is MySQL's answer to a handshake response it cannot read.
func errBadHandshake() *mysql.SQLError {
	return mysql.NewSQLError(errHandshake, mysql.SSNetError, "Bad handshake")
}

// checkHandshakeResponse returns why payload, a client's handshake response
// (after the TLS switch if any), cannot be read, or nil.
func checkHandshakeResponse(payload []byte) error {
	if len(payload) < handshakeFixedBytes {
		return fmt.Errorf("%d bytes, fewer than the %d of the fixed part", len(payload), handshakeFixedBytes)
	}
	flags := uint32(payload[0]) | uint32(payload[1])<<8 | uint32(payload[2])<<16 | uint32(payload[3])<<24
	if flags&mysql.CapabilityClientProtocol41 == 0 {
		return fmt.Errorf("capabilities %#x without CLIENT_PROTOCOL_41 (a pre-4.1 client)", flags)
	}
	p := payload[handshakeFixedBytes:]
	nulString := func(what string) error {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return fmt.Errorf("%s not terminated", what)
		}
		p = p[i+1:]
		return nil
	}
	counted := func(what string, n uint64) error {
		if n > uint64(len(p)) {
			return fmt.Errorf("%s of %d bytes, %d left in the packet", what, n, len(p))
		}
		p = p[n:]
		return nil
	}
	if err := nulString("user name"); err != nil {
		return err
	}
	switch {
	case flags&mysql.CapabilityClientPluginAuthLenencClientData != 0:
		n, rest, ok := lenenc(p)
		if !ok {
			return fmt.Errorf("auth response length cut off")
		}
		p = rest
		if err := counted("auth response", n); err != nil {
			return err
		}
	case flags&mysql.CapabilityClientSecureConnection != 0:
		if len(p) == 0 {
			return fmt.Errorf("auth response length missing")
		}
		n := uint64(p[0])
		p = p[1:]
		if err := counted("auth response", n); err != nil {
			return err
		}
	default:
		if err := nulString("auth response"); err != nil {
			return err
		}
	}
	if flags&mysql.CapabilityClientConnectWithDB != 0 {
		if err := nulString("database name"); err != nil {
			return err
		}
	}
	if flags&mysql.CapabilityClientPluginAuth != 0 {
		if err := nulString("auth plugin name"); err != nil {
			return err
		}
	}
	// The connection attributes that may follow are read by vitess with
	// bounds checks (a bad one is logged and ignored).
	return nil
}

// lenenc reads a length-encoded integer at the start of b.
func lenenc(b []byte) (uint64, []byte, bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	size := 0
	switch b[0] {
	case 0xfc:
		size = 2
	case 0xfd:
		size = 3
	case 0xfe:
		size = 8
	case 0xfb, 0xff:
		return 0, nil, false
	default:
		return uint64(b[0]), b[1:], true
	}
	if len(b) < 1+size {
		return 0, nil, false
	}
	var n uint64
	for i := size; i >= 1; i-- {
		n = n<<8 | uint64(b[i])
	}
	return n, b[1+size:], true
}
