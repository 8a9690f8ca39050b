package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/miraj-db/miraj/internal/sqlserver"
)

// binlogFlags are the binary log's options (§17.13.1).
type binlogFlags struct {
	logBin          logBinValue
	serverID        uint
	domainID        uint
	maxSize         int64
	expireSeconds   int64
	expireDays      int64
	syncBinlog      int
	checksum        string
	strictMode      bool
	logSlaveUpdates bool
}

// logBinValue is --log-bin: alone (or ON), the log under the data
// directory; with a path, the files' base.
type logBinValue struct {
	on   bool
	base string
}

func (v *logBinValue) IsBoolFlag() bool { return true }
func (v *logBinValue) String() string {
	if v == nil || !v.on {
		return "OFF"
	}
	if v.base != "" {
		return v.base
	}
	return "ON"
}
func (v *logBinValue) Set(s string) error {
	switch strings.ToUpper(s) {
	case "TRUE", "ON", "1":
		v.on, v.base = true, ""
	case "FALSE", "OFF", "0":
		v.on, v.base = false, ""
	default:
		v.on, v.base = true, s
	}
	return nil
}

var binlogOptionNames = []string{"log-bin", "server-id", "gtid-domain-id", "max-binlog-size", "binlog-expire-logs-seconds",
	"expire-logs-days", "sync-binlog", "binlog-checksum", "gtid-strict-mode", "log-slave-updates"}

func defineBinlogFlags(fs *flag.FlagSet, b *binlogFlags) {
	fs.Var(&b.logBin, "log-bin", "keep a binary log (MariaDB format) for replicas and change data capture: alone, ROOT/miraj-bin.NNNNNN.mrb; =`BASE`, the files' base path")
	fs.UintVar(&b.serverID, "server-id", 1, "server `ID` in the binary log's GTIDs; must differ from each replica's")
	fs.UintVar(&b.domainID, "gtid-domain-id", 0, "GTID `DOMAIN` of this server's groups (@@gtid_domain_id)")
	fs.Int64Var(&b.maxSize, "max-binlog-size", 1<<30, "`BYTES` past which the binary log goes on in a new file (4096 to 1 GiB)")
	fs.Int64Var(&b.expireSeconds, "binlog-expire-logs-seconds", 0, "binary log files older than `SECONDS` are removed at each rotation; 0: never")
	fs.Int64Var(&b.expireDays, "expire-logs-days", 0, "as --binlog-expire-logs-seconds, in `DAYS`")
	fs.IntVar(&b.syncBinlog, "sync-binlog", 0, "fsync the binary log every `N` groups; 0: left to the system")
	fs.StringVar(&b.checksum, "binlog-checksum", "CRC32", "`ALGORITHM` of the events' checksums: CRC32 or NONE")
	fs.BoolVar(&b.strictMode, "gtid-strict-mode", false, "refuse (1950) a GTID sequence that does not follow its domain's")
	fs.BoolVar(&b.logSlaveUpdates, "log-slave-updates", false, "a replica writes what it applies to its own binary log")
}

// config checks the options and makes the server's.
func (b *binlogFlags) config() (sqlserver.BinlogOptions, error) {
	o := sqlserver.BinlogOptions{Enabled: b.logBin.on, Base: b.logBin.base, MaxSize: b.maxSize, SyncEvery: b.syncBinlog,
		StrictMode: b.strictMode, LogSlaveUpdates: b.logSlaveUpdates}
	if b.serverID == 0 || b.serverID > 1<<32-1 {
		return o, fmt.Errorf("--server-id %d: out of 1..4294967295", b.serverID)
	}
	if b.domainID > 1<<32-1 {
		return o, fmt.Errorf("--gtid-domain-id %d: out of 0..4294967295", b.domainID)
	}
	o.ServerID, o.DomainID = uint32(b.serverID), uint32(b.domainID)
	if b.maxSize < 4096 || b.maxSize > 1<<30 {
		return o, fmt.Errorf("--max-binlog-size %d: out of 4096..1073741824", b.maxSize)
	}
	if b.expireSeconds < 0 || b.expireDays < 0 || b.syncBinlog < 0 {
		return o, fmt.Errorf("--binlog-expire-logs-seconds, --expire-logs-days and --sync-binlog take a positive number or 0")
	}
	if b.expireSeconds > 0 && b.expireDays > 0 {
		return o, fmt.Errorf("--binlog-expire-logs-seconds and --expire-logs-days: give one of them")
	}
	o.Expire = time.Duration(b.expireSeconds)*time.Second + time.Duration(b.expireDays)*24*time.Hour
	switch strings.ToUpper(b.checksum) {
	case "CRC32":
	case "NONE":
		o.NoChecksum = true
	default:
		return o, fmt.Errorf("--binlog-checksum %q: CRC32 or NONE", b.checksum)
	}
	return o, nil
}
