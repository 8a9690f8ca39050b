package sqlserver

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// A DELETE of several tables (DELETE a, b FROM a JOIN b ON …) counts, as
// MySQL does, every row it deleted from each of them; go-mysql-server
// counted the joined rows it went through (one where a row of a and one of
// b were deleted: MySQL says 2). The tables' editors count the rows they
// delete while such a DELETE runs (Session.deleteCounts); its OK packet
// and ROW_COUNT() take their sum.

// deleteCounts counts the rows deleted from each target table (lower-case
// name) of the multi-table DELETE being run; nil otherwise.
type deleteCounts map[string]int

// noteDeleted counts a row deleted from table.
func noteDeleted(s *Session, table string) {
	if s.del.counts == nil {
		return
	}
	if _, ok := s.del.counts[strings.ToLower(table)]; ok {
		s.del.counts[strings.ToLower(table)]++
	}
}

// multiDelete builds a DELETE with more than one target table (nil, nil:
// another kind of DELETE, or the build under way).
func (x adminExec) multiDelete(ctx *sql.Context, d *plan.DeleteFrom, row sql.Row) (sql.RowIter, error) {
	s, ok := ctx.Session.(*Session)
	if !ok || !s.mysql || s.del.building || !d.HasExplicitTargets() {
		return nil, nil
	}
	targets := d.GetDeleteTargets()
	if len(targets) < 2 {
		return nil, nil
	}
	counts := deleteCounts{}
	for _, t := range targets {
		del, err := plan.GetDeletable(t)
		if err != nil {
			return nil, nil
		}
		counts[strings.ToLower(del.Name())] = 0
	}
	s.del.building = true
	iter, err := x.exec.Build(ctx, d, row)
	s.del.building = false
	if err != nil {
		return nil, err
	}
	return &multiDeleteIter{RowIter: iter, sess: s, counts: counts}, nil
}

// multiDeleteIter counts a multi-table DELETE's rows; go-mysql-server's
// OK packet is made under it (it is a MutableRowIter).
type multiDeleteIter struct {
	sql.RowIter
	sess    *Session
	counts  deleteCounts
	started bool
}

func (it *multiDeleteIter) GetChildIter() sql.RowIter { return it.RowIter }

func (it *multiDeleteIter) WithChildIter(child sql.RowIter) sql.RowIter {
	c := *it
	c.RowIter = child
	return &c
}

func (it *multiDeleteIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !it.started {
		it.started = true
		it.sess.del.counts = it.counts
	}
	r, err := it.RowIter.Next(ctx)
	if err != nil || len(r) != 1 {
		return r, err
	}
	ok, isOK := r[0].(types.OkResult)
	if !isOK {
		return r, nil
	}
	n := 0
	for _, c := range it.counts {
		n += c
	}
	it.sess.del.counts = nil
	ok.RowsAffected = uint64(n)
	ctx.SetLastQueryInfoInt(sql.RowCount, int64(n))
	return sql.NewRow(ok), nil
}

func (it *multiDeleteIter) Close(ctx *sql.Context) error {
	if it.sess.del.counts != nil && sameCounts(it.sess.del.counts, it.counts) {
		it.sess.del.counts = nil
	}
	return it.RowIter.Close(ctx)
}

func sameCounts(a, b deleteCounts) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// deletedAlready reports whether a row of table that a multi-table DELETE
// finds missing was deleted by it: a row joined to several rows of the
// other table comes once per joined row (go-mysql-server failed with
// "row was not found when attempting to delete"; MySQL deletes it once).
func deletedAlready(s *Session, table string) bool {
	if s.del.counts == nil {
		return false
	}
	_, ok := s.del.counts[strings.ToLower(table)]
	return ok
}

// deleteState is the multi-table DELETE a session is building and running.
type deleteState struct {
	// counts: the rows deleted per table by the DELETE being run;
	// building while it is built.
	counts   deleteCounts
	building bool
}
