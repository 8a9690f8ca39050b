package config

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: no input makes Parse panic; every error is ErrInvalid; an
// accepted configuration satisfies the rules of §17.2.1.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(base + "mode = \"raft\"\nelection_timeout_ms = 500\n"))
	f.Add([]byte(base + "[extra]\nx = [1, 2]\n"))
	f.Add([]byte("[node]\nid = 5\n"))
	f.Add([]byte("[node\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := Parse("cluster.toml", data, "/etc/miraj", DefaultClientPort)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			if c != nil {
				t.Fatal("config returned with an error")
			}
			return
		}
		if CheckID(c.Node.ID) != nil || utf8.RuneCountInString(c.Node.ID) > maxIDChars {
			t.Fatalf("accepted id %q", c.Node.ID)
		}
		if c.Name == "" || c.TLSCert == "" || c.TLSKey == "" || c.TLSCA == "" {
			t.Fatalf("accepted without a required key: %+v", c)
		}
		if _, port, err := splitAddr(c.Node.Listen); err != nil || port == DefaultClientPort {
			t.Fatalf("accepted listen %q", c.Node.Listen)
		}
		if host, _, err := splitAddr(c.Node.Advertise); err != nil || isWildcard(host) {
			t.Fatalf("accepted advertise %q", c.Node.Advertise)
		}
		if c.Members != nil && !c.IsMember(c.Node.ID) {
			t.Fatalf("members %q without %q", c.Members, c.Node.ID)
		}
		if ms := c.ElectionTimeout.Milliseconds(); ms < minElectionTimeoutMS || ms > maxElectionTimeoutMS {
			t.Fatalf("election timeout %v", c.ElectionTimeout)
		}
		if ms := c.FragmentTimeout.Milliseconds(); ms < minFragmentTimeoutMS || ms > maxFragmentTimeoutMS {
			t.Fatalf("fragment timeout %v", c.FragmentTimeout)
		}
		if c.SyncReplicas < 1 || c.SyncTimeout <= 0 || c.JournalRetentionMB < 0 {
			t.Fatalf("out of range: %+v", c)
		}
		if c.Mode == ModeRaft {
			found := false
			for _, s := range c.Seeds {
				found = found || sameAddr(s, c.Node.Advertise)
			}
			if !found || len(c.Seeds) < 2 {
				t.Fatalf("raft with seeds %q", c.Seeds)
			}
		}
		for _, p := range []string{c.TLSCert, c.TLSKey, c.TLSCA} {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("path %q not resolved", p)
			}
		}
	})
}
