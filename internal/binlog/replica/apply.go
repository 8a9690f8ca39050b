package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"
)

// rowsSQLMode is the sql_mode row events are applied under: strict (a
// value the table cannot hold is an error, not a silent change) and
// NO_AUTO_VALUE_ON_ZERO (a 0 in an AUTO_INCREMENT column is a 0, as on
// the source).
const rowsSQLMode = "STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO"

// runSQL is the SQL thread: each group from the queue applied in one
// transaction, its position recorded in it; an error stops the thread at
// the group's start (nothing of it committed).
func (r *Replica) runSQL(ctx context.Context, self *thread) {
	defer r.exited(self)
	cols := columnCache{}
	// The first group a SQL thread applies may be a DDL that ran before a
	// crash or a failed position commit (a DDL commits on its own): its
	// "already exists" errors are expected then (redoneDDLErrors).
	first := true
	for {
		r.mu.Lock()
		g, q := r.mu.pending, r.mu.queue
		r.mu.pending = nil
		r.mu.Unlock()
		if g == nil {
			r.setState(false, "Slave has read all relay log; waiting for more updates")
			select {
			case g = <-q:
			case <-ctx.Done():
				return
			}
		}
		err := r.applyGroup(ctx, g, cols, first)
		first = false
		if err != nil {
			r.mu.Lock()
			r.mu.pending = g
			r.mu.Unlock()
			if ctx.Err() != nil {
				return // STOP SLAVE: the group is applied again at START
			}
			r.setSQLError(asError(err))
			return
		}
	}
}

// columnCache keeps the target's columns by table, forgotten at each
// QUERY event (a DDL may have changed them).
type columnCache map[string][]Column

// applyGroup applies g in one transaction, or skips it
// (sql_slave_skip_counter), recording the position either way.
func (r *Replica) applyGroup(ctx context.Context, g *group, cols columnCache, first bool) error {
	r.setState(false, "Waiting for global read lock")
	waited := false
	txn, err := r.target.Begin(ctx, func() { waited = true })
	_ = waited
	if err != nil {
		return err
	}
	r.setState(false, "Executing")
	r.mu.Lock()
	skip := r.mu.skipCounter > 0
	if skip {
		r.mu.skipCounter--
	}
	done := r.mu.done
	r.mu.done = nil
	prev, prevFile, prevPos := r.mu.applied, r.mu.appliedFile, r.mu.appliedPos
	counter := r.mu.counter + 1
	skipErrs, skipAll := r.mu.skipErrors, r.mu.skipAll
	r.mu.lastEventTS = g.timestamp
	r.mu.Unlock()
	dbs := map[string]bool{PositionDatabase: true}
	if !skip {
		if g.gtid.Seq != 0 {
			txn.Origin(g.gtid.Domain, g.gtid.Server, g.gtid.Seq)
		}
		ap := applier{r: r, ctx: ctx, txn: txn, cols: cols, g: g, done: done, dbs: dbs, redo: first && g.standalone,
			ignore: func(code uint16) bool { return skipAll || skipErrs[code] }}
		if err := ap.run(); err != nil {
			txn.Rollback()
			if done != nil {
				r.mu.Lock()
				r.mu.done = done
				r.mu.Unlock()
			}
			return err
		}
	}
	pos := prev.with(g.gtid)
	if err := r.writePositionRows(ctx, txn, prev, pos); err != nil {
		txn.Rollback()
		return err
	}
	var list []string
	for db := range dbs {
		if r.target.HasDatabase(db) || db == PositionDatabase {
			list = append(list, db)
		}
	}
	sort.Strings(list)
	rec := record{Counter: counter, Pos: pos.String(), Prev: prev.String(), DBs: list,
		File: g.file, FilePos: g.endPos, PrevFile: prevFile, PrevFilePos: prevPos}
	if err := txn.Commit(ctx, list, rec.encode()); err != nil {
		return fmt.Errorf("commit of GTID %s: %w", g.gtid, err)
	}
	r.mu.Lock()
	r.mu.counter = counter
	r.advanceLocked(pos, g.file, g.endPos)
	r.mu.Unlock()
	return nil
}

// applier applies one group's events.
type applier struct {
	r      *Replica
	ctx    context.Context
	txn    Txn
	cols   columnCache
	g      *group
	done   map[string]bool // databases that hold this group already
	dbs    map[string]bool // databases written
	ignore func(code uint16) bool
	// redo: a DDL group that may have run already (runSQL's first).
	redo bool
}

