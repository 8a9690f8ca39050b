package repl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/miraj-db/miraj/internal/transport"
)

// The driver's links: each connection the core knows by a LinkID has a
// writer goroutine that sends what the core queued on it, in order, and a
// reader that posts what arrives to the loop. Dials and one-shot questions
// run on goroutines of their own and post their outcome.

// driverLink is one connection as the driver runs it.
type driverLink struct {
	id   LinkID
	kind LinkKind
	// dead: the core no longer has the link; the apply workers drop what
	// they still hold of a follow link (set by the loop).
	dead atomic.Bool

	mu struct {
		sync.Mutex
		c      *transport.Conn // nil until a dial succeeds
		queue  []transport.Frame
		bytes  int
		ending bool // close once the queue is sent
	}
	wake chan struct{} // a message was queued, or the link is ending
	// space is closed and replaced when queued bytes are sent (a copy
	// being written waits on it).
	space chan struct{}
}

func newLink(id LinkID, kind LinkKind) *driverLink {
	l := &driverLink{id: id, kind: kind, wake: make(chan struct{}, 1), space: make(chan struct{})}
	return l
}

func (l *driverLink) conn() *transport.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.c
}

func (l *driverLink) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// enqueue queues one message for the writer.
func (l *driverLink) enqueue(typ transport.Type, payload []byte) {
	l.mu.Lock()
	l.mu.queue = append(l.mu.queue, transport.Frame{Type: typ, Payload: payload})
	l.mu.bytes += len(payload)
	l.mu.Unlock()
	l.signal()
}

// queuedBytes is what waits to be sent, and the channel closed when some
// of it is.
func (l *driverLink) queuedBytes() (int, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.bytes, l.space
}

// closeAfterSends ends the link once what was queued is sent (the core
// closed it: an answer then the end, as TCP delivers it).
func (l *driverLink) closeAfterSends() {
	l.dead.Store(true)
	l.mu.Lock()
	l.mu.ending = true
	c := l.mu.c
	l.mu.Unlock()
	if c == nil {
		return // still dialing: the dial's end closes it
	}
	l.signal()
}

// writer sends the queue until the link ends.
func (n *Node) writer(ctx context.Context, l *driverLink, c *transport.Conn) {
	defer n.wg.Done()
	for {
		l.mu.Lock()
		batch := l.mu.queue
		l.mu.queue = nil
		ending := l.mu.ending
		l.mu.Unlock()
		for _, f := range batch {
			sctx, cancel := context.WithTimeout(ctx, sendTimeout)
			err := c.Send(sctx, f.Type, f.Payload)
			cancel()
			if err != nil {
				c.Close()
				return
			}
			l.mu.Lock()
			l.mu.bytes -= len(f.Payload)
			close(l.space)
			l.space = make(chan struct{})
			l.mu.Unlock()
		}
		if ending && len(batch) == 0 {
			c.Close()
			return
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-l.wake:
		case <-c.Done():
			return
		case <-ctx.Done():
			return
		}
	}
}

// reader posts what arrives on c until it ends, then the link's end.
func (n *Node) reader(ctx context.Context, l *driverLink, c *transport.Conn) {
	peer := c.Peer().ID
	for {
		f, err := c.Recv(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, transport.ErrClosed) && l.dead.Load() {
				err = nil // closed by this side
			}
			n.post(func() { n.linkDown(l, err) })
			return
		}
		n.post(func() { n.core.Step(l.id, peer, f.Type, f.Payload) })
	}
}

// linkDown tells the core a link ended (on the loop).
func (n *Node) linkDown(l *driverLink, err error) {
	l.dead.Store(true)
	delete(n.links, l.id)
	n.core.LinkDown(l.id, err)
}

// dial opens a link the core asked for.
func (n *Node) dial(d Dial) {
	l := newLink(d.Link, d.Kind)
	n.links[d.Link] = l
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		dctx, cancel := context.WithTimeout(n.ctx, probeTimeout)
		c, err := n.tr.Dial(dctx, d.Peer, d.Addr)
		cancel()
		if err == nil {
			// Both ends of a stream accept the stream's frame limit: a
			// 40 MiB row is one frame.
			err = c.SetMaxFrame(transport.MaxStreamFrameBytes)
		}
		n.post(func() {
			if err != nil {
				if c != nil {
					c.Close()
				}
				n.linkDown(l, fmt.Errorf("%s: %w", d.Addr, err))
				return
			}
			if n.links[d.Link] != l {
				c.Close() // the core closed it meanwhile
				return
			}
			n.run(l, c)
			n.core.Connected(d.Link, c.Peer().ID)
		})
	}()
}

// run starts a connected link's writer and reader.
func (n *Node) run(l *driverLink, c *transport.Conn) {
	l.mu.Lock()
	l.mu.c = c
	l.mu.Unlock()
	n.wg.Add(2)
	go n.writer(n.ctx, l, c)
	go func() {
		defer n.wg.Done()
		n.reader(n.ctx, l, c)
	}()
}

// serveIncoming runs a link a peer opened (the transport's handler): the
// core accepts it, then the link's reader runs here.
func (n *Node) serveIncoming(ctx context.Context, c *transport.Conn) {
	if err := c.SetMaxFrame(transport.MaxStreamFrameBytes); err != nil {
		return
	}
	var l *driverLink
	accepted := make(chan struct{})
	if !n.post(func() {
		id := n.core.Accept(c.Peer().ID, c.Peer().Addr.String())
		l = newLink(id, LinkAccepted)
		n.links[id] = l
		l.mu.Lock()
		l.mu.c = c
		l.mu.Unlock()
		n.wg.Add(1)
		go n.writer(n.ctx, l, c)
		close(accepted)
	}) {
		return
	}
	select {
	case <-accepted:
	case <-ctx.Done():
		return
	}
	n.reader(ctx, l, c)
	<-c.Done()
}

// ask runs a one-shot question: dial, send, one answer, close.
func (n *Node) ask(m Envelope) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		ctx, cancel := context.WithTimeout(n.ctx, probeTimeout)
		defer cancel()
		c, err := n.tr.Dial(ctx, m.To, m.Addr)
		if err != nil {
			n.post(func() { n.core.Unreachable(m.Addr) })
			return
		}
		defer c.Close()
		if err := c.Send(ctx, m.Type, m.Payload); err != nil {
			n.post(func() { n.core.Unreachable(m.Addr) })
			return
		}
		f, err := c.Recv(ctx)
		if err != nil {
			n.post(func() { n.core.Unreachable(m.Addr) })
			return
		}
		peer := c.Peer().ID
		n.post(func() { n.core.Answer(m.Addr, peer, f.Type, f.Payload) })
	}()
}
