package binlog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GTID is MariaDB's global transaction id: domain-server-sequence.
type GTID struct {
	Domain uint32
	Server uint32
	Seq    uint64
}

func (g GTID) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seq) }

// ParseGTID reads "domain-server-seq".
func ParseGTID(s string) (GTID, error) {
	parts := strings.Split(strings.TrimSpace(s), "-")
	if len(parts) != 3 {
		return GTID{}, fmt.Errorf("binlog: GTID %q is not domain-server-sequence", s)
	}
	d, err1 := strconv.ParseUint(parts[0], 10, 32)
	sv, err2 := strconv.ParseUint(parts[1], 10, 32)
	q, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return GTID{}, fmt.Errorf("binlog: GTID %q is not domain-server-sequence", s)
	}
	return GTID{Domain: uint32(d), Server: uint32(sv), Seq: q}, nil
}

// Position is a GTID position: at most one GTID per domain, the last
// group applied in it (MariaDB's gtid_slave_pos, @slave_connect_state).
type Position map[uint32]GTID

// ParsePosition reads a comma-separated list of GTIDs, one per domain.
func ParsePosition(s string) (Position, error) {
	p := Position{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		g, err := ParseGTID(part)
		if err != nil {
			return nil, err
		}
		if _, dup := p[g.Domain]; dup {
			return nil, fmt.Errorf("binlog: position %q has two GTIDs of domain %d", s, g.Domain)
		}
		p[g.Domain] = g
	}
	return p, nil
}

// String is the position as MariaDB writes it, by domain.
func (p Position) String() string {
	gs := make([]GTID, 0, len(p))
	for _, g := range p {
		gs = append(gs, g)
	}
	return formatGTIDs(gs)
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func formatGTIDs(gs []GTID) string {
	slices.SortFunc(gs, func(a, b GTID) int {
		if a.Domain != b.Domain {
			return cmpU32(a.Domain, b.Domain)
		}
		return cmpU32(a.Server, b.Server)
	})
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = g.String()
	}
	return strings.Join(s, ",")
}

// State is the binary log's GTID state: the last GTID of each domain and
// server (gtid_binlog_state), and of each domain the last one written
// (gtid_binlog_pos). The zero State is empty; it is not safe for
// concurrent use (the Log guards its own).
type State struct {
	// last: per domain, the last GTID written in it.
	last map[uint32]GTID
	// byServer: per domain and server, the highest sequence written.
	byServer map[[2]uint32]uint64
}

// Record notes g as written.
func (s *State) Record(g GTID) {
	if s.last == nil {
		s.last, s.byServer = map[uint32]GTID{}, map[[2]uint32]uint64{}
	}
	s.last[g.Domain] = g
	k := [2]uint32{g.Domain, g.Server}
	if g.Seq > s.byServer[k] {
		s.byServer[k] = g.Seq
	}
}

// NextSeq is the sequence the next group of domain gets: one past the
// highest of the domain.
func (s *State) NextSeq(domain uint32) uint64 {
	var hi uint64
	for k, q := range s.byServer {
		if k[0] == domain && q > hi {
			hi = q
		}
	}
	return hi + 1
}

// Pos is the last GTID written in each domain (gtid_binlog_pos).
func (s *State) Pos() Position {
	p := Position{}
	for d, g := range s.last {
		p[d] = g
	}
	return p
}

// List is the full state, one GTID per domain and server, as Gtid_list
// carries it (gtid_binlog_state).
func (s *State) List() []GTID {
	out := make([]GTID, 0, len(s.byServer))
	for k, q := range s.byServer {
		out = append(out, GTID{Domain: k[0], Server: k[1], Seq: q})
	}
	// By domain, the domain's last written GTID last: a reader of the
	// list takes each domain's last entry as its position.
	isLast := func(g GTID) int {
		if l, ok := s.last[g.Domain]; ok && l.Server == g.Server {
			return 1
		}
		return 0
	}
	slices.SortFunc(out, func(a, b GTID) int {
		if a.Domain != b.Domain {
			return cmpU32(a.Domain, b.Domain)
		}
		if d := isLast(a) - isLast(b); d != 0 {
			return d
		}
		return cmpU32(a.Server, b.Server)
	})
	return out
}

// Clone is an independent copy.
func (s *State) Clone() State {
	var c State
	for _, g := range s.List() {
		c.Record(g)
	}
	return c
}

// String is the full state as MariaDB writes gtid_binlog_state.
func (s *State) String() string { return formatGTIDs(s.List()) }

// stateOf rebuilds a state from a Gtid_list (each domain's last entry is
// its last written).
func stateOf(list []GTID) State {
	var s State
	for _, g := range list {
		s.Record(g)
	}
	return s
}
