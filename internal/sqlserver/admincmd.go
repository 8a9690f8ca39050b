package sqlserver

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// Three commands of the MySQL protocol that vitess does not know and answers
// with 1047 ("command handling not implemented yet"), picked out of the
// client's byte stream before vitess reads it:
//
//   - COM_STATISTICS, `mysqladmin status` and `version`, and the mysql
//     client's `status`: answered here, with MySQL 8's line ("Uptime: …
//     Threads: … Questions: …");
//   - COM_REFRESH, `mysqladmin refresh` and `flush-threads`: its flags
//     turned into the FLUSH statement that does the same (flush.go), and
//     handed on as a COM_QUERY, so that it is checked (RELOAD), run and
//     answered as the statement is. A flag with no FLUSH option here
//     (REFRESH_SLAVE, REFRESH_MASTER) leaves the command as it was: 1047;
//   - COM_SHUTDOWN, `mysqladmin shutdown`: handed on as the SHUTDOWN
//     statement (shutdown.go).
//
// A command is a packet with sequence number 0; the client sends the
// handshake's packets from 1 on, and the packets that follow a command
// (LOAD DATA's file, a long packet's continuations) count on from it.
// These are the only ones of one or two bytes whose first byte is 0x09,
// 0x08 or 0x07, so a packet is recognised by its header and first byte
// alone.
// The stream is read in the clear, above the connection's TLS
// (tlsconn.go).

const (
	comShutdown   = 0x08
	comRefresh    = 0x07
	comStatistics = 0x09
	comQuery      = 0x03
)

// refreshOptions are COM_REFRESH's flags and the FLUSH options that do
// what they ask, in the order written.
var refreshOptions = []struct {
	flag byte
	opt  string
}{
	{0x01, "PRIVILEGES"}, // REFRESH_GRANT
	{0x02, "LOGS"},       // REFRESH_LOG
	{0x04, "TABLES"},     // REFRESH_TABLES
	{0x08, "HOSTS"},      // REFRESH_HOSTS
	{0x10, "STATUS"},     // REFRESH_STATUS
	{0x20, "THREADS"},    // REFRESH_THREADS
}

// refreshStatement is the FLUSH statement for COM_REFRESH's flags, or
// false when a flag has none.
func refreshStatement(flags byte) (string, bool) {
	var opts []string
	for _, o := range refreshOptions {
		if flags&o.flag != 0 {
			opts = append(opts, o.opt)
			flags &^= o.flag
		}
	}
	if flags != 0 || len(opts) == 0 {
		return "", false
	}
	return "FLUSH " + strings.Join(opts, ", "), true
}

// adminFilter follows the packets a client sends to find those commands.
// Bytes that pass unchanged go straight to the reader; from a packet that
// must be looked at whole, or changed, on, they are staged in in and out.
type adminFilter struct {
	rest int    // payload bytes of the current packet not yet passed
	in   []byte // read from the socket, from a packet's header on, not looked at yet
	out  []byte // looked at (and changed), for the reader
	// stmtKnown reports whether the connection has a prepared statement
	// of that id (vitess' PrepareData, read on the connection's
	// goroutine, which is the reader's); nil until the connection is
	// handed to the handler.
	stmtKnown func(id uint32) bool
	// noBinlog: the handler serves no binary log (guards.go).
	noBinlog bool
	// binlog: the server keeps a binary log, whose replication commands
	// are served here (binlog_dump.go); nil otherwise.
	binlog *binlogCommands
	// inFile: the client is sending a file (LOAD DATA LOCAL): its packets
	// count on from the statement's and wrap to 0 after 255, so none is a
	// command, whatever its sequence number. Set by the statement's
	// goroutine, read by the one reading the file.
	inFile atomic.Bool
}

// walk passes b's bytes until it meets a packet header it cannot pass:
// one not whole in b, or a command of one or two bytes that is not whole
// or is one of ours. It returns the bytes passed and whether it stopped
// (at b[n], which is then a packet's header).
func (f *adminFilter) walk(b []byte) (n int, stopped bool) {
	for n < len(b) {
		if f.rest > 0 {
			k := min(f.rest, len(b)-n)
			f.rest -= k
			n += k
			continue
		}
		if len(b)-n < 4 {
			return n, true
		}
		size, seq := packetSize(b[n:]), b[n+3]
		if seq == 0 && size >= 1 && size <= maxGuardedBytes && !f.inFile.Load() {
			if len(b)-n < 5 {
				return n, true // the command's byte is not here yet
			}
			if f.candidate(b[n+4], size) && (len(b)-n < 4+size || f.ours(b[n+4:n+4+size])) {
				return n, true
			}
		}
		n += 4
		f.rest = size
	}
	return n, false
}

