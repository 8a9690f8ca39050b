package sqlserver

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/binlog"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// The binary log's side of a commit (§17.13.1): the storage engine's
// commit hook turns each commit of a client session into one group of the
// log, under the database's commit lock, so that the groups of a table
// follow its commits. Row changes become a Gtid, a Table_map per table, its
// rows events and an Xid; a commit that changes a definition (CREATE,
// ALTER, DROP, RENAME, TRUNCATE TABLE, views, triggers…) becomes a Gtid
// and a Query of the client's statement, its rows (an ALTER's copy) not
// logged. CREATE and DROP DATABASE, which commit no transaction, are
// logged after they succeed (binlogDatabaseStatement).
//
// Not logged: a session with sql_log_bin = 0, temporary tables (their
// databases have no journal), the system databases, and commits that no
// session made (a cluster secondary's apply of its primary's journal does
// not commit through the hook at all). The event scheduler's session is
// logged as client sessions are. A binary-log replica's applier session
// is logged only with --log-slave-updates, each group under its source's
// GTID (Session.origin).

// BinlogOptions configure the binary log (--log-bin and the options of
// §17.13.1). The zero value (Enabled false) keeps no log.
type BinlogOptions struct {
	Enabled bool
	// Base is the files' base path: empty for <root>/miraj-bin; a
	// relative one is under the root.
	Base            string
	ServerID        uint32
	DomainID        uint32
	MaxSize         int64
	Expire          time.Duration
	SyncEvery       int
	NoChecksum      bool
	StrictMode      bool
	LogSlaveUpdates bool
}

// binlogServer is the server's binary log: the log and the options it was
// opened with.
type binlogServer struct {
	log  *binlog.Log
	opts BinlogOptions
	slog *slog.Logger
	// tables caches each definition's binary log columns.
	tables sync.Map // *storage.TableDef -> *binlog.Table (DB empty; copied per database)
	// failed counts groups the log refused (the commit stands: §17.13.6).
	failed atomic.Uint64
	// replicas registered by COM_REGISTER_SLAVE (SHOW SLAVE HOSTS).
	replicas replicaRegistry
}

// activeBinlog is the process's binary log, read by the live variables
// (binlog_vars.go); set once by New.
var activeBinlog atomic.Pointer[binlogServer]

// systemDatabases are never logged (§17.13.6).
func systemDatabase(name string) bool {
	switch strings.ToLower(name) {
	case "mysql", "information_schema", "performance_schema", "sys", "miraj":
		return true
	}
	return false
}

// binlogNote is what a group takes from the committing session.
type binlogNote struct {
	info    binlog.GroupInfo
	db      string
	stmt    string
	sqlMode string
}

// sessionServerID is the server id of the session's groups: its own SET
// SESSION server_id, else @@global.server_id.
func sessionServerID(s *Session) uint32 {
	if s != nil {
		if id := s.serverID.Load(); id != 0 {
			return id
		}
	}
	return binlogServerID()
}

// noteOf reads the session's binary log settings; false when the
// session's writes are not logged.
func (b *binlogServer) noteOf(s *Session) (binlogNote, bool) {
	if s == nil {
		return binlogNote{}, false
	}
	// Reads of session variables take no context (a new one costs more
	// than the rest of the group: every system variable is copied).
	var ctx *sql.Context
	if v, err := s.GetSessionVariable(ctx, "sql_log_bin"); err == nil && !boolValue(v) {
		return binlogNote{}, false
	}
	if s.repl.applier && !b.opts.LogSlaveUpdates {
		return binlogNote{}, false
	}
	n := binlogNote{info: binlog.GroupInfo{ServerID: sessionServerID(s), Domain: b.opts.DomainID, Strict: b.opts.StrictMode, ThreadID: s.ID()}}
	if v, err := s.GetSessionVariable(ctx, "gtid_domain_id"); err == nil {
		if d, ok := funcs.AsUint64(v); ok {
			n.info.Domain = uint32(d)
		}
	}
	if v, err := s.GetSessionVariable(ctx, "gtid_seq_no"); err == nil {
		if q, ok := funcs.AsUint64(v); ok && q > 0 {
			n.info.Seq = q
			// Used once: the next group takes the domain's next again.
			s.BaseSession.SetSessionVariable(sql.NewEmptyContext(), "gtid_seq_no", uint64(0))
		}
	}
	if o := s.repl.origin; o != nil {
		// A replica's group keeps its source's GTID: server id, domain
		// and sequence (its event headers carry that server id too, so
		// that a replica of this one ignores its own writes that come
		// back around a ring).
		n.info.ServerID, n.info.Domain, n.info.Seq = o.Server, o.Domain, o.Seq
		s.repl.origin = nil
	}
	if q := s.stmt.Load(); q != nil {
		n.stmt = *q
	}
	n.db = s.GetCurrentDatabase()
	if v, err := s.GetSessionVariable(ctx, "sql_mode"); err == nil {
		n.sqlMode = fmt.Sprint(v)
	}
	return n, true
}

