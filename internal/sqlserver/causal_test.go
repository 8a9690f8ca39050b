package sqlserver

import (
	"testing"

	"github.com/miraj-db/miraj/internal/journal"
)

func TestPositionTokenRoundTrip(t *testing.T) {
	c := causalState{written: map[string]position{
		"shop":      {db: "shop", base: "3c8dd4bf", lsn: 293},
		"a,b:c%d e": {db: "a,b:c%d e", base: "00ff00ff", lsn: journal.LSN(1) << 40},
	}}
	tok := c.token()
	if tok != "a%2Cb%3Ac%25d+e:00ff00ff:1099511627776,shop:3c8dd4bf:293" {
		t.Errorf("token %q", tok)
	}
	ps, err := parseToken(tok)
	if err != nil || len(ps) != 2 || ps[0] != c.written["a,b:c%d e"] || ps[1] != c.written["shop"] {
		t.Errorf("parse %q: %+v, %v", tok, ps, err)
	}
	if ps, err := parseToken(""); err != nil || len(ps) != 0 {
		t.Errorf("empty token: %+v, %v", ps, err)
	}
	for _, bad := range []string{"shop", "shop:1", "shop:ab:x", ":ab:1", "shop:ab:-1"} {
		if _, err := parseToken(bad); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
}
