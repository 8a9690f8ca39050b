package sqlserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/binlog"
)

// Serving a replica (§17.13.3). A MariaDB replica sets its connection's
// user variables (@master_binlog_checksum, @slave_connect_state,
// @master_heartbeat_period, @mariadb_slave_capability), then sends
// COM_REGISTER_SLAVE and COM_BINLOG_DUMP. vitess knows neither as a
// server (it answers COM_BINLOG_DUMP with 1047, and without a binlog
// handler leaves COM_REGISTER_SLAVE's packet unreleased, then panics), so
// the client connection's filter (admincmd.go, guards.go) picks both out
// of the stream and they are served here, on the connection's socket,
// beneath vitess: the dump holds the connection (vitess waits in its read
// of the next command) until the replica leaves, the log closes or an
// error ends it, after which the connection is closed.
//
// Layouts (MariaDB's protocol):
//
//	COM_REGISTER_SLAVE: [15] [server id:4] [host length:1] [host]
//	  [user length:1] [user] [password length:1] [password] [port:2]
//	  [rank:4] [master id:4]
//	COM_BINLOG_DUMP:    [12] [position:4] [flags:2] [server id:4] [file name]
//	each event:         [00] [event]   (packets of 16 MiB - 1 at most)
//	end:                an error packet (1236 and others)

const (
	comBinlogDump = 0x12
	// errMasterFatal is ER_MASTER_FATAL_ERROR_READING_BINLOG (1236).
	errMasterFatal = 1236
	// maxPacketPayload: a longer payload continues in the next packet.
	maxPacketPayload = 1<<24 - 1
	// registerFieldMax bounds a COM_REGISTER_SLAVE field (one length byte).
	registerFieldMax = 255
)

// needReplicationSlave: COM_REGISTER_SLAVE and COM_BINLOG_DUMP.
var needReplicationSlave = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_ReplicationSlave}, text: "REPLICATION SLAVE"}

// replicaRegistry holds the registered replicas (SHOW SLAVE HOSTS).
type replicaRegistry struct {
	mu     sync.Mutex
	byConn map[uint32]replicaHost
}

type replicaHost struct {
	ServerID, MasterID uint32
	Host               string
	Port               uint16
}

func (r *replicaRegistry) add(conn uint32, h replicaHost) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byConn == nil {
		r.byConn = map[uint32]replicaHost{}
	}
	r.byConn[conn] = h
}

func (r *replicaRegistry) remove(conn uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byConn, conn)
}

func (r *replicaRegistry) list() []replicaHost {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]replicaHost, 0, len(r.byConn))
	for _, h := range r.byConn {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ServerID < out[j].ServerID })
	return out
}

// binlogCommands is what a client connection's filter needs to serve the
// replication commands: the server and the connection's id.
type binlogCommands struct {
	srv    *Server
	connID uint32
}

// isReplicationCommand reports whether cmd is a command served here when
// the server keeps a binary log.
func isReplicationCommand(cmd byte) bool { return cmd == comBinlogDump || cmd == comRegisterReplica }

// serveReplication answers COM_REGISTER_SLAVE, or runs COM_BINLOG_DUMP
// to its end (then an error ends the connection).
func (c *clientConn) serveReplication(cmd []byte) error {
	bc := c.admin.binlog
	b := bc.srv.binlog
	sess := bc.srv.session(bc.connID)
	if sess == nil {
		_, err := c.Write(errPacketAt(1, mysql.NewSQLError(errUnknownCommand, mysql.SSNetError, "Unknown command")))
		return err
	}
	sctx := sql.NewContext(context.Background(), sql.WithSession(sess))
	g := grants{db: bc.srv.engine.Analyzer.Catalog.MySQLDb}
	if !g.meets(sctx, needReplicationSlave) {
		_, err := c.Write(errPacketAt(1, mysql.NewSQLError(1227, "42000",
			"Access denied; you need (at least one of) the %s privilege(s) for this operation", needReplicationSlave.text)))
		return err
	}
	if cmd[0] == comRegisterReplica {
		h, err := parseRegisterSlave(cmd)
		if err != nil {
			_, werr := c.Write(errPacketAt(1, mysql.NewSQLError(errMalformedPacket, "HY000", "Malformed communication packet.")))
			return werr
		}
		if h.ServerID == binlogServerID() {
			_, err := c.Write(errPacketAt(1, mysql.NewSQLError(errMasterFatal, "HY000",
				"A slave with the same server_uuid/server_id as this slave has connected to the master; the first one is the master's own server_id %d", h.ServerID)))
			return err
		}
		b.replicas.add(bc.connID, h)
		_, err = c.Write(packet(1, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00))
		return err
	}
	return c.dump(sctx, sess, b, cmd)
}

