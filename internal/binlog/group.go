package binlog

import "fmt"

// GroupInfo is what a group's Gtid carries besides its events.
type GroupInfo struct {
	// ServerID and Domain of the GTID (the session's server_id and
	// gtid_domain_id).
	ServerID, Domain uint32
	// Seq imposes the sequence (gtid_seq_no); 0: the domain's next.
	Seq uint64
	// Strict refuses a Seq that does not follow the domain's
	// (gtid_strict_mode).
	Strict bool
	// ThreadID is the connection id a Query event names.
	ThreadID uint32
}

// Group is one transaction's events, built by the committing session and
// written whole by Log.Append. Not safe for concurrent use.
type Group struct {
	info   GroupInfo
	ddl    *ddlQuery
	tables []*Table
	index  map[*Table]int
	rows   []rowsEvent
}

type ddlQuery struct {
	db, stmt string
	sqlMode  uint64
}

// rowsEvent is one rows event's row images, encoded.
type rowsEvent struct {
	kind  EventType
	table int
	data  []byte
}

// NewGroup starts a group.
func NewGroup(info GroupInfo) *Group { return &Group{info: info} }

// Info is the group's GTID information.
func (g *Group) Info() GroupInfo { return g.info }

// Query makes the group a standalone statement: a DDL run in database db
// under sqlMode (MariaDB's sql_mode bits, SQLModeBits).
func (g *Group) Query(db, stmt string, sqlMode uint64) {
	if len(g.rows) > 0 {
		panic("binlog: a Query in a group of rows")
	}
	g.ddl = &ddlQuery{db: db, stmt: stmt, sqlMode: sqlMode}
}

// Empty reports whether the group has nothing to write.
func (g *Group) Empty() bool { return g.ddl == nil && len(g.rows) == 0 }

// Row adds a row change of table t: kind is WriteRowsEventV1 (after only),
// UpdateRowsEventV1 (before and after) or DeleteRowsEventV1 (before only).
// Consecutive changes of one kind to one table share an event, up to
// maxRowsEventBytes.
func (g *Group) Row(kind EventType, t *Table, before, after []any) error {
	if g.ddl != nil {
		panic("binlog: rows in a Query group")
	}
	ti, ok := g.index[t]
	if !ok {
		if g.index == nil {
			g.index = map[*Table]int{}
		}
		ti = len(g.tables)
		g.tables = append(g.tables, t)
		g.index[t] = ti
	}
	var ev *rowsEvent
	if n := len(g.rows); n > 0 && g.rows[n-1].kind == kind && g.rows[n-1].table == ti && len(g.rows[n-1].data) < maxRowsEventBytes {
		ev = &g.rows[n-1]
	} else {
		g.rows = append(g.rows, rowsEvent{kind: kind, table: ti})
		ev = &g.rows[len(g.rows)-1]
	}
	var err error
	data := ev.data
	switch kind {
	case WriteRowsEventV1:
		data, err = appendRow(data, t.Cols, after)
	case DeleteRowsEventV1:
		data, err = appendRow(data, t.Cols, before)
	case UpdateRowsEventV1:
		if data, err = appendRow(data, t.Cols, before); err == nil {
			data, err = appendRow(data, t.Cols, after)
		}
	default:
		panic(fmt.Sprintf("binlog: a row of a %v event", kind))
	}
	if err != nil {
		return fmt.Errorf("binlog: table %s.%s: %w", t.DB, t.Name, err)
	}
	ev.data = data
	return nil
}