// packetSize is the payload size in the packet header at the start of b,
// or -1 when b does not hold a whole header.
func packetSize(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	return int(b[0]) | int(b[1])<<8 | int(b[2])<<16
}

// ours reports whether a whole command's payload is one answered or
// changed here.
func (f *adminFilter) ours(cmd []byte) bool {
	switch {
	case len(cmd) == 1 && cmd[0] == comStatistics:
		return true
	case len(cmd) == 2 && cmd[0] == comRefresh:
		_, ok := refreshStatement(cmd[1])
		return ok
	case len(cmd) <= 2 && cmd[0] == comShutdown:
		return true
	}
	return f.guarded(cmd)
}

// candidate reports whether a command of size bytes starting with cmd
// may be one answered or changed here, and is looked at whole.
func (f *adminFilter) candidate(cmd byte, size int) bool {
	return size <= 2 || f.mayGuard(cmd, size)
}

// Read is the client's stream for vitess, without the commands answered
// here and with those changed here changed. The time it waits counts
// against wait_timeout (waittimeout.go).
func (c *clientConn) Read(p []byte) (int, error) {
	if c.holding {
		if err := c.sendHeld(); err != nil {
			return 0, err
		}
	}
	c.idleSince.Store(time.Now().UnixNano())
	n, err := c.read(p)
	c.idleSince.Store(0)
	return n, err
}

func (c *clientConn) read(p []byte) (int, error) {
	if !c.ln.mysql {
		return c.readSocket(p)
	}
	f := &c.admin
	for {
		if len(f.out) > 0 {
			n := copy(p, f.out)
			f.out = f.out[n:]
			return n, nil
		}
		if len(f.in) == 0 {
			// Nothing staged: read into p and pass what can be passed.
			n, err := c.readSocket(p)
			k, stopped := f.walk(p[:n])
			if !stopped {
				return n, err
			}
			f.in = append(f.in, p[k:n]...)
			if k > 0 || err != nil {
				return k, err
			}
			continue
		}
		// f.in starts at a packet's header. What passes goes to the
		// reader first: a command is answered once the reader has had
		// every byte before it, so that answers keep the commands' order.
		k, stopped := f.walk(f.in)
		if k > 0 || !stopped {
			f.out = append(f.out[:0], f.in[:k]...)
			f.in = f.in[k:]
			if len(f.in) == 0 {
				f.in = nil
			}
			continue
		}
		if size := packetSize(f.in); size >= 0 && len(f.in) >= 4+size && f.ours(f.in[4:4+size]) {
			if err := c.answer(f.in[4 : 4+size]); err != nil {
				return 0, err
			}
			if f.in = f.in[4+size:]; len(f.in) == 0 {
				f.in = nil
			}
			continue
		}
		// A header or a short command not whole yet: read on.
		n, err := c.readSocket(p)
		f.in = append(f.in, p[:n]...)
		if err != nil {
			return 0, err
		}
	}
}

// answer answers a command of ours or changes it, into c.admin.out.
func (c *clientConn) answer(cmd []byte) error {
	switch cmd[0] {
	case comStatistics:
		_, err := c.Write(packet(1, []byte(statisticsLine())...))
		return err
	case comRefresh:
		q, _ := refreshStatement(cmd[1])
		c.admin.query(q)
	case comShutdown:
		c.admin.query("SHUTDOWN")
	default:
		if c.admin.binlog != nil && isReplicationCommand(cmd[0]) {
			return c.serveReplication(cmd)
		}
		_, err := c.Write(errPacketAt(1, guardError(cmd)))
		return err
	}
	return nil
}

// query hands the reader a COM_QUERY of q in place of the command.
func (f *adminFilter) query(q string) {
	f.out = append(f.out, packet(0, append([]byte{comQuery}, q...)...)...)
}

// statisticsLine is COM_STATISTICS's answer, MySQL 8's line of global
// status counters.
func statisticsLine() string {
	get := func(name string) uint64 {
		if sql.StatusVariables == nil { // no engine made in this process
			return 0
		}
		_, v, _ := sql.StatusVariables.GetGlobal(name)
		switch v := v.(type) {
		case uint64:
			return v
		case int64:
			return uint64(max(v, 0))
		case int:
			return uint64(max(v, 0))
		}
		return 0
	}
	uptime, questions := get("Uptime"), get("Questions")
	qps := 0.0
	if uptime > 0 {
		qps = float64(questions) / float64(uptime)
	}
	return fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: %d  Opens: %d  Flush tables: %d  Open tables: %d  Queries per second avg: %.3f",
		uptime, get("Threads_connected"), questions, get("Slow_queries"), get("Opened_tables"), get("Flush_commands"), get("Open_tables"), qps)
}
