package sqlserver

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
)

var _ sql.StatisticsTable = (*Table)(nil)

// RowCount is exact: the number of rows the session's transaction sees.
//
// go-mysql-server's statistics provider (ANALYZE TABLE) takes the row count
// from here; without it the statistics said 0 rows and 0 distinct values and
// the join planner divided by zero on the next join over an analyzed index.
func (t *Table) RowCount(ctx *sql.Context) (uint64, bool, error) {
	_, st, err := t.current(ctx)
	if err != nil {
		return 0, false, err
	}
	return uint64(st.Len()), true, nil
}

// DataLength is the memory the table's rows and primary key hold
// (tablesize.go); for go-mysql-server's engine suites, the estimate its own
// tables give, which they assert: the row count times a size per row
// derived from the column types.
func (t *Table) DataLength(ctx *sql.Context) (uint64, error) {
	if compat.FromClient(ctx) {
		data, _, err := t.footprint(ctx)
		return data, err
	}
	n, _, err := t.RowCount(ctx)
	if err != nil {
		return 0, err
	}
	var perRow uint64
	for _, c := range t.Schema() {
		switch ty := c.Type.(type) { // the order matters: some types match several cases
		case sql.NumberType:
			perRow += 8
		case sql.StringType:
			perRow += uint64(ty.MaxByteLength())
		case types.BitType:
			perRow++
		case sql.DatetimeType:
			perRow += 8
		case sql.DecimalType:
			perRow += uint64(ty.MaximumScale())
		case sql.EnumType:
			perRow += 2
		case types.JsonType:
			perRow += 20
		case sql.NullType:
			perRow++
		case types.TimeType:
			perRow += 16
		case sql.YearType:
			perRow += 8
		}
	}
	return perRow * n, nil
}

// analyzeStats is go-mysql-server's statistics provider but for ANALYZE
// TABLE of an empty table, whose histogram it divides by zero rows (the
// statement then failed with "handler caught panic: integer divide by
// zero"). An empty table has no statistics: those of its rows before
// are dropped.
type analyzeStats struct{ sql.StatsProvider }

func (s analyzeStats) AnalyzeTable(ctx *sql.Context, table sql.Table, db string) error {
	if st, ok := table.(sql.StatisticsTable); ok {
		n, _, err := st.RowCount(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			old, err := s.GetTableStats(ctx, db, table)
			if err != nil {
				return err
			}
			for _, stat := range old {
				if err := s.DropStats(ctx, stat.Qualifier(), stat.Columns()); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return s.StatsProvider.AnalyzeTable(ctx, table, db)
}

// analyzeTables runs ANALYZE TABLE: each table's statistics under its own
// database, and its row named db.table, as MySQL names it.
// go-mysql-server's refused to run without a current database (1105 "no
// database selected", for qualified names too) and filed every table's
// statistics under the current database.
func analyzeTables(ctx *sql.Context, n *plan.AnalyzeTable) sql.RowIter {
	rows := make([]sql.Row, 0, len(n.Tables))
	for _, t := range n.Tables {
		db := n.Db
		if ours, ok := t.(*Table); ok {
			db = ours.db.Name()
		}
		msgType, msgText := "status", "OK"
		forgetCardinality(strings.ToLower(db), strings.ToLower(t.Name()))
		forgetSize(strings.ToLower(db), strings.ToLower(t.Name()))
		if err := n.Stats.AnalyzeTable(ctx, t, db); err != nil {
			msgType, msgText = "Error", err.Error()
		}
		rows = append(rows, sql.Row{db + "." + t.Name(), "analyze", msgType, msgText})
	}
	return sql.RowsToRowIter(rows...)
}
