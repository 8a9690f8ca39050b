package sim

import (
	"errors"
	"sort"

	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/transport"
)

// network carries the cores' encoded messages between nodes. A link is
// what a TCP connection is: ordered and reliable until it breaks, when
// everything in flight on it is lost. A partition either breaks the links
// it cuts (a reset) or stalls them (a firewall's silent drop: what they
// carry waits, in order, until the partition heals or a link timeout ends
// the link). A one-shot question (probe, positions) travels on a
// link of its own, whose asking end has no core link: its answer is
// stepped with link 0, and its loss is reported as Unreachable.
type network struct {
	queue    []message
	seq      int
	nextLink int
	links    map[int]*link
	// cut[{a, b}]: nothing goes from a to b.
	cut map[[2]string]bool
}

// link joins the node that dialed (a) to the one that accepted (b); each
// end knows it by its core's LinkID (aLink 0: a one-shot question).
type link struct {
	id           int
	a, b         string
	aLink, bLink repl.LinkID
	lastAt       int // delivery time of the newest message: later ones come after it
	oneShot      bool
	answered     bool // a one-shot's answer was delivered
	// closingAt: an end closed it; it breaks once what was sent before
	// has been delivered.
	closing bool
}

// messageKind is what a queued event is.
type messageKind uint8

const (
	deliverMsg     messageKind = iota // a message on a link
	connectedMsg                      // a dial succeeded: tell the dialer
	dialFailedMsg                     // a dial failed: tell the dialer
	unreachableMsg                    // a one-shot question got no link
	closeMsg                          // a closed link breaks once its messages are delivered
)

type message struct {
	kind     messageKind
	from, to string
	link     int
	at, seq  int
	typ      transport.Type
	payload  []byte
	dialLink repl.LinkID // connectedMsg, dialFailedMsg: the dialer's link
}

var errLinkBroken = errors.New("sim: link broken")

func (nw *network) reachable(a, b string) bool {
	return !nw.cut[[2]string{a, b}] && !nw.cut[[2]string{b, a}]
}

// passes reports whether a message from a to b gets through.
func (nw *network) passes(a, b string) bool { return !nw.cut[[2]string{a, b}] }

func (nw *network) enqueue(w *world, m message, l *link) {
	m.at = w.now + 1 + w.rng.IntN(w.opts.MaxDelay)
	if l != nil {
		if m.at < l.lastAt {
			m.at = l.lastAt
		}
		l.lastAt = m.at
	}
	nw.seq++
	m.seq = nw.seq
	nw.queue = append(nw.queue, m)
}

// dial opens a link from a to b if both are up and can reach each other;
// b's core accepts it at once, a's learns it is connected a little later.
func (nw *network) dial(w *world, a string, d repl.Dial) {
	to := w.byID[d.Addr] // a node's address is its id
	if to == nil || to.eng == nil || !nw.reachable(a, d.Addr) {
		nw.enqueue(w, message{kind: dialFailedMsg, to: a, dialLink: d.Link}, nil)
		return
	}
	nw.nextLink++
	l := &link{id: nw.nextLink, a: a, b: d.Addr, aLink: d.Link}
	l.bLink = to.core.Accept(a, a)
	nw.links[l.id] = l
	nw.enqueue(w, message{kind: connectedMsg, from: d.Addr, to: a, link: l.id, dialLink: d.Link}, l)
}

// ask sends a one-shot question on a link of its own.
func (nw *network) ask(w *world, from string, e repl.Envelope) {
	to := w.byID[e.Addr]
	if to == nil || to.eng == nil || !nw.reachable(from, e.Addr) {
		nw.enqueue(w, message{kind: unreachableMsg, from: e.Addr, to: from}, nil)
		return
	}
	nw.nextLink++
	l := &link{id: nw.nextLink, a: from, b: e.Addr, oneShot: true}
	l.bLink = to.core.Accept(from, from)
	nw.links[l.id] = l
	nw.enqueue(w, message{kind: deliverMsg, from: from, to: e.Addr, link: l.id, typ: e.Type, payload: e.Payload}, l)
}

// linkOf finds the link node id knows as lid.
func (nw *network) linkOf(id string, lid repl.LinkID) *link {
	for _, l := range nw.links {
		if (l.a == id && l.aLink == lid && lid != 0) || (l.b == id && l.bLink == lid) {
			return l
		}
	}
	return nil
}

// send queues a message on the link node from knows as lid.
func (nw *network) send(w *world, from string, lid repl.LinkID, typ transport.Type, payload []byte) {
	l := nw.linkOf(from, lid)
	if l == nil || l.closing {
		return
	}
	to := l.b
	if from == l.b {
		to = l.a
	}
	nw.enqueue(w, message{kind: deliverMsg, from: from, to: to, link: l.id, typ: typ, payload: payload}, l)
}

// close ends a link from one end: it breaks after what was sent on it.
func (nw *network) close(w *world, from string, lid repl.LinkID) {
	l := nw.linkOf(from, lid)
	if l == nil || l.closing {
		return
	}
	l.closing = true
	nw.enqueue(w, message{kind: closeMsg, link: l.id}, l)
}

// due removes and returns the messages to deliver at now, in order.
func (nw *network) due(now int) []message {
	sort.Slice(nw.queue, func(i, j int) bool {
		if nw.queue[i].at != nw.queue[j].at {
			return nw.queue[i].at < nw.queue[j].at
		}
		return nw.queue[i].seq < nw.queue[j].seq
	})
	k := 0
	for k < len(nw.queue) && nw.queue[k].at <= now {
		k++
	}
	out := append([]message(nil), nw.queue[:k]...)
	nw.queue = nw.queue[k:]
	return out
}

func (nw *network) linkIDs() []int {
	out := make([]int, 0, len(nw.links))
	for id := range nw.links {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// breakLink ends a link at both ends: what was in flight is lost.
func (nw *network) breakLink(w *world, id int) {
	l := nw.links[id]
	if l == nil {
		return
	}
	delete(nw.links, id)
	for _, end := range []struct {
		node string
		lid  repl.LinkID
		peer string
	}{{l.a, l.aLink, l.b}, {l.b, l.bLink, l.a}} {
		n := w.byID[end.node]
		if n == nil || n.eng == nil {
			continue
		}
		switch {
		case end.lid != 0:
			n.core.LinkDown(end.lid, errLinkBroken)
		case l.oneShot && !l.answered:
			n.core.Unreachable(end.peer)
		}
		n.handleReady()
	}
}
