package replica

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// gtid is one MariaDB global transaction identifier, domain-server-sequence.
type gtid struct {
	Domain uint32
	Server uint32
	Seq    uint64
}

func (g gtid) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seq) }

// position is a replica's GTID position: the last group applied in each
// domain, as @@gtid_slave_pos shows it ("0-1-42,1-3-7").
// Invariant: at most one gtid per domain, and pos[d].Domain == d.
type position map[uint32]gtid

// parsePosition reads a comma-separated list of GTIDs, one per domain at
// most (the form MariaDB accepts for gtid_slave_pos). "" is the empty
// position.
func parsePosition(s string) (position, error) {
	p := position{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		g, err := parseGTID(part)
		if err != nil {
			return nil, err
		}
		if _, dup := p[g.Domain]; dup {
			return nil, fmt.Errorf("replica: GTID position %q names domain %d twice", s, g.Domain)
		}
		p[g.Domain] = g
	}
	return p, nil
}

func parseGTID(s string) (gtid, error) {
	f := strings.Split(s, "-")
	if len(f) != 3 {
		return gtid{}, fmt.Errorf("replica: %q is not a GTID (domain-server-sequence)", s)
	}
	d, err1 := strconv.ParseUint(f[0], 10, 32)
	sv, err2 := strconv.ParseUint(f[1], 10, 32)
	q, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return gtid{}, fmt.Errorf("replica: %q is not a GTID (domain-server-sequence)", s)
	}
	return gtid{Domain: uint32(d), Server: uint32(sv), Seq: q}, nil
}

// String lists the GTIDs by domain.
func (p position) String() string {
	doms := make([]uint32, 0, len(p))
	for d := range p {
		doms = append(doms, d)
	}
	sort.Slice(doms, func(i, j int) bool { return doms[i] < doms[j] })
	parts := make([]string, len(doms))
	for i, d := range doms {
		parts[i] = p[d].String()
	}
	return strings.Join(parts, ",")
}

// CurrentPos is MariaDB's @@gtid_current_pos: per domain, the GTID of
// this server's binary log (binlogPos) when this server (serverID) wrote
// it and its sequence number passes the replica's (slavePos), else the
// replica's. A position that does not parse counts as empty.
func CurrentPos(binlogPos, slavePos string, serverID uint32) string {
	return mergeOwn(mustPosition(slavePos), binlogPos, serverID).String()
}

// mergeOwn returns p with, per domain, the GTIDs of binlogPos that this
// server wrote past p's (CurrentPos).
func mergeOwn(p position, binlogPos string, serverID uint32) position {
	out := p.clone()
	for d, g := range mustPosition(binlogPos) {
		if have, ok := out[d]; g.Server == serverID && (!ok || g.Seq > have.Seq) {
			out[d] = g
		}
	}
	return out
}

func mustPosition(s string) position {
	p, err := parsePosition(s)
	if err != nil {
		return position{}
	}
	return p
}

func (p position) clone() position {
	c := make(position, len(p))
	for d, g := range p {
		c[d] = g
	}
	return c
}

// with returns p advanced to g in g's domain.
func (p position) with(g gtid) position {
	c := p.clone()
	c[g.Domain] = g
	return c
}

// reached reports whether every GTID of want is at or behind p in its
// domain (MASTER_GTID_WAIT's condition).
func (p position) reached(want position) bool {
	for d, g := range want {
		have, ok := p[d]
		if !ok || have.Seq < g.Seq {
			return false
		}
	}
	return true
}
