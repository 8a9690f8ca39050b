package journal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Frame layout on disk (little endian):
//
//	 0        4      5          9
//	+--------+------+----------+----------------------+
//	| length | type | crc32c   | payload (length B)   |
//	| uint32 | u8   | uint32   |                      |
//	+--------+------+----------+----------------------+
//
// The CRC-32C (Castagnoli) covers the length, the type and the payload, so a
// flipped bit in the length is caught like one in the payload. The LSN of a
// frame is the byte position of its first header byte in the database's log.
const (
	// HeaderBytes is the size of a frame header.
	HeaderBytes = 9
	// MaxPayloadBytes bounds one frame: a row image or a table definition
	// never comes near it, and a length above it is treated as corruption
	// rather than as a request to allocate gigabytes.
	MaxPayloadBytes = 64 << 20
)

// FrameType tells what a frame carries. The journal itself only knows the
// two ends of a transaction, FrameCommit and FrameAbort; the other values
// belong to storage.
type FrameType uint8

const (
	// FrameCommit ends a transaction that took effect. Its payload is the
	// transaction's id (a uvarint; empty in a checkpoint).
	FrameCommit FrameType = 1
	// FrameAbort ends a transaction whose frames are void (a transaction
	// whose frames were written before its end was known, rolled back).
	FrameAbort FrameType = 2
)

// Ends reports whether typ ends a transaction. Recovery keeps the log up to
// the last frame that does: what follows belongs to transactions that never
// ended.
func (t FrameType) Ends() bool { return t == FrameCommit || t == FrameAbort }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendFrame appends one encoded frame to buf and returns the extended buffer.
func AppendFrame(buf []byte, typ FrameType, payload []byte) []byte {
	if len(payload) > MaxPayloadBytes {
		panic(fmt.Sprintf("journal: frame payload of %d bytes exceeds %d", len(payload), MaxPayloadBytes))
	}
	var h [HeaderBytes]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	h[4] = byte(typ)
	crc := crc32.Update(0, castagnoli, h[0:5])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[5:9], crc)
	buf = append(buf, h[:]...)
	return append(buf, payload...)
}

// BeginFrame appends room for a frame's header to buf and returns where the
// frame starts: the caller appends the payload, then EndFrame completes the
// frame. The payload is encoded where the frame goes, without a buffer of
// its own.
func BeginFrame(buf []byte) (out []byte, at int) {
	return append(buf, make([]byte, HeaderBytes)...), len(buf)
}

// EndFrame fills in the header of the frame of type typ begun at at (see
// BeginFrame), whose payload is the rest of buf.
func EndFrame(buf []byte, at int, typ FrameType) []byte {
	h, payload := buf[at:at+HeaderBytes], buf[at+HeaderBytes:]
	if len(payload) > MaxPayloadBytes {
		panic(fmt.Sprintf("journal: frame payload of %d bytes exceeds %d", len(payload), MaxPayloadBytes))
	}
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	h[4] = byte(typ)
	crc := crc32.Update(0, castagnoli, h[0:5])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[5:9], crc)
	return buf
}

// DecodeFrame reads the frame at the start of b. It returns the frame's type,
// payload (aliasing b) and total size. ok is false when b does not start with
// a complete, valid frame (too short, length out of range, or bad CRC).
func DecodeFrame(b []byte) (typ FrameType, payload []byte, size int, ok bool) {
	if len(b) < HeaderBytes {
		return 0, nil, 0, false
	}
	n := binary.LittleEndian.Uint32(b[0:4])
	if n > MaxPayloadBytes || int(n) > len(b)-HeaderBytes {
		return 0, nil, 0, false
	}
	crc := crc32.Update(0, castagnoli, b[0:5])
	crc = crc32.Update(crc, castagnoli, b[HeaderBytes:HeaderBytes+int(n)])
	if crc != binary.LittleEndian.Uint32(b[5:9]) {
		return 0, nil, 0, false
	}
	return FrameType(b[4]), b[HeaderBytes : HeaderBytes+int(n)], HeaderBytes + int(n), true
}