func parseRegisterSlave(cmd []byte) (replicaHost, error) {
	p := cmd[1:]
	if len(p) < 4 {
		return replicaHost{}, io.ErrUnexpectedEOF
	}
	h := replicaHost{ServerID: binary.LittleEndian.Uint32(p)}
	p = p[4:]
	field := func() (string, error) {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return "", io.ErrUnexpectedEOF
		}
		s := string(p[1 : 1+int(p[0])])
		p = p[1+int(p[0]):]
		return s, nil
	}
	var err error
	if h.Host, err = field(); err != nil {
		return h, err
	}
	if _, err = field(); err != nil { // user
		return h, err
	}
	if _, err = field(); err != nil { // password
		return h, err
	}
	if len(p) >= 2 {
		h.Port = binary.LittleEndian.Uint16(p)
		p = p[2:]
	}
	if len(p) >= 8 {
		h.MasterID = binary.LittleEndian.Uint32(p[4:])
	}
	return h, nil
}

// userVar is a user variable of the session as text, and whether it is
// set.
func userVar(sctx *sql.Context, sess *Session, name string) (string, bool) {
	_, v, err := sess.GetUserVariable(sctx, name)
	if err != nil || v == nil {
		return "", false
	}
	switch x := v.(type) {
	case []byte:
		return string(x), true
	case string:
		return x, true
	}
	return fmt.Sprint(v), true
}

// dump streams the log (binlog.Log.Dump), each event in its packets.
func (c *clientConn) dump(sctx *sql.Context, sess *Session, b *binlogServer, cmd []byte) error {
	if len(cmd) < 11 {
		_, err := c.Write(errPacketAt(1, mysql.NewSQLError(errMalformedPacket, "HY000", "Malformed communication packet.")))
		return err
	}
	req := binlog.DumpRequest{
		Pos:  int64(binary.LittleEndian.Uint32(cmd[1:])),
		File: strings.TrimRight(string(cmd[11:]), "\x00"),
	}
	if state, ok := userVar(sctx, sess, "slave_connect_state"); ok {
		pos, err := binlog.ParsePosition(state)
		if err != nil {
			_, werr := c.Write(errPacketAt(1, mysql.NewSQLError(errMasterFatal, "HY000", "Got fatal error 1236 from master when reading data from binary log: '%v'", err)))
			return werr
		}
		req.UseGTID, req.GTID = true, pos
	}
	if v, ok := userVar(sctx, sess, "master_binlog_checksum"); ok && v != "" {
		req.ChecksumAware = true
	}
	if v, ok := userVar(sctx, sess, "master_heartbeat_period"); ok {
		if ns, err := strconv.ParseFloat(v, 64); err == nil && ns > 0 {
			req.Heartbeat = time.Duration(ns)
		}
	}
	bc := c.admin.binlog
	defer b.replicas.remove(bc.connID)
	defer bc.srv.procs.showBinlogDump(bc.connID)()
	if err := c.sendHeld(); err != nil {
		return err
	}
	// wait_timeout does not apply: the replica sends nothing while it
	// reads. Its leaving (EOF on the socket) ends the dump.
	c.idleSince.Store(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var one [1]byte
		for {
			if _, err := c.readSocket(one[:]); err != nil {
				cancel()
				return
			}
		}
	}()
	seq := byte(1)
	var buf []byte
	err := b.log.Dump(ctx, req, func(ev []byte) error {
		buf = append(buf[:0], 0x00)
		buf = append(buf, ev...)
		for off := 0; ; {
			n := min(len(buf)-off, maxPacketPayload)
			pkt := packet(seq, buf[off:off+n]...)
			seq++
			if _, err := c.writeWire(pkt); err != nil {
				return err
			}
			off += n
			if n < maxPacketPayload {
				return nil
			}
		}
	})
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return io.EOF
	case errors.Is(err, binlog.ErrGTIDNotFound), errors.Is(err, binlog.ErrNotInIndex), errors.Is(err, binlog.ErrBadPosition), errors.Is(err, binlog.ErrCorrupt):
		c.writeWire(errPacketAt(seq, mysql.NewSQLError(errMasterFatal, "HY000", "%s", strings.TrimPrefix(err.Error(), "binlog: "))))
		return io.EOF
	}
	bc.srv.log.Warn("binary log dump ended", "conn", bc.connID, "err", err)
	return io.EOF
}

// showBinlogDump shows connection connID as Binlog Dump in the process
// list until the returned func is called.
func (pl *processList) showBinlogDump(connID uint32) func() {
	return pl.showAs(connID, "Binlog Dump", "", "Master has sent all binlog to slave; waiting for more updates")
}

// binlogCommandsFor is a connection's access to the replication commands
// (nil without a binary log).
func (s *Server) binlogCommandsFor(connID uint32) *binlogCommands {
	if s.binlog == nil {
		return nil
	}
	return &binlogCommands{srv: s, connID: connID}
}
