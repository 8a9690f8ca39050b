package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/binlog"
	"github.com/miraj-db/miraj/internal/binlog/replica"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/storage"
)

// replicaTarget applies a binary log replica's groups (§17.13.4) through
// one internal session, as root: privileges and read_only do not apply
// to it; the global read lock does, between groups (Begin).
type replicaTarget struct {
	srv *Server
	mu  sync.Mutex // one transaction at a time (the SQL thread, or SET gtid_slave_pos)
	// sess is made at the first Begin and kept: its variables are
	// copied once, not per group.
	sess *Session
	// ready says miraj.gtid_slave_pos exists.
	ready bool
}

// replicaSessionID is the internal session's connection id, outside the
// range the listener gives clients, for the read-lock gate's bookkeeping.
const replicaSessionID = 0xFFFFFF00

// objReplicaPosition is the catalog object kind of a replica's position
// record (replica/record.go), one per database, committed with the rows.
const objReplicaPosition = "replica_position"

func (t *replicaTarget) BinlogPos() string { return binlogState(t.srv.binlog, false).(string) }

func (t *replicaTarget) ServerID() uint32 {
	if _, v, ok := sql.SystemVariables.GetGlobal("server_id"); ok {
		if n, _, err := types.Uint32.Convert(context.Background(), v); err == nil {
			if id, ok := n.(uint32); ok {
				return id
			}
		}
	}
	return 1
}

func (t *replicaTarget) HasDatabase(db string) bool {
	_, ok := t.srv.storage.Database(db)
	return ok
}

func (t *replicaTarget) Records() map[string][]byte {
	out := map[string][]byte{}
	for _, db := range t.srv.storage.Databases() {
		if o, ok := db.Snapshot().Object(objReplicaPosition, "position"); ok {
			out[db.Name()] = o.Data
		}
	}
	return out
}

// session returns the internal session, made once.
func (t *replicaTarget) session() *Session {
	if t.sess == nil {
		sess := newSession(sql.NewBaseSessionWithClientServer("", sql.Client{User: "root", Address: "localhost"}, replicaSessionID), t.srv.storage)
		sess.repl.applier = true
		sess.readLock = t.srv.readLock
		sess.tables = t.srv.tables
		sess.cluster = &t.srv.cluster
		t.sess = sess
		ctx := sql.NewContext(context.Background(), sql.WithSession(sess))
		sess.SetSessionVariable(ctx, "autocommit", int8(0))
		sess.SetSessionVariable(ctx, "time_zone", "+00:00")
		sess.SetSessionVariable(ctx, "foreign_key_checks", int8(0))
	}
	return t.sess
}

func (t *replicaTarget) Begin(ctx context.Context, waiting func()) (replica.Txn, error) {
	t.mu.Lock()
	sess := t.session()
	if t.srv.readLock.holders.Load() > 0 && waiting != nil {
		waiting()
	}
	entered, err := t.srv.readLock.enter(ctx, replicaSessionID)
	if err != nil {
		t.mu.Unlock()
		return nil, replicaError(err)
	}
	tx := &replicaTxn{t: t, sess: sess, entered: entered}
	if !t.ready {
		for _, q := range replica.PositionTableDDL {
			if _, err := tx.Exec(ctx, "", "", q); err != nil {
				tx.Rollback()
				return nil, err
			}
		}
		t.ready = true
	}
	return tx, nil
}

// replicaTxn is one group's transaction in the internal session. Its
// statements run admitted: the group was admitted by the read-lock gate
// as a whole.
type replicaTxn struct {
	t       *replicaTarget
	sess    *Session
	entered bool
	mode    string
	ended   bool
}

func (x *replicaTxn) context(ctx context.Context) *sql.Context {
	return sql.NewContext(admitted(ctx), sql.WithSession(x.sess))
}

func (x *replicaTxn) Exec(ctx context.Context, db, sqlMode, q string) (replica.Result, error) {
	sctx := x.context(ctx)
	if db != "" && !x.t.HasDatabase(db) {
		// A DDL logged in a database that is gone (DROP DATABASE of the
		// current one, then CREATE DATABASE): run it in none.
		db = ""
	}
	x.sess.SetCurrentDatabase(db)
	if sqlMode != x.mode {
		if err := x.sess.SetSessionVariable(sctx, "sql_mode", sqlMode); err != nil {
			return replica.Result{}, replicaError(err)
		}
		x.mode = sqlMode
	}
	// The statement's text, for the binary log's Query event of a DDL
	// (log_slave_updates), as a client's statement in progress.
	x.sess.stmt.Store(&q)
	defer x.sess.stmt.Store(nil)
	sctx = sctx.WithQuery(q)
	_, iter, _, err := x.t.srv.engine.Query(sctx, q)
	if err != nil {
		return replica.Result{}, replicaErrorOf(err, q, db)
	}
	rows, err := sql.RowIterToRows(sctx, iter)
	if err != nil {
		return replica.Result{}, replicaErrorOf(err, q, db)
	}
	var res replica.Result
	if len(rows) == 1 && len(rows[0]) == 1 {
		if ok, isOK := rows[0][0].(types.OkResult); isOK {
			res.Affected = ok.RowsAffected
			res.Matched = ok.RowsAffected
			if ui, isUI := ok.Info.(plan.UpdateInfo); isUI {
				res.Matched = uint64(ui.Matched)
			}
		}
	}
	return res, nil
}