// redoneDDLErrors are the errors of a DDL that ran already: database,
// table, column, key or account exists, or is gone.
var redoneDDLErrors = map[uint16]bool{1007: true, 1008: true, 1050: true, 1051: true, 1060: true, 1061: true, 1091: true, 1396: true}

func (a *applier) run() error {
	for _, ev := range a.g.events {
		var err error
		switch e := ev.Event.(type) {
		case *replication.TableMapEvent:
			continue
		case *replication.RowsEvent:
			db := string(e.Table.Schema)
			if a.done[strings.ToLower(db)] {
				continue // committed before a crash (record.go)
			}
			err = a.rows(ev.Header, e)
			if err == nil {
				a.dbs[strings.ToLower(db)] = true
			}
		case *replication.QueryEvent:
			err = a.query(ev.Header, e)
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.code() != 0 && a.ignore(e.Code) {
				a.r.log.Warn("replica: event error ignored (slave_skip_errors)", "gtid", a.g.gtid.String(), "errno", e.Code, "err", e.Message)
				continue
			}
			return err
		}
	}
	return nil
}

func (e *Error) code() uint16 { return e.Code }

// query applies a QUERY event: a DDL of a standalone group, in its
// database and sql_mode. Any other statement means the source logs in
// STATEMENT or MIXED format, which Miraj does not apply.
func (a *applier) query(h *replication.EventHeader, e *replication.QueryEvent) error {
	q := string(e.Query)
	db := string(e.Schema)
	for k := range a.cols {
		delete(a.cols, k)
	}
	if !a.g.standalone || !a.g.ddl && !looksDDL(q) {
		return errorf(codeSameServerID, "HY000", "Fatal error: the source logged the statement '%s' in STATEMENT format (GTID %s, master log %s, end_log_pos %d); Miraj applies ROW-format events only: set binlog_format=ROW on the source", clip(q), a.g.gtid, a.g.file, h.LogPos)
	}
	if db != "" && a.done[strings.ToLower(db)] {
		return nil
	}
	mode := sqlModeNames(statusSQLMode(e.StatusVars))
	if _, err := a.txn.Exec(a.ctx, db, mode, q); err != nil {
		ee := asError(err)
		if a.redo && redoneDDLErrors[ee.Code] {
			a.r.log.Warn("replica: DDL applied before the restart of the SQL thread", "gtid", a.g.gtid.String(), "errno", ee.Code, "err", ee.Message)
			return nil
		}
		return errorf(ee.Code, ee.State, "Error '%s' on query. Default database: '%s'. Query: '%s'", ee.Message, db, clip(q))
	}
	if db != "" {
		a.dbs[strings.ToLower(db)] = true
	}
	return nil
}

// looksDDL reports whether q starts like a definition statement (a
// standalone group without MariaDB's DDL flag: an older source's).
func looksDDL(q string) bool {
	f := strings.Fields(strings.ToUpper(q))
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE":
		return true
	}
	return false
}

// clip shortens a statement for an error message.
func clip(q string) string {
	const maxQuery = 512 // an error message stays readable
	if len(q) > maxQuery {
		return q[:maxQuery] + "…"
	}
	return q
}

// eventName is MariaDB's name of a row event type in its messages.
func eventName(t replication.EventType) string {
	switch t {
	case replication.WRITE_ROWS_EVENTv1:
		return "Write_rows_v1"
	case replication.UPDATE_ROWS_EVENTv1:
		return "Update_rows_v1"
	case replication.DELETE_ROWS_EVENTv1:
		return "Delete_rows_v1"
	case replication.WRITE_ROWS_EVENTv2:
		return "Write_rows"
	case replication.UPDATE_ROWS_EVENTv2:
		return "Update_rows"
	case replication.DELETE_ROWS_EVENTv2:
		return "Delete_rows"
	}
	return t.String()
}

