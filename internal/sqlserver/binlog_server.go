package sqlserver

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/binlog"
	"github.com/miraj-db/miraj/internal/binlog/replica"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// openBinlog opens the binary log when the configuration asks for one,
// installs the commit hook and the variables of §17.13.1.
func (s *Server) openBinlog() error {
	o := s.cfg.Binlog
	s.engine.Analyzer.Catalog.RegisterFunction(sql.NewEmptyContext(), binlogGTIDPosFunction())
	if !o.Enabled {
		// go-mysql-server's variables stay as they are (its engine
		// suites assert them): @@log_bin is 0, the MariaDB ones unknown.
		activeBinlog.Store(nil)
		return nil
	}
	registerBinlogVariables(o)
	base := o.Base
	if base == "" {
		base = binlog.DefaultBase
	}
	if !filepath.IsAbs(base) {
		base = filepath.Join(s.cfg.Root, base)
	}
	lg, err := binlog.Open(binlog.Options{Dir: filepath.Dir(base), Base: filepath.Base(base), MaxSize: o.MaxSize,
		Expire: o.Expire, SyncEvery: o.SyncEvery, NoChecksum: o.NoChecksum, ServerID: o.ServerID})
	if err != nil {
		return fmt.Errorf("binary log: %w", err)
	}
	if o.ServerID != 0 {
		globalServerID.Store(o.ServerID)
	}
	b := &binlogServer{log: lg, opts: o, slog: s.log}
	s.binlog = b
	activeBinlog.Store(b)
	s.storage.SetCommitHook(b)
	end := lg.End()
	st := lg.State()
	s.log.Info("binary log open", "file", end.File, "gtid_binlog_state", st.String(), "server_id", o.ServerID)
	return nil
}

// endBinlogDumps ends the replicas' streams, which hold their
// connections, as the server shuts down; the log stays open for the
// commits still under way.
func (s *Server) endBinlogDumps() {
	if s.binlog != nil {
		s.binlog.log.EndDumps()
	}
}

// closeBinlog closes the binary log (a Stop event ends the active file);
// dumps end. Safe to call twice.
func (s *Server) closeBinlog() {
	if s.binlog == nil {
		return
	}
	if err := s.binlog.log.Close(); err != nil {
		s.log.Error("binary log: close", "err", err)
	}
}

// binlogLive are the read-only variables read from the log as it is.
var binlogLive = map[string]func(b *binlogServer) any{
	"log_bin":           func(b *binlogServer) any { return boolInt(b != nil) },
	"log_bin_basename":  func(b *binlogServer) any { return binlogPath(b, func(l *binlog.Log) string { return l.BasePath() }) },
	"log_bin_index":     func(b *binlogServer) any { return binlogPath(b, func(l *binlog.Log) string { return l.IndexPath() }) },
	"gtid_binlog_pos":   func(b *binlogServer) any { return binlogState(b, false) },
	"gtid_current_pos":  currentPos,
	"gtid_binlog_state": func(b *binlogServer) any { return binlogState(b, true) },
	"binlog_checksum":   func(b *binlogServer) any { return checksumName(b) },
	"max_binlog_size": func(b *binlogServer) any {
		if b != nil {
			return b.log.MaxSize()
		}
		if n := unloggedMaxSize.Load(); n != 0 {
			return n
		}
		return int64(binlog.DefaultMaxSize)
	},
	"binlog_expire_logs_seconds": func(b *binlogServer) any {
		return binlogOpt(b, func(o BinlogOptions) int64 { return int64(o.Expire.Seconds()) }, 0)
	},
	"expire_logs_days": func(b *binlogServer) any {
		return binlogOpt(b, func(o BinlogOptions) int64 { return int64(o.Expire.Hours() / 24) }, 0)
	},
	"sync_binlog": func(b *binlogServer) any {
		return binlogOpt(b, func(o BinlogOptions) int64 { return int64(o.SyncEvery) }, 0)
	},
	"gtid_strict_mode":  func(b *binlogServer) any { return boolInt(b != nil && b.opts.StrictMode) },
	"log_slave_updates": func(b *binlogServer) any { return boolInt(b != nil && b.opts.LogSlaveUpdates) },
}