// Commit commits the group with its record in each of dbs. When the group
// wrote a database besides the position database, the position
// database's commit does not wait for its fsync (storage.Tx.DeferSync):
// one fsync a group, not two. A crash that loses it loses nothing the
// replica needs: the record in the other databases, which waited, names
// the group, and the replica resumes by redoing only its position there
// (record.go). Not in a cluster, whose followers must not receive frames
// their primary could lose.
func (x *replicaTxn) Commit(ctx context.Context, dbs []string, rec []byte) error {
	defer x.end()
	sctx := x.context(ctx)
	var position *storage.Tx
	others := false
	for _, name := range dbs {
		db, ok := x.t.srv.storage.Database(name)
		if !ok {
			continue
		}
		tx := x.sess.storageTx(db)
		if err := tx.PutObject(objReplicaPosition, "position", rec); err != nil {
			x.sess.Rollback(sctx, nil)
			return replicaError(err)
		}
		if strings.EqualFold(name, replica.PositionDatabase) {
			position = tx
		} else if db.Journal() != nil {
			others = true
		}
	}
	if position != nil && others && x.t.srv.cluster.node() == nil {
		position.DeferSync()
	}
	if err := x.sess.CommitTransaction(sctx, sctx.GetTransaction()); err != nil {
		x.sess.Rollback(sctx, nil)
		sctx.SetTransaction(nil)
		return replicaError(err)
	}
	sctx.SetTransaction(nil)
	return nil
}

// Origin keeps the group's source GTID for the binary log's hook
// (log_slave_updates).
func (x *replicaTxn) Origin(domain, server uint32, seq uint64) {
	x.sess.repl.origin = &binlog.GTID{Domain: domain, Server: server, Seq: seq}
}

func (x *replicaTxn) Rollback() {
	if x.ended {
		return
	}
	sctx := x.context(context.Background())
	x.sess.Rollback(sctx, nil)
	sctx.SetTransaction(nil)
	x.end()
}

func (x *replicaTxn) end() {
	if x.ended {
		return
	}
	x.ended = true
	x.sess.repl.origin = nil
	if x.entered {
		x.t.srv.readLock.exit()
	}
	x.t.mu.Unlock()
}

// Columns reads the table's columns from the catalog (information_schema
// order and types).
func (t *replicaTarget) Columns(ctx context.Context, db, table string) ([]replica.Column, error) {
	sess := newSession(sql.NewBaseSessionWithClientServer("", sql.Client{User: "root", Address: "localhost"}, 0), t.srv.storage)
	sess.cluster = &t.srv.cluster
	sctx := sql.NewContext(ctx, sql.WithSession(sess))
	q := "SELECT COLUMN_NAME, COLUMN_TYPE, COLUMN_KEY FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " + sqlString(db) +
		" AND TABLE_NAME = " + sqlString(table) + " ORDER BY ORDINAL_POSITION"
	_, iter, _, err := t.srv.engine.Query(sctx, q)
	if err != nil {
		return nil, replicaError(err)
	}
	rows, err := sql.RowIterToRows(sctx, iter)
	sess.Rollback(sctx, nil)
	if err != nil {
		return nil, replicaError(err)
	}
	if len(rows) == 0 {
		return nil, &replica.Error{Code: mysql.ERNoSuchTable, State: "42S02", Message: fmt.Sprintf("Table '%s.%s' doesn't exist", db, table)}
	}
	cols := make([]replica.Column, len(rows))
	for i, r := range rows {
		cols[i] = replica.Column{Name: fmt.Sprint(r[0]), Type: strings.ToLower(fmt.Sprint(r[1])), Key: fmt.Sprint(r[2]) == "PRI"}
	}
	return cols, nil
}

// replicaErrorOf is err as the client running q in db would get it.
func replicaErrorOf(err error, q, db string) error {
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		se = sql.CastSQLError(mysqlerr.From(err))
	}
	if m := wrappedSQLError.FindStringSubmatch(se.Message); se.Num == mysql.ERUnknownError && m != nil {
		code, _ := strconv.Atoi(m[2])
		return &replica.Error{Code: uint16(code), State: m[3], Message: m[1]}
	}
	fixed := mysqlerr.Translate(se, mysqlerr.Context{Query: q, DB: db})
	return &replica.Error{Code: uint16(fixed.Num), State: fixed.State, Message: fixed.Message}
}