// rows applies a row event by column position: INSERT; UPDATE and DELETE
// find the row by its primary key, or by all its columns without one.
func (a *applier) rows(h *replication.EventHeader, e *replication.RowsEvent) error {
	db, table := string(e.Table.Schema), string(e.Table.Table)
	fail := func(code uint16, msg string) error {
		return errorf(code, "HY000", "Could not execute %s event on table %s.%s; %s, Error_code: %d; the event's master log %s, end_log_pos %d",
			eventName(h.EventType), db, table, msg, code, a.g.file, h.LogPos)
	}
	key := strings.ToLower(db) + "." + strings.ToLower(table)
	cols, ok := a.cols[key]
	if !ok {
		var err error
		cols, err = a.r.target.Columns(a.ctx, db, table)
		if err != nil {
			ee := asError(err)
			return fail(ee.Code, ee.Message)
		}
		a.cols[key] = cols
	}
	n := int(e.ColumnCount)
	if n > len(cols) {
		return fail(1677, fmt.Sprintf("the source's table has %d columns, Miraj's %d", n, len(cols)))
	}
	if !fullImage(e.ColumnBitmap1, n) || e.ColumnBitmap2 != nil && !fullImage(e.ColumnBitmap2, n) {
		return fail(codeNotSupported, "a row image without every column (binlog_row_image=MINIMAL or NOBLOB on the source): Miraj applies full images only")
	}
	cols = cols[:n]
	if done, err := a.writeRows(h, e, db, table, cols, fail); done {
		return err
	}
	target := quoteName(db) + "." + quoteName(table)
	exec := func(q string) (Result, error) {
		res, err := a.txn.Exec(a.ctx, db, rowsSQLMode, q)
		if err != nil {
			ee := asError(err)
			return res, fail(ee.Code, ee.Message)
		}
		return res, nil
	}
	lit := func(row []any, i int) (string, error) {
		s, err := literal(row[i], cols[i])
		if err != nil {
			return "", fail(1677, fmt.Sprintf("column %d (%s): %v", i+1, cols[i].Name, err))
		}
		return s, nil
	}
	where := func(row []any) (string, error) {
		var parts []string
		keyed := false
		for _, c := range cols {
			keyed = keyed || c.Key
		}
		for i, c := range cols {
			if keyed && !c.Key {
				continue
			}
			v, err := lit(row, i)
			if err != nil {
				return "", err
			}
			parts = append(parts, quoteName(c.Name)+" <=> "+v)
		}
		return strings.Join(parts, " AND "), nil
	}
	names := make([]string, n)
	for i, c := range cols {
		names[i] = quoteName(c.Name)
	}
	switch h.EventType {
	case replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2, replication.WRITE_ROWS_EVENTv0:
		// One INSERT per event, its rows in batches.
		const rowsPerInsert = 256 // bounds the statement's text
		for start := 0; start < len(e.Rows); start += rowsPerInsert {
			var b strings.Builder
			b.WriteString("INSERT INTO " + target + " (" + strings.Join(names, ",") + ") VALUES ")
			for j, row := range e.Rows[start:min(start+rowsPerInsert, len(e.Rows))] {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteByte('(')
				for i := range n {
					if i > 0 {
						b.WriteByte(',')
					}
					v, err := lit(row, i)
					if err != nil {
						return err
					}
					b.WriteString(v)
				}
				b.WriteByte(')')
			}
			if _, err := exec(b.String()); err != nil {
				return err
			}
		}
	case replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv0:
		if len(e.Rows)%2 != 0 {
			return fail(codeRelayWrite, "an update without its after image")
		}
		for j := 0; j < len(e.Rows); j += 2 {
			before, after := e.Rows[j], e.Rows[j+1]
			w, err := where(before)
			if err != nil {
				return err
			}
			sets := make([]string, n)
			for i := range n {
				v, err := lit(after, i)
				if err != nil {
					return err
				}
				sets[i] = names[i] + " = " + v
			}
			res, err := exec("UPDATE " + target + " SET " + strings.Join(sets, ", ") + " WHERE " + w + " LIMIT 1")
			if err != nil {
				return err
			}
			if res.Matched == 0 {
				return fail(codeKeyNotFound, fmt.Sprintf("Can't find record in '%s'", table))
			}
		}
	case replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv0:
		for _, row := range e.Rows {
			w, err := where(row)
			if err != nil {
				return err
			}
			res, err := exec("DELETE FROM " + target + " WHERE " + w + " LIMIT 1")
			if err != nil {
				return err
			}
			if res.Affected == 0 {
				return fail(codeKeyNotFound, fmt.Sprintf("Can't find record in '%s'", table))
			}
		}
	default:
		return fail(codeNotSupported, "an event type Miraj does not apply")
	}
	return nil
}