// Committed builds and appends the group of one commit.
func (b *binlogServer) Committed(db *storage.DB, ops []*storage.Op, cat *storage.Catalog, note any) {
	if db.Journal() == nil || systemDatabase(db.Name()) {
		return
	}
	s, _ := note.(*Session)
	n, ok := b.noteOf(s)
	if !ok {
		return
	}
	g := binlog.NewGroup(n.info)
	ddl := false
	for _, op := range ops {
		switch {
		case op.Kind == storage.OpInsert, op.Kind == storage.OpUpdate, op.Kind == storage.OpDelete,
			op.Kind == storage.OpSetCounters, op.Kind == storage.OpEpoch:
		case op.Kind == storage.OpPutObject && op.ObjKind == objReplicaPosition:
			// A binary-log replica's position, kept with its rows: not
			// part of the group (addRow skips it).
		default:
			ddl = true
		}
	}
	if ddl {
		if n.stmt == "" {
			b.slog.Warn("binary log: a definition change without its statement is not logged", "database", db.Name())
			b.failed.Add(1)
			return
		}
		g.Query(queryDatabase(n.db, db.Name()), n.stmt, binlog.SQLModeBits(n.sqlMode))
	} else {
		for _, op := range ops {
			if err := b.addRow(g, db.Name(), cat, op); err != nil {
				b.slog.Error("binary log: a commit is not logged", "database", db.Name(), "err", err)
				b.failed.Add(1)
				return
			}
		}
	}
	if g.Empty() {
		return
	}
	if _, _, err := b.log.Append(g); err != nil {
		b.slog.Error("binary log: a commit is not logged", "database", db.Name(), "err", err)
		b.failed.Add(1)
	}
}

// queryDatabase is the database a DDL's Query runs in on the replica: the
// session's, or the one committed to when the session has none.
func queryDatabase(current, committed string) string {
	if current != "" {
		return current
	}
	return committed
}

// addRow adds one row op to g.
func (b *binlogServer) addRow(g *binlog.Group, dbName string, cat *storage.Catalog, op *storage.Op) error {
	var kind binlog.EventType
	switch op.Kind {
	case storage.OpInsert:
		kind = binlog.WriteRowsEventV1
	case storage.OpUpdate:
		kind = binlog.UpdateRowsEventV1
	case storage.OpDelete:
		kind = binlog.DeleteRowsEventV1
	default:
		return nil
	}
	t, ok := cat.Table(op.Table)
	if !ok {
		return fmt.Errorf("table %s not in the committed catalog", op.Table)
	}
	bt, sch, err := b.table(dbName, t.Def())
	if err != nil {
		return err
	}
	var before, after []any
	if op.Old != nil {
		if before, err = binlogValues(sch, op.Old.Values()); err != nil {
			return err
		}
	}
	if op.Row != nil && kind != binlog.DeleteRowsEventV1 {
		if after, err = binlogValues(sch, op.Row.Values()); err != nil {
			return err
		}
	}
	return g.Row(kind, bt, before, after)
}

type binlogTable struct {
	t   *binlog.Table
	sch sql.Schema
}

// table is the logged form of a definition in database db (cached).
func (b *binlogServer) table(db string, def *storage.TableDef) (*binlog.Table, sql.Schema, error) {
	if v, ok := b.tables.Load(def); ok {
		bt := v.(*binlogTable)
		if bt.t.DB == db {
			return bt.t, bt.sch, nil
		}
	}
	ti, err := tabledef.Decode(def)
	if err != nil {
		return nil, nil, err
	}
	sch := ti.Schema.Schema
	t := &binlog.Table{DB: db, Name: def.Name, Cols: make([]binlog.Column, len(sch))}
	for i, c := range sch {
		col, err := binlogColumn(c.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("table %s.%s column %s: %w", db, def.Name, c.Name, err)
		}
		col.Nullable = c.Nullable
		t.Cols[i] = col
	}
	b.tables.Store(def, &binlogTable{t: t, sch: sch})
	return t, sch, nil
}

