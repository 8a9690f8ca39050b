package sqlserver

import (
	"net"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
)

// max_connections, as MySQL keeps it: a client connection beyond it is
// refused with 1040 "Too many connections", except one more for an account
// with SUPER or CONNECTION_ADMIN, so that an administrator can still come
// in. go-mysql-server showed the variable (151) and enforced nothing.
//
// The listener refuses a connection past max_connections + 1 before its
// handshake (the account is not known yet); once a connection has logged
// in, the one past max_connections is refused unless its account may have
// it. SET GLOBAL max_connections applies to the next connection;
// connections already open stay. Each refusal counts in
// Connection_errors_max_connections.

// maxConnections is @@global.max_connections (0: no limit).
func maxConnections() int64 {
	_, v, ok := sql.SystemVariables.GetGlobal("max_connections")
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return n
	case uint64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

var errTooManyConnections = mysql.NewSQLError(mysql.ERConCount, "08004", "Too many connections")

// refuseConnection answers a connection with 1040 in place of the server's
// greeting, as MySQL does, and closes it.
func refuseConnection(c net.Conn) {
	countRefusal()
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(errorPacket(errTooManyConnections))
	c.Close()
}

// packet frames payload as one MySQL packet with sequence number seq.
func packet(seq byte, payload ...byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// errorPacket is err as the error packet a server sends unasked (sequence
// number 0): 0xff, the code, '#' and the SQLSTATE, the message.
func errorPacket(err *mysql.SQLError) []byte {
	code := uint16(err.Num)
	p := append([]byte{0xff, byte(code), byte(code >> 8), '#'}, err.SQLState()...)
	return packet(0, append(p, err.Message...)...)
}

func countRefusal() {
	if sql.StatusVariables != nil {
		sql.StatusVariables.IncrementGlobal("Connection_errors_max_connections", 1)
	}
}

// mayExceed reports whether account u may have the connection past
// max_connections.
func mayExceed(u *mysql_db.User) bool {
	return u != nil && (u.PrivilegeSet.Has(sql.PrivilegeType_Super) || u.PrivilegeSet.HasDynamic("connection_admin"))
}

// checkConnectionLimit refuses, once logged in as user, a connection past
// max_connections whose account may not have it.
func (m loginMethod) checkConnectionLimit(c *mysql.Conn, user string) error {
	cc := clientOf(c.Conn)
	limit := maxConnections()
	if cc == nil || limit <= 0 || cc.ln.open.Load() <= limit || !m.grants.db.Enabled() {
		return nil
	}
	rd := m.grants.db.Reader()
	u := m.grants.db.GetUser(rd, user, clientHost(c.RemoteAddr()), false)
	rd.Close()
	if mayExceed(u) {
		return nil
	}
	countRefusal()
	return errTooManyConnections
}
