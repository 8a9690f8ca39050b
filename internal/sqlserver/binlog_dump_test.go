package sqlserver

import "testing"

// FuzzParseRegisterSlave: COM_REGISTER_SLAVE comes from any client.
func FuzzParseRegisterSlave(f *testing.F) {
	f.Add([]byte{0x15, 2, 0, 0, 0, 1, 'h', 0, 0, 0x0c, 0x0c, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte{0x15, 2, 0})
	f.Fuzz(func(t *testing.T, cmd []byte) {
		if len(cmd) == 0 {
			return
		}
		h, err := parseRegisterSlave(cmd)
		if err == nil && len(h.Host) > registerFieldMax {
			t.Fatalf("host of %d bytes", len(h.Host))
		}
	})
}

func TestParseRegisterSlave(t *testing.T) {
	h, err := parseRegisterSlave([]byte{0x15, 2, 0, 0, 0, 4, 'h', 'o', 's', 't', 1, 'u', 0, 0x0c, 0x0c, 0, 0, 0, 0, 1, 0, 0, 0})
	if err != nil || h.ServerID != 2 || h.Host != "host" || h.Port != 0x0c0c || h.MasterID != 1 {
		t.Fatalf("%+v %v", h, err)
	}
	if _, err := parseRegisterSlave([]byte{0x15, 2, 0, 0, 0, 9, 'h'}); err == nil {
		t.Fatal("a host length past the end was accepted")
	}
}
