package replica

import (
	"strconv"
	"strings"
	"time"
)

// StatusColumn is one column of SHOW SLAVE STATUS; Value is a string, an
// int64, a uint64 or nil (NULL). Number says the column is numeric.
type StatusColumn struct {
	Name   string
	Value  any
	Number bool
}

// Status is SHOW SLAVE STATUS (all false) or SHOW ALL SLAVES STATUS, in
// MariaDB 10.11's columns; ok false when CHANGE MASTER was never run
// (the statement then shows the columns and no row).
func (r *Replica) Status(all bool) ([]StatusColumn, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.mu.cfg
	yesNo := func(b bool) string {
		if b {
			return "Yes"
		}
		return "No"
	}
	ioRunning := "No"
	if r.mu.io != nil {
		ioRunning = "Connecting"
		if r.mu.runningIO {
			ioRunning = "Yes"
		}
	}
	var behind any
	if r.mu.sql != nil && r.mu.runningIO {
		behind = int64(0)
		if len(r.mu.queue) > 0 || r.mu.sqlState == "Executing" {
			if ts := r.mu.lastEventTS; ts > 0 {
				behind = max(int64(0), time.Now().Unix()-int64(ts))
			}
		}
	}
	lastErr := r.mu.sqlErr
	usingGTID := "No"
	switch c.UseGTID {
	case useSlavePos:
		usingGTID = "Slave_Pos"
	case useCurrentPos:
		usingGTID = "Current_Pos"
	}
	kept := func(name string) string {
		v := strings.Trim(c.Kept[name], "()")
		return v
	}
	delay := int64(0)
	if d, err := strconv.ParseInt(c.Kept["MASTER_DELAY"], 10, 64); err == nil {
		delay = d
	}
	s := func(name string, v any) StatusColumn { return StatusColumn{Name: name, Value: v} }
	n := func(name string, v any) StatusColumn { return StatusColumn{Name: name, Value: v, Number: true} }
	var cols []StatusColumn
	if all {
		cols = append(cols, s("Connection_name", ""), s("Slave_SQL_State", r.mu.sqlState))
	}
	cols = append(cols,
		s("Slave_IO_State", r.mu.ioState),
		s("Master_Host", c.Host),
		s("Master_User", c.User),
		n("Master_Port", int64(c.Port)),
		n("Connect_Retry", int64(c.ConnectRetry)),
		s("Master_Log_File", r.mu.readFile),
		n("Read_Master_Log_Pos", r.mu.readPos),
		s("Relay_Log_File", ""),
		n("Relay_Log_Pos", uint64(0)),
		s("Relay_Master_Log_File", r.mu.appliedFile),
		s("Slave_IO_Running", ioRunning),
		s("Slave_SQL_Running", yesNo(r.mu.sql != nil)),
		s("Replicate_Rewrite_DB", ""),
		s("Replicate_Do_DB", ""),
		s("Replicate_Ignore_DB", ""),
		s("Replicate_Do_Table", ""),
		s("Replicate_Ignore_Table", ""),
		s("Replicate_Wild_Do_Table", ""),
		s("Replicate_Wild_Ignore_Table", ""),
		n("Last_Errno", int64(lastErr.code)),
		s("Last_Error", lastErr.msg),
		n("Skip_Counter", r.mu.skipCounter),
		n("Exec_Master_Log_Pos", r.mu.appliedPos),
		n("Relay_Log_Space", uint64(0)),
		s("Until_Condition", "None"),
		s("Until_Log_File", ""),
		n("Until_Log_Pos", uint64(0)),
		s("Master_SSL_Allowed", yesNo(c.SSL)),
		s("Master_SSL_CA_File", c.SSLCA),
		s("Master_SSL_CA_Path", c.Kept["MASTER_SSL_CAPATH"]),
		s("Master_SSL_Cert", c.SSLCert),
		s("Master_SSL_Cipher", c.Kept["MASTER_SSL_CIPHER"]),
		s("Master_SSL_Key", c.SSLKey),
		n("Seconds_Behind_Master", behind),
		s("Master_SSL_Verify_Server_Cert", yesNo(c.SSLVerify)),
		n("Last_IO_Errno", int64(r.mu.ioErr.code)),
		s("Last_IO_Error", r.mu.ioErr.msg),
		n("Last_SQL_Errno", int64(r.mu.sqlErr.code)),
		s("Last_SQL_Error", r.mu.sqlErr.msg),
		s("Replicate_Ignore_Server_Ids", kept("IGNORE_SERVER_IDS")),
		n("Master_Server_Id", uint64(r.mu.sourceID)),
		s("Master_SSL_Crl", c.Kept["MASTER_SSL_CRL"]),
		s("Master_SSL_Crlpath", c.Kept["MASTER_SSL_CRLPATH"]),
		s("Using_Gtid", usingGTID),
		s("Gtid_IO_Pos", r.mu.received.String()),
		s("Replicate_Do_Domain_Ids", kept("DO_DOMAIN_IDS")),
		s("Replicate_Ignore_Domain_Ids", kept("IGNORE_DOMAIN_IDS")),
		s("Parallel_Mode", "none"),
		n("SQL_Delay", delay),
		n("SQL_Remaining_Delay", nil),
		s("Slave_SQL_Running_State", r.mu.sqlState),
		n("Slave_DDL_Groups", uint64(0)),
		n("Slave_Non_Transactional_Groups", uint64(0)),
		n("Slave_Transactional_Groups", r.mu.counter),
	)
	if all {
		cols = append(cols,
			n("Retried_transactions", uint64(0)),
			n("Max_relay_log_size", uint64(0)),
			n("Executed_log_entries", r.mu.counter),
			n("Slave_received_heartbeats", r.mu.heartbeats),
			s("Slave_heartbeat_period", strconv.FormatFloat(c.HeartbeatPeriod, 'f', 3, 64)),
			s("Gtid_Slave_Pos", r.mu.applied.String()),
		)
	}
	return cols, r.mu.configured
}
