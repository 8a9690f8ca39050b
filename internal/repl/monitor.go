package repl

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// What the HTTP health checks ask of a node (internal/httpapi), beside the
// status tables of status.go.

// monitorTimeout bounds a health check's question to the loop: a loop
// stuck for that long answers "not streaming" rather than hang the check.
const monitorTimeout = 2 * time.Second

// Streaming reports whether this node is a secondary that receives its
// primary's stream now: welcomed on its upstream link at its epoch (from the
// primary or through a relaying secondary).
func (n *Node) Streaming() bool {
	if !n.started.Load() || n.Role() != RoleSecondary {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), monitorTimeout)
	defer cancel()
	var on bool
	if !n.call(ctx, func() { on = n.core.relaying() }) {
		return false
	}
	return on
}

// CopyProgress is a copy of a database to a secondary (seeding) or a
// catch-up at promotion, under way: what SHOW CLUSTER STATUS,
// information_schema.MIRAJ_REPLICATION and /metrics show of it.
type CopyProgress struct {
	// Node: for a seed, the secondary it goes to; for a catch-up, the
	// peer it comes from.
	Node     string
	Database string
	Kind     string // "seed" or "catchup"
	// Done and Total are bytes; Total is 0 while unknown.
	Done, Total int64
	Started     time.Time
}

// Percent is Done as a percentage of Total (0 while Total is unknown).
func (p CopyProgress) Percent() float64 {
	if p.Total <= 0 {
		return 0
	}
	return 100 * float64(p.Done) / float64(p.Total)
}

// progressLogInterval is how often a copy or catch-up under way logs its
// progress (bytes, rate, time left).
const progressLogInterval = 10 * time.Second

// monitor is what the node keeps for the progress of copies and
// catch-ups (a field of Node).
type monitor struct {
	copies copies
	// Owned by the loop: the catch-up's last progress line, when it
	// began, and its bytes done at that line.
	catchUpLogged, catchUpStart time.Time
	catchUpDone                 int64
	catchUpRun                  *promoteRun // the promotion they are of
}

// copies are the seeding copies under way on a node: sent (on the node
// that serves them, Node = the secondary) or received (on the secondary,
// Node = itself). The zero value is ready; safe for concurrent use.
type copies struct {
	now func() time.Time // time.Now when nil (tests set it)
	mu  struct {
		sync.Mutex
		m map[string]*copyEntry // by node + database, lower case
	}
}

type copyEntry struct {
	p       CopyProgress
	logged  time.Time // last progress line
	sent    bool      // served by this node (else received)
	lastLog int64     // Done at the last progress line
}

func (c *copies) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

func copyKey(node, db string) string { return strings.ToLower(node) + "\x00" + strings.ToLower(db) }

// begin records a copy of db to (or from) node; total 0: unknown.
func (c *copies) begin(node, db string, total int64, sent bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.m == nil {
		c.mu.m = map[string]*copyEntry{}
	}
	now := c.clock()
	c.mu.m[copyKey(node, db)] = &copyEntry{p: CopyProgress{Node: node, Database: db, Kind: "seed", Total: total, Started: now}, logged: now, sent: sent}
}

// add counts k more bytes of node's copy of db; it returns a progress
// line to log when one is due (every progressLogInterval).
func (c *copies) add(node, db string, k int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.mu.m[copyKey(node, db)]
	if e == nil {
		return ""
	}
	e.p.Done += k
	now := c.clock()
	if now.Sub(e.logged) < progressLogInterval {
		return ""
	}
	line := progressLine(e.p, e.sent, e.p.Done-e.lastLog, now.Sub(e.logged))
	e.logged, e.lastLog = now, e.p.Done
	return line
}

// end forgets node's copy of db.
func (c *copies) end(node, db string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.m, copyKey(node, db))
}

func (c *copies) list() []CopyProgress {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []CopyProgress
	for _, e := range c.mu.m {
		out = append(out, e.p)
	}
	return out
}

