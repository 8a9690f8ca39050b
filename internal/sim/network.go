package sim

import "sort"

// network carries messages between nodes. A link is what a TCP connection
// is: ordered and reliable until it breaks, when everything in flight on
// it is lost. Probes travel outside links and are lost when a partition
// stands between the two nodes at delivery time.
type network struct {
	queue    []message
	seq      int
	nextLink int
	links    map[int]*link
	// cut[{a, b}]: nothing goes from a to b.
	cut map[[2]string]bool
}

// link joins a follower (a) to the node it subscribed to (b).
type link struct {
	id     int
	a, b   string
	lastAt int // delivery time of the newest message: later ones come after it
}

type message struct {
	from, to string
	link     int // 0: outside any link (probes)
	at, seq  int
	body     any
}

func (nw *network) reachable(a, b string) bool {
	return !nw.cut[[2]string{a, b}] && !nw.cut[[2]string{b, a}]
}

// dial opens a link from a to b if both ways are open.
func (nw *network) dial(a, b string) int {
	if !nw.reachable(a, b) {
		return 0
	}
	nw.nextLink++
	nw.links[nw.nextLink] = &link{id: nw.nextLink, a: a, b: b}
	return nw.nextLink
}

func (nw *network) send(w *world, from, to string, linkID int, body any) {
	at := w.now + 1 + w.rng.IntN(w.opts.MaxDelay)
	if linkID != 0 {
		l := nw.links[linkID]
		if l == nil {
			return
		}
		if at < l.lastAt {
			at = l.lastAt
		}
		l.lastAt = at
	} else if !nw.reachable(from, to) {
		return
	}
	nw.seq++
	nw.queue = append(nw.queue, message{from: from, to: to, link: linkID, at: at, seq: nw.seq, body: body})
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
	var kept []message
	for _, m := range out {
		if m.link == 0 && !nw.reachable(m.from, m.to) {
			continue // a probe the partition swallowed
		}
		kept = append(kept, m)
	}
	return kept
}

func (nw *network) linkIDs() []int {
	out := make([]int, 0, len(nw.links))
	for id := range nw.links {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// breakLink ends a link at both ends.
func (nw *network) breakLink(w *world, id int) {
	l := nw.links[id]
	if l == nil {
		return
	}
	delete(nw.links, id)
	for _, end := range []string{l.a, l.b} {
		if n := w.byID[end]; n != nil {
			n.linkBroken(id)
		}
	}
}
