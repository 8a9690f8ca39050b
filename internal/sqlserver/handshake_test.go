package sqlserver

import (
	"encoding/binary"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

func goodHandshake(flags uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, flags)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 45)
	b = append(b, make([]byte, 23)...)
	b = append(b, "root\x00"...)
	switch {
	case flags&mysql.CapabilityClientPluginAuthLenencClientData != 0:
		b = append(b, 3, 'a', 'b', 'c')
	case flags&mysql.CapabilityClientSecureConnection != 0:
		b = append(b, 2, 'a', 'b')
	default:
		b = append(b, "ab\x00"...)
	}
	if flags&mysql.CapabilityClientConnectWithDB != 0 {
		b = append(b, "shop\x00"...)
	}
	if flags&mysql.CapabilityClientPluginAuth != 0 {
		b = append(b, "mysql_native_password\x00"...)
	}
	return b
}

// Every layout of a good response passes; every cut of one is refused.
func TestCheckHandshakeResponse(t *testing.T) {
	base := uint32(mysql.CapabilityClientProtocol41)
	for _, flags := range []uint32{
		base, base | mysql.CapabilityClientSecureConnection, base | mysql.CapabilityClientPluginAuthLenencClientData,
		base | mysql.CapabilityClientSecureConnection | mysql.CapabilityClientConnectWithDB | mysql.CapabilityClientPluginAuth,
		base | mysql.CapabilityClientPluginAuthLenencClientData | mysql.CapabilityClientConnectWithDB | mysql.CapabilityClientPluginAuth,
	} {
		good := goodHandshake(flags)
		if err := checkHandshakeResponse(good); err != nil {
			t.Errorf("flags %#x: good response refused: %v", flags, err)
		}
		for n := 0; n < len(good); n++ {
			if err := checkHandshakeResponse(good[:n]); err == nil {
				t.Errorf("flags %#x: response cut at %d of %d bytes passes", flags, n, len(good))
			}
		}
	}
	if err := checkHandshakeResponse(goodHandshake(mysql.CapabilityClientSecureConnection)); err == nil {
		t.Errorf("a pre-4.1 response passes")
	}
	huge := append(goodHandshake(base | mysql.CapabilityClientPluginAuthLenencClientData)[:37], 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)
	if err := checkHandshakeResponse(huge); err == nil {
		t.Errorf("an auth response length of 2^63 passes")
	}
}

// FuzzCheckHandshakeResponse: the check never panics, and a response it
// passes has its user name terminated inside the packet (what vitess'
// parser reads without a bounds check).
func FuzzCheckHandshakeResponse(f *testing.F) {
	f.Add(goodHandshake(mysql.CapabilityClientProtocol41 | mysql.CapabilityClientSecureConnection | mysql.CapabilityClientPluginAuth))
	f.Add(goodHandshake(mysql.CapabilityClientProtocol41 | mysql.CapabilityClientPluginAuthLenencClientData | mysql.CapabilityClientConnectWithDB))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkHandshakeResponse(b) != nil {
			return
		}
		if len(b) < handshakeFixedBytes {
			t.Fatalf("a response of %d bytes passes", len(b))
		}
		found := false
		for _, c := range b[handshakeFixedBytes:] {
			if c == 0 {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("a response without a terminated user name passes")
		}
	})
}