func replicaError(err error) error {
	var re *replica.Error
	if errors.As(err, &re) {
		return re
	}
	return replicaErrorOf(err, "", "")
}

// WriteRows applies a row event by storage's point writes, without a
// statement (replica.RowWriter), when the table is one a compiled client
// write could take (plainTarget: a primary key; no CHECK, foreign key,
// trigger or generated column) and every value converts exactly
// (convertExact); otherwise it leaves the event to the statements. A write
// that fails undoes the event's writes and leaves it to the statements
// too, which report the error in MySQL's words.
func (x *replicaTxn) WriteRows(ctx context.Context, dbName, table string, kind replica.RowKind, rows [][]any) (bool, int, error) {
	db, ok := x.t.srv.storage.Database(dbName)
	if !ok || len(rows) == 0 {
		return false, -1, nil
	}
	sctx := x.context(ctx)
	sess := x.sess
	def, _, sch, ok := plainTarget(sess.defsIn(db), db, &writePlan{kind: writeInsert, table: table})
	if !ok {
		return false, -1, nil
	}
	auto := -1
	for pos, col := range sch {
		if col.AutoIncrement {
			auto = pos
		}
	}
	for _, r := range rows {
		if len(r) != len(sch) {
			return false, -1, nil
		}
		for i, v := range r {
			if v == nil {
				if !sch[i].Nullable {
					return false, -1, nil
				}
				continue
			}
			out, ok := replicaValue(sctx, sch[i].Type, v)
			if !ok {
				return false, -1, nil
			}
			r[i] = out
		}
		if auto >= 0 && kind == replica.RowsInsert {
			if n, ok := funcs.AsInt64(r[auto]); !ok || n <= 0 {
				return false, -1, nil // 0 or negative: the statement's way (NO_AUTO_VALUE_ON_ZERO)
			}
		}
	}
	if kind == replica.RowsUpdate {
		for j := 0; j < len(rows); j += 2 {
			for _, pos := range def.PK {
				if c, err := sch[pos].Type.Compare(sctx, rows[j][pos], rows[j+1][pos]); err != nil || c != 0 {
					return false, -1, nil // a new primary key: the statement's way
				}
			}
		}
	}

	tx := sess.pointTx(db)
	var sp storage.Savepoint
	several := len(rows) > 1 && kind != replica.RowsUpdate || len(rows) > 2
	if several {
		sp = tx.Savepoint()
	}
	undo := func() (bool, int, error) {
		if several {
			tx.RollbackTo(sp)
		}
		return false, -1, nil
	}
	timeout := sess.lockWaitTimeout(sctx)
	step := 1
	if kind == replica.RowsUpdate {
		step = 2
	}
	for j := 0; j < len(rows); j += step {
		st, found := tx.Meta().Table(table)
		if !found || st.Def() != def {
			return undo()
		}
		if kind == replica.RowsInsert {
			if auto >= 0 {
				n, _ := funcs.AsInt64(rows[j][auto])
				st.BumpAuto(uint64(n) + 1)
			}
			if _, err := tx.InsertPoint(st, rows[j]); err != nil {
				return undo()
			}
			continue
		}
		old, found, err := tx.Get(st, storage.KeyRow(rows[j]))
		if err != nil {
			return undo()
		}
		if !found {
			return true, j / step, nil
		}
		if kind == replica.RowsUpdate {
			if equal, err := sql.Row(old.Values()).Equals(sctx, sql.Row(rows[j+1]), sch); err == nil && equal {
				continue
			}
		}
		if err := tx.LockRowForWrite(sctx, st, old, timeout); err != nil {
			return undo()
		}
		if kind == replica.RowsUpdate {
			err = tx.UpdatePoint(st, old, rows[j+1])
		} else {
			err = tx.DeletePoint(st, old)
		}
		if err != nil {
			return undo()
		}
	}
	return true, -1, nil
}

// replicaValue converts a row event's value to its column's type, as
// convertExact does; a binary string column (BINARY, VARBINARY, BLOB) takes
// the bytes go-mysql-server's conversion gives (BINARY padded with zeros),
// which the planner's INSERT stores too, when they fit.
func replicaValue(ctx *sql.Context, typ sql.Type, v any) (any, bool) {
	st, ok := typ.(sql.StringType)
	if !ok || !types.IsBinaryType(typ) {
		return convertExact(ctx, typ, v)
	}
	out, inRange, err := typ.Convert(ctx, v)
	b, isBytes := out.([]byte)
	if err != nil || inRange != sql.InRange || !isBytes || int64(len(b)) > st.MaxByteLength() {
		return nil, false
	}
	return b, true
}