// pruneSent forgets the copies this node finished sending that
// their follower has installed (no longer seeding): until then the copy
// shows, at 100 %, as the follower's state shows BOOTSTRAPPING. Runs on
// the loop (it reads the core).
func (n *Node) pruneSent() {
	c := &n.mon.copies
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, e := range c.mu.m {
		if !e.sent || e.p.Done < e.p.Total {
			continue
		}
		f := n.core.followers[strings.ToLower(e.p.Node)]
		if f == nil {
			delete(c.mu.m, key)
			continue
		}
		if pos := f.positions[strings.ToLower(e.p.Database)]; pos == nil || !pos.seeding {
			delete(c.mu.m, key)
		}
	}
}

// progressLine says how far a copy or catch-up is: bytes, percent, the
// rate over the last interval and the time left at that rate.
func progressLine(p CopyProgress, sent bool, recent int64, over time.Duration) string {
	what := "seeding of database " + p.Database
	switch {
	case p.Kind == "catchup":
		what = "catch-up of database " + p.Database + " from " + p.Node
	case sent:
		what += " for " + p.Node
	default:
		what += " from the primary"
	}
	rate := float64(recent) / over.Seconds()
	if p.Total <= 0 {
		return fmt.Sprintf("Cluster: %s: %s received, %s/s", what, mib(p.Done), mib(int64(rate)))
	}
	left := "time left unknown"
	if rate > 0 {
		left = "about " + (time.Duration(float64(p.Total-p.Done)/rate) * time.Second).Round(time.Second).String() + " left"
	}
	return fmt.Sprintf("Cluster: %s: %s of %s (%.1f%%), %s/s, %s", what, mib(p.Done), mib(p.Total), p.Percent(), mib(int64(rate)), left)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// noteCopy logs a progress line when one is due.
func (n *Node) noteCopy(line string) {
	if line != "" {
		n.log.Info(line)
	}
}

// catchUps reads, on the loop, the catch-up of a promotion under way: the
// present step and those to come. Done is what the journal holds past the
// step's start. Runs on the loop (it reads the core).
func (n *Node) catchUps() []CopyProgress {
	p := n.core.promo
	if p == nil || !p.accepted || p.step >= len(p.plan) {
		return nil
	}
	var out []CopyProgress
	for i := p.step; i < len(p.plan); i++ {
		s := p.plan[i]
		cp := CopyProgress{Node: s.Peer, Database: s.DB, Kind: "catchup", Total: int64(s.To - s.From), Started: n.mon.catchUpStart}
		if i == p.step {
			if db, ok := n.st.Database(s.DB); ok && db.Journal().End() > s.From {
				cp.Done = min(int64(db.Journal().End()-s.From), cp.Total)
			}
		}
		out = append(out, cp)
	}
	return out
}

// noteCatchUp runs on the loop after a catch-up append: it logs the
// progress every progressLogInterval.
func (n *Node) noteCatchUp() {
	cs := n.catchUps()
	if len(cs) == 0 {
		n.mon.catchUpRun = nil
		return
	}
	now := time.Now()
	if n.mon.catchUpRun != n.core.promo {
		n.mon.catchUpRun = n.core.promo
		n.mon.catchUpLogged, n.mon.catchUpStart, n.mon.catchUpDone = now, now, cs[0].Done
		return
	}
	if now.Sub(n.mon.catchUpLogged) < progressLogInterval {
		return
	}
	n.log.Info(progressLine(cs[0], false, cs[0].Done-n.mon.catchUpDone, now.Sub(n.mon.catchUpLogged)), "database", cs[0].Database)
	n.mon.catchUpLogged, n.mon.catchUpDone = now, cs[0].Done
}

// Copies returns the copies and catch-ups under way on this node, by node
// and database.
func (n *Node) Copies() []CopyProgress {
	var out []CopyProgress
	if n.started.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), monitorTimeout)
		defer cancel()
		var cs []CopyProgress
		if n.call(ctx, func() { n.pruneSent(); cs = n.catchUps() }) {
			out = append(out, cs...)
		}
	}
	out = append(out, n.mon.copies.list()...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Database < out[j].Database
	})
	return out
}