func boolInt(v bool) int8 {
	if v {
		return 1
	}
	return 0
}

func binlogPath(b *binlogServer, fn func(*binlog.Log) string) any {
	if b == nil {
		return nil
	}
	return fn(b.log)
}

// currentPos is @@gtid_current_pos: the replica's gtid_slave_pos with,
// per domain, this server's own newer writes of its binary log.
func currentPos(b *binlogServer) any {
	slave := ""
	if r := activeReplica.Load(); r != nil {
		slave = r.GTIDSlavePos()
	}
	var id uint32
	if b != nil {
		id = binlogServerID()
	}
	return replica.CurrentPos(binlogState(b, false).(string), slave, id)
}

func binlogState(b *binlogServer, full bool) any {
	if b == nil {
		return ""
	}
	st := b.log.State()
	if full {
		return st.String()
	}
	return st.Pos().String()
}

func checksumName(b *binlogServer) any {
	if b == nil && unloggedNoChecksum.Load() || b != nil && !b.log.Checksum() {
		return "NONE"
	}
	return "CRC32"
}

// The values SET GLOBAL gives binlog_checksum and max_binlog_size on a
// server without a binary log: shown, as MariaDB shows them, for the log
// they would apply to (none until the server starts with --log-bin).
// unloggedMaxSize is 0 until set: the default.
var (
	unloggedNoChecksum atomic.Bool
	unloggedMaxSize    atomic.Int64
)

// setBinlogVariable applies SET GLOBAL binlog_checksum (a change opens a
// new file) or max_binlog_size (from the next group) to the log.
func setBinlogVariable(name string, v any) error {
	b := activeBinlog.Load()
	switch name {
	case "binlog_checksum":
		on := !strings.EqualFold(fmt.Sprint(v), "NONE")
		if b == nil {
			unloggedNoChecksum.Store(!on)
			return nil
		}
		return b.log.SetChecksum(on)
	case "max_binlog_size":
		n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		if err != nil {
			return err
		}
		if b == nil {
			if n < binlog.MinMaxSize || n > binlog.DefaultMaxSize {
				return fmt.Errorf("max_binlog_size %d out of %d..%d", n, binlog.MinMaxSize, binlog.DefaultMaxSize)
			}
			unloggedMaxSize.Store(n)
			return nil
		}
		return b.log.SetMaxSize(n)
	}
	return nil
}

func binlogOpt(b *binlogServer, fn func(BinlogOptions) int64, def int64) any {
	if b == nil || fn(b.opts) == 0 && def != 0 {
		return def
	}
	return fn(b.opts)
}