// writeRows applies a row event through the target's RowWriter, when it
// has one and takes the event (done); otherwise rows runs statements.
func (a *applier) writeRows(h *replication.EventHeader, e *replication.RowsEvent, db, table string, cols []Column, fail func(uint16, string) error) (done bool, err error) {
	w, ok := a.txn.(RowWriter)
	if !ok {
		return false, nil
	}
	var kind RowKind
	switch h.EventType {
	case replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2, replication.WRITE_ROWS_EVENTv0:
		kind = RowsInsert
	case replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv0:
		if len(e.Rows)%2 != 0 {
			return false, nil // the statements report it
		}
		kind = RowsUpdate
	case replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv0:
		kind = RowsDelete
	default:
		return false, nil
	}
	rows := make([][]any, len(e.Rows))
	for j, row := range e.Rows {
		if len(row) < len(cols) {
			return false, nil
		}
		vals := make([]any, len(cols))
		for i := range cols {
			v, err := Value(row[i], cols[i])
			if err != nil {
				return false, nil // the statements report it, as literal does
			}
			vals[i] = v
		}
		rows[j] = vals
	}
	handled, missing, err := w.WriteRows(a.ctx, db, table, kind, rows)
	switch {
	case !handled:
		return false, nil
	case err != nil:
		ee := asError(err)
		return true, fail(ee.Code, ee.Message)
	case missing >= 0:
		return true, fail(codeKeyNotFound, fmt.Sprintf("Can't find record in '%s'", table))
	}
	return true, nil
}

// fullImage reports whether bitmap names all n columns (nil: go-mysql
// leaves it unset for a full image).
func fullImage(bitmap []byte, n int) bool {
	if bitmap == nil {
		return true
	}
	for i := range n {
		if i/8 >= len(bitmap) || bitmap[i/8]&(1<<(i%8)) == 0 {
			return false
		}
	}
	return true
}

func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// statusSQLMode reads Q_SQL_MODE_CODE from a QUERY event's status
// variables (0 when absent). The layout, code then value:
//
//	0 Q_FLAGS2 4 | 1 Q_SQL_MODE 8 | 2 Q_CATALOG len+str+NUL | 3 Q_AUTO_INCREMENT 4
//	4 Q_CHARSET 6 | 5 Q_TIME_ZONE len+str | 6 Q_CATALOG_NZ len+str | 7 Q_LC_TIME_NAMES 2
//	8 Q_CHARSET_DATABASE 2 | 9 Q_TABLE_MAP_FOR_UPDATE 8 | …
//
// Q_SQL_MODE comes second when present; the scan stops at a code it does
// not know the length of.
func statusSQLMode(vars []byte) uint64 {
	for i := 0; i < len(vars); {
		code := vars[i]
		i++
		switch code {
		case 0:
			i += 4
		case 1:
			if i+8 <= len(vars) {
				return binary.LittleEndian.Uint64(vars[i:])
			}
			return 0
		case 2:
			if i < len(vars) {
				i += 1 + int(vars[i]) + 1
			}
		case 3:
			i += 4
		case 4:
			i += 6
		case 5, 6:
			if i < len(vars) {
				i += 1 + int(vars[i])
			}
		case 7, 8:
			i += 2
		case 9:
			i += 8
		default:
			return 0
		}
	}
	return 0
}

// sqlModeBits are the sql_mode flags of the binary log, bit by bit, as
// MariaDB numbers them; the empty names are modes Miraj does not know
// (MariaDB's own, or gone from MySQL 8), left out of the session's mode.
var sqlModeBits = []string{
	"REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE", "", "ONLY_FULL_GROUP_BY",
	"NO_UNSIGNED_SUBTRACTION", "", "", "", "", "", "", "", "", "", "", "", "",
	"NO_AUTO_VALUE_ON_ZERO", "NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES",
	"NO_ZERO_IN_DATE", "NO_ZERO_DATE", "ALLOW_INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL",
	"", "HIGH_NOT_PRECEDENCE", "NO_ENGINE_SUBSTITUTION", "PAD_CHAR_TO_FULL_LENGTH", "", "", "",
}

func sqlModeNames(bits uint64) string {
	var names []string
	for i, n := range sqlModeBits {
		if n != "" && bits&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}
