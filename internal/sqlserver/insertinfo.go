package sqlserver

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The info of an INSERT's OK packet, which MySQL sends for an INSERT of
// several rows (VALUES with more than one row, or a SELECT) and for LOAD
// DATA, and clients show after the row count:
//
//	Records: 3  Duplicates: 1  Warnings: 0
//	Records: 3  Deleted: 0  Skipped: 1  Warnings: 2
//
// Records is the rows the statement read; Duplicates the rows that met a
// duplicate key (REPLACE replaced them, IGNORE skipped them); for LOAD
// DATA, Deleted the rows REPLACE replaced and Skipped those IGNORE
// skipped; Warnings the statement's warnings. go-mysql-server sent none.

// insertTally counts the rows an INSERT's source handed on.
type insertTally struct{ records int }

// insertInfo says which info an INSERT's OK carries.
type insertInfo struct {
	load    bool // LOAD DATA's form
	replace bool
	tally   *insertTally
}

// newInsertInfo returns the info n's OK carries: nil for an INSERT of one
// row, and for INSERT … ON DUPLICATE KEY UPDATE (whose Duplicates the row
// count does not tell).
func newInsertInfo(n *plan.InsertInto, tally *insertTally) *insertInfo {
	if len(n.OnDupExprs) > 0 {
		return nil
	}
	src := n.Source
	for {
		// The analyzer puts a projection (defaults, column order) over
		// the rows given.
		p, ok := src.(*plan.Project)
		if !ok {
			break
		}
		src = p.Child
	}
	switch src := src.(type) {
	case *plan.LoadData:
		return &insertInfo{load: true, replace: n.IsReplace, tally: tally}
	case *plan.Values:
		if len(src.ExpressionTuples) < 2 {
			return nil
		}
	}
	return &insertInfo{replace: n.IsReplace, tally: tally}
}

// add puts the info on row when it is the statement's OK result.
func (in *insertInfo) add(ctx *sql.Context, row sql.Row) sql.Row {
	if in == nil || len(row) != 1 {
		return row
	}
	ok, isOK := row[0].(types.OkResult)
	if !isOK || ok.Info != nil {
		return row
	}
	records := in.tally.records
	affected := int(ok.RowsAffected)
	dups := records - affected // skipped by IGNORE
	if in.replace {
		dups = affected - records // each replaced row counts twice
	}
	dups = max(dups, 0)
	warnings := int(ctx.Session.WarningCount())
	if in.load {
		deleted, skipped := 0, dups
		if in.replace {
			deleted, skipped = dups, 0
		}
		ok.Info = infoText(fmt.Sprintf("Records: %d  Deleted: %d  Skipped: %d  Warnings: %d", records, deleted, skipped, warnings))
	} else {
		ok.Info = infoText(fmt.Sprintf("Records: %d  Duplicates: %d  Warnings: %d", records, dups, warnings))
	}
	return sql.NewRow(ok)
}

// infoText is an OK packet's info.
type infoText string

func (t infoText) String() string { return string(t) }

// insertState is the INSERT or REPLACE a session is building and running.
type insertState struct {
	// row is the INSERT whose row is being written, which names the
	// column and row of a warning about a value (INSERT IGNORE).
	row *insertErrors
	// building is the INSERT whose iterator adminExec is having built (it
	// wraps the iterator).
	building *plan.InsertInto
	// source is the source of the INSERT being built, whose rows adminExec
	// checks (numtext.go).
	source insertSource
	// calls counts the rows the current INSERT handed to the storage
	// editor: the row an error is about is the next one.
	calls int
	// sameReplaced counts the rows the current INSERT met as duplicates
	// that were the row it wrote, value for value: a REPLACE of such a
	// row counts one row affected, not two (replacesame.go).
	sameReplaced int
	// replaceDups counts the duplicates the current row of a REPLACE met
	// so far, replaceExtra the rows beyond the first that REPLACE deleted
	// for one row (each counts one more row affected, replacesame.go).
	replaceDups, replaceExtra int
}