// registerBinlogVariables defines the variables of §17.13.1: the log's
// read-only ones (live), and the session's sql_log_bin, gtid_domain_id and
// gtid_seq_no; binlog_format stays go-mysql-server's, which accepts ROW
// only (1231 otherwise), and binlog_row_image is FULL, read-only.
func registerBinlogVariables(o BinlogOptions) {
	global := sql.GetMysqlScope(sql.SystemVariableScope_Global)
	var vars []sql.SystemVariable
	for name, fn := range binlogLive {
		fn := fn
		v := &sql.MysqlSystemVariable{Name: name, Scope: global,
			ValueFunction: func() (any, error) { return fn(activeBinlog.Load()), nil }}
		switch name {
		case "log_bin", "gtid_strict_mode", "log_slave_updates":
			v.Type, v.Default = types.NewSystemBoolType(name), int8(0)
		case "max_binlog_size":
			// Settable (§17.13.1), 4096 bytes to 1 GiB.
			v.Type, v.Default = types.NewSystemIntType(name, binlog.MinMaxSize, binlog.DefaultMaxSize, false), int64(binlog.DefaultMaxSize)
		case "binlog_checksum":
			// Settable: CRC32 or NONE; a change opens a new file.
			v.Type, v.Default = types.NewSystemEnumType(name, "NONE", "CRC32"), "CRC32"
		case "binlog_expire_logs_seconds", "expire_logs_days", "sync_binlog":
			v.Type, v.Default = types.Int64, int64(0)
		default:
			v.Type, v.Default = types.NewSystemStringType(name), ""
		}
		if name == "max_binlog_size" || name == "binlog_checksum" {
			name := name
			v.ValueFunction, v.Dynamic = nil, true
			v.NotifyChanged = func(ctx *sql.Context, scope sql.SystemVariableScope, val sql.SystemVarValue) error {
				return setBinlogVariable(name, val.Val)
			}
		}
		liveVariables[name] = func() any { return fn(activeBinlog.Load()) }
		vars = append(vars, v)
	}
	vars = append(vars,
		&sql.MysqlSystemVariable{Name: "sql_log_bin", Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session), Dynamic: true,
			Type: types.NewSystemBoolType("sql_log_bin"), Default: int8(1)},
		&sql.MysqlSystemVariable{Name: "gtid_domain_id", Scope: sql.GetMysqlScope(sql.SystemVariableScope_Both), Dynamic: true,
			Type: types.NewSystemUintType("gtid_domain_id", 0, 1<<32-1), Default: uint64(o.DomainID)},
		&sql.MysqlSystemVariable{Name: "gtid_seq_no", Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session), Dynamic: true,
			Type: types.NewSystemUintType("gtid_seq_no", 0, 1<<64-1), Default: uint64(0)},
		&sql.MysqlSystemVariable{Name: "binlog_row_image", Scope: global,
			Type: types.NewSystemEnumType("binlog_row_image", "FULL"), Default: "FULL"},
	)
	sql.SystemVariables.AddSystemVariables(vars)
	if _, done := sql.SystemVariables.(liveRegistry); !done {
		sql.SystemVariables = liveRegistry{sql.SystemVariables}
	}
}

// globalServerID is @@global.server_id outside a cluster (0: 1):
// --server-id with a binary log, then what SET GLOBAL server_id sets.
var globalServerID atomic.Uint32

// binlogServerID is @@global.server_id outside a cluster: --server-id with
// a binary log, or SET GLOBAL server_id's, else 1.
func binlogServerID() uint32 {
	if id := globalServerID.Load(); id != 0 {
		return id
	}
	return 1
}

// setGlobalServerID is SET GLOBAL server_id: the server id of the groups
// logged from now on (sessions that set their own keep it), of the binary
// log's own events, and the one a replica compares with its source's
// (1593). In a cluster @@server_id is the node's: 1238.
func setGlobalServerID(ctx *sql.Context, v any) error {
	if processCluster.node() != nil {
		return sql.ErrSystemVariableReadOnly.New("server_id")
	}
	id, err := strconv.ParseUint(fmt.Sprint(v), 10, 32)
	if err != nil {
		return err
	}
	globalServerID.Store(uint32(id))
	if b := activeBinlog.Load(); b != nil {
		b.log.SetServerID(uint32(id))
	}
	return nil
}

// checkGTIDSeqNo refuses, under --gtid-strict-mode, a SET gtid_seq_no that
// would log a sequence not after its domain's last (1950), as MariaDB
// does at the group's commit: the check is made here because a commit,
// once journaled, cannot be refused by the binary log.
func checkGTIDSeqNo(ctx *sql.Context, s *Session, name string, value any) error {
	if !strings.EqualFold(name, "gtid_seq_no") {
		return nil
	}
	b := activeBinlog.Load()
	if b == nil || !b.opts.StrictMode {
		return nil
	}
	seq, err := strconv.ParseUint(fmt.Sprint(value), 10, 64)
	if err != nil || seq == 0 {
		return nil // the variable's type refuses what is not a number
	}
	domain := b.opts.DomainID
	if v, err := s.GetSessionVariable(ctx, "gtid_domain_id"); err == nil {
		if d, ok := funcs.AsUint64(v); ok {
			domain = uint32(d)
		}
	}
	st := b.log.State()
	if last, ok := st.Pos()[domain]; ok && seq <= last.Seq {
		return mysql.NewSQLError(1950, "HY000", "An attempt was made to binlog GTID %d-%d-%d which would create an out-of-order sequence number with existing GTID %s, and gtid strict mode is enabled",
			domain, sessionServerID(s), seq, last)
	}
	return nil
}