// binlogColumn maps a column type to its binary log type (§17.13.3's
// mapping: JSON as LONGTEXT).
func binlogColumn(typ sql.Type) (binlog.Column, error) {
	switch typ.Type() {
	case querypb.Type_INT8, querypb.Type_UINT8:
		return binlog.Column{Type: binlog.TypeTiny}, nil
	case querypb.Type_INT16, querypb.Type_UINT16:
		return binlog.Column{Type: binlog.TypeShort}, nil
	case querypb.Type_INT24, querypb.Type_UINT24:
		return binlog.Column{Type: binlog.TypeInt24}, nil
	case querypb.Type_INT32, querypb.Type_UINT32:
		return binlog.Column{Type: binlog.TypeLong}, nil
	case querypb.Type_INT64, querypb.Type_UINT64:
		return binlog.Column{Type: binlog.TypeLongLong}, nil
	case querypb.Type_FLOAT32:
		return binlog.Column{Type: binlog.TypeFloat}, nil
	case querypb.Type_FLOAT64:
		return binlog.Column{Type: binlog.TypeDouble}, nil
	case querypb.Type_DECIMAL:
		d := typ.(sql.DecimalType)
		return binlog.Column{Type: binlog.TypeNewDecimal, Precision: int(d.Precision()), Scale: int(d.Scale())}, nil
	case querypb.Type_YEAR:
		return binlog.Column{Type: binlog.TypeYear}, nil
	case querypb.Type_DATE:
		return binlog.Column{Type: binlog.TypeDate}, nil
	case querypb.Type_DATETIME, querypb.Type_TIMESTAMP:
		c := binlog.Column{Type: binlog.TypeDatetime2}
		if typ.Type() == querypb.Type_TIMESTAMP {
			c.Type = binlog.TypeTimestamp2
		}
		if dt, ok := typ.(sql.DatetimeType); ok {
			c.Scale = dt.Precision()
		}
		return c, nil
	case querypb.Type_TIME:
		c := binlog.Column{Type: binlog.TypeTime2}
		if tt, ok := typ.(funcs.TimeType); ok {
			c.Scale = int(tt.Digits)
		}
		return c, nil
	case querypb.Type_ENUM:
		n := len(typ.(sql.EnumType).Values())
		c := binlog.Column{Type: binlog.TypeEnum, Length: 1}
		if n > 255 {
			c.Length = 2
		}
		return c, nil
	case querypb.Type_SET:
		n := (len(typ.(sql.SetType).Values()) + 7) / 8
		if n > 4 {
			n = 8
		}
		return binlog.Column{Type: binlog.TypeSet, Length: n}, nil
	case querypb.Type_BIT:
		return binlog.Column{Type: binlog.TypeBit, Length: int(typ.(types.BitType).NumberOfBits())}, nil
	case querypb.Type_CHAR, querypb.Type_BINARY:
		st := typ.(sql.StringType)
		return binlog.Column{Type: binlog.TypeString, Length: int(st.MaxByteLength())}, nil
	case querypb.Type_VARCHAR, querypb.Type_VARBINARY:
		st := typ.(sql.StringType)
		return binlog.Column{Type: binlog.TypeVarchar, Length: int(st.MaxByteLength())}, nil
	case querypb.Type_TEXT, querypb.Type_BLOB:
		st := typ.(sql.StringType)
		n := st.MaxByteLength()
		switch {
		case n <= 255:
			return binlog.Column{Type: binlog.TypeBlob, Length: 1}, nil
		case n <= 65535:
			return binlog.Column{Type: binlog.TypeBlob, Length: 2}, nil
		case n <= 1<<24-1:
			return binlog.Column{Type: binlog.TypeBlob, Length: 3}, nil
		}
		return binlog.Column{Type: binlog.TypeBlob, Length: 4}, nil
	case querypb.Type_JSON:
		return binlog.Column{Type: binlog.TypeBlob, Length: 4}, nil
	case querypb.Type_GEOMETRY:
		return binlog.Column{Type: binlog.TypeGeometry, Length: 4}, nil
	}
	return binlog.Column{}, fmt.Errorf("type %s has no binary log form", typ)
}

// binlogValues converts a stored row's values to the binary log's (see
// binlog.Column).
func binlogValues(sch sql.Schema, vals []any) ([]any, error) {
	out := make([]any, len(vals))
	for i, v := range vals {
		if v == nil || i >= len(sch) {
			continue
		}
		typ := sch[i].Type
		switch x := v.(type) {
		case decimal.Decimal:
			scale := int32(0)
			if d, ok := typ.(sql.DecimalType); ok {
				scale = int32(d.Scale())
			}
			out[i] = x.StringFixed(scale)
		case types.Timespan:
			out[i] = time.Duration(x.AsMicroseconds()) * time.Microsecond
		case sql.JSONWrapper:
			s, err := types.JsonToMySqlString(x)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", sch[i].Name, err)
			}
			out[i] = s
		case types.GeometryValue:
			out[i] = x.Serialize()
		case time.Time:
			out[i] = x
		case int16:
			out[i] = int64(x)
		default:
			out[i] = v
		}
	}
	return out, nil
}

// binlogDatabaseStatement logs CREATE or DROP DATABASE of database name
// once it succeeded (err nil), as a Query of the client's statement; it
// returns err.
func (s *Server) binlogDatabaseStatement(ctx *sql.Context, name string, err error) error {
	if err != nil || s == nil || s.binlog == nil || systemDatabase(name) {
		return err
	}
	sess, _ := ctx.Session.(*Session)
	n, ok := s.binlog.noteOf(sess)
	if !ok {
		return nil
	}
	stmt := ctx.Query()
	if stmt == "" {
		stmt = n.stmt
	}
	g := binlog.NewGroup(n.info)
	g.Query(n.db, stmt, binlog.SQLModeBits(n.sqlMode))
	if _, _, aerr := s.binlog.log.Append(g); aerr != nil {
		s.binlog.slog.Error("binary log: a statement is not logged", "database", name, "err", aerr)
		s.binlog.failed.Add(1)
	}
	return nil
}

// applierState marks the internal session of a binary-log replica's SQL
// thread.
type applierState struct {
	// applier: the session's commits are logged only with
	// --log-slave-updates, under origin, the source's GTID of the group it
	// applies (used once, by the group's first commit that is logged).
	applier bool
	origin  *binlog.GTID
}
