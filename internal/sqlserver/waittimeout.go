package sqlserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// wait_timeout, as MySQL keeps it: a connection that waits for its next
// command longer than its session's wait_timeout (interactive_timeout
// for a client that said it is interactive, as the mysql client does) is
// closed, after an error packet saying why (4031, MySQL 8's). A
// statement that runs or waits for a lock is not waiting for a command.
// go-mysql-server showed the variables (28800) and closed nothing, so
// connections a client forgot stayed open for good, and now count
// against max_connections (maxconn.go).

// clientInteractive is the CLIENT_INTERACTIVE capability flag.
const clientInteractive = 1 << 10

// erClientInteractionTimeout is MySQL 8's ER_CLIENT_INTERACTION_TIMEOUT.
const erClientInteractionTimeout = 4031

// defaultWaitTimeout is wait_timeout's default, in seconds.
const defaultWaitTimeout = 28800

// noteWaitTimeout keeps the session's wait_timeout where the reaper reads
// it (a session's variables are its own goroutine's). Called after each
// command, from that goroutine.
func (s *Session) noteWaitTimeout(ctx *sql.Context) {
	c := s.client
	if c == nil {
		return
	}
	v, err := s.BaseSession.GetSessionVariable(ctx, "wait_timeout")
	if err != nil {
		return
	}
	if n, ok := v.(int64); ok {
		c.waitTimeout.Store(n)
	}
}

// reapIdle closes, every second until ctx ends, the connections of l that
// have waited for a command longer than their wait_timeout.
func reapIdle(ctx context.Context, l *clientListener, log *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, c := range openClients(l) {
				since := c.idleSince.Load()
				timeout := c.waitTimeout.Load()
				if timeout <= 0 {
					timeout = defaultWaitTimeout
				}
				if since != 0 && now.UnixNano()-since > timeout*int64(time.Second) {
					log.Info("client connection closed: it waited for a command longer than its wait_timeout", "client", c.peer.String(), "wait_timeout", timeout)
					c.closeIdle()
				}
			}
		}
	}
}

// openClients lists the open connections of l.
func openClients(l *clientListener) []*clientConn {
	clients.Lock()
	defer clients.Unlock()
	var out []*clientConn
	for c := range clients.open {
		if c.ln == l {
			out = append(out, c)
		}
	}
	return out
}

// closeIdle tells the client why, and closes its connection; the
// connection's goroutine, waiting in Read, ends as for a client that left.
func (c *clientConn) closeIdle() {
	c.Write(errorPacket(mysql.NewSQLError(erClientInteractionTimeout, "HY000",
		"The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.")))
	c.Close()
}
