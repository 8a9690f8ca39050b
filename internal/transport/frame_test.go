package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf []byte
	payloads := [][]byte{nil, []byte("a"), bytes.Repeat([]byte{0xAB}, 70000)}
	for i, p := range payloads {
		buf = AppendFrame(buf, FirstUserType+Type(i), p)
	}
	r := bytes.NewReader(buf)
	for i, p := range payloads {
		f, err := ReadFrame(r, DefaultMaxFrameBytes)
		if err != nil {
			t.Fatal(err)
		}
		if f.Type != FirstUserType+Type(i) || !bytes.Equal(f.Payload, p) {
			t.Fatalf("frame %d: type %x, %d bytes", i, f.Type, len(f.Payload))
		}
	}
	if _, err := ReadFrame(r, DefaultMaxFrameBytes); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestReadFrameErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		max  int
		want error
	}{
		{"empty", nil, 16, io.EOF},
		{"short header", []byte{0, 0, 0}, 16, io.ErrUnexpectedEOF},
		{"type zero", []byte{0, 0, 0, 0, 0}, 16, ErrFrameType},
		{"too large", []byte{0, 0, 0, 17, 0x10}, 16, ErrFrameTooLarge},
		{"huge length", []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x10}, DefaultMaxFrameBytes, ErrFrameTooLarge},
		{"truncated payload", []byte{0, 0, 0, 4, 0x10, 1, 2}, 16, io.ErrUnexpectedEOF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(tc.in), tc.max)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

func TestHelloRoundTrip(t *testing.T) {
	h := Hello{Version: protocolVersion, Cluster: "gestium-prod", NodeID: "nœud_1"}
	got, err := DecodeHello(h.encode())
	if err != nil || got != h {
		t.Fatalf("got %+v, %v", got, err)
	}
	long := Hello{Version: 1, Cluster: strings.Repeat("c", 255), NodeID: strings.Repeat("é", 64)}
	if got, err := DecodeHello(long.encode()); err != nil || got != long {
		t.Fatalf("longest hello: %+v, %v", got, err)
	}
}

func TestDecodeHelloErrors(t *testing.T) {
	good := Hello{Version: 1, Cluster: "c", NodeID: "n1"}.encode()
	cases := map[string][]byte{
		"empty":         nil,
		"version only":  {0, 1},
		"name overruns": {0, 1, 0, 9, 'c'},
		"no id":         Hello{Version: 1, Cluster: "c"}.encode(),
		"trailing":      append(append([]byte{}, good...), 0),
		"bad utf8":      {0, 1, 0, 1, 0xFF, 0, 1, 'n'},
		"too long":      make([]byte, maxHelloBytes+1),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeHello(in); !errors.Is(err, ErrMalformedHello) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestRefuseCodes(t *testing.T) {
	for c := RefuseUnknown; c < refuseCodeSentinel; c++ {
		if got := decodeRefuse(refusePayload(c)); got != c {
			t.Fatalf("round trip of %d: %d", c, got)
		}
	}
	if decodeRefuse([]byte{0xFF, 0xFF}) != RefuseUnknown || decodeRefuse(nil) != RefuseUnknown {
		t.Fatal("unknown codes must decode as RefuseUnknown")
	}
}

// FuzzReadFrame: any byte stream decodes into frames within the limit or
// fails with an error; a decoded frame re-encodes to the bytes it came from.
func FuzzReadFrame(f *testing.F) {
	f.Add(AppendFrame(nil, FirstUserType, []byte("payload")), 16)
	f.Add(AppendFrame(AppendFrame(nil, typeHello, Hello{Version: 1, Cluster: "c", NodeID: "n1"}.encode()), typeReady, nil), 1024)
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0x10}, 1<<20)
	f.Add([]byte{0, 0, 0, 0, 0}, 0)
	f.Add([]byte{0, 0, 0, 3, 0x11, 1}, 3)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 0 || max > 1<<20 {
			max = 1 << 20
		}
		r := bytes.NewReader(data)
		consumed := 0
		for {
			fr, err := ReadFrame(r, max)
			if err != nil {
				return
			}
			if fr.Type == typeInvalid || len(fr.Payload) > max {
				t.Fatalf("accepted type %x with %d bytes (max %d)", fr.Type, len(fr.Payload), max)
			}
			enc := AppendFrame(nil, fr.Type, fr.Payload)
			if !bytes.Equal(enc, data[consumed:consumed+len(enc)]) {
				t.Fatal("re-encoding differs from the input")
			}
			consumed += len(enc)
		}
	})
}

// FuzzDecodeHello: a decoded hello re-encodes to the same bytes.
func FuzzDecodeHello(f *testing.F) {
	f.Add(Hello{Version: 1, Cluster: "gestium-prod", NodeID: "n1"}.encode())
	f.Add([]byte{0, 1, 0, 0, 0, 1, 'x'})
	f.Add([]byte{0, 1, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHello(data)
		if err != nil {
			return
		}
		if !bytes.Equal(h.encode(), data) {
			t.Fatalf("re-encoding of %+v differs", h)
		}
	})
}
