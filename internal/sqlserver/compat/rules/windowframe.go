package rules

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
)

// WindowFrame gives an aggregate window function (SUM, COUNT, AVG,
// MIN, MAX, BIT_*, STD…, FIRST_VALUE, LAST_VALUE) whose window has an
// ORDER BY and no frame MySQL's default frame, RANGE BETWEEN UNBOUNDED
// PRECEDING AND CURRENT ROW: the partition's rows up to the current row's
// last peer (the rows whose ORDER BY values equal its own, compared by
// their type, so under the collation for strings). go-mysql-server v0.20
// framed SUM, COUNT, AVG and MIN row by row (SUM(a) OVER (ORDER BY a) of
// 100, 200, 200, 400 gave 100, 300, 500, 900 where MySQL gives 100, 500,
// 500, 900) and MAX and BIT_* with the whole partition, also through a
// named window (MAX(x) OVER w … WINDOW w AS (ORDER BY id)). ROW_NUMBER,
// RANK and the other functions that take no frame are left as they are.
// Only client connections get it (Session.mysql): go-mysql-server's engine
// suites assert its own frames.
func WindowFrame(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !compat.FromClient(ctx) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		w, ok := n.(*plan.Window)
		if !ok {
			return n, transform.SameTree, nil
		}
		changed := false
		sel := make([]sql.Expression, len(w.SelectExprs))
		for i, e := range w.SelectExprs {
			ne, same, err := transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				// NTH_VALUE (windownth.go), which frames itself.
				if nv, err := asNthValue(ctx, e); nv != nil || err != nil {
					return nv, transform.NewTree, err
				}
				if f := withDefaultFrame(e); f != nil {
					return f, transform.NewTree, nil
				}
				return e, transform.SameTree, nil
			})
			if err != nil {
				return nil, transform.SameTree, err
			}
			sel[i] = ne
			changed = changed || same == transform.NewTree
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		return plan.NewWindow(sel, w.Child), transform.NewTree, nil
	})
}

// withDefaultFrame returns e with the frame RANGE BETWEEN UNBOUNDED
// PRECEDING AND CURRENT ROW (peersFrame), or nil when e is not a window
// function that takes a frame, its window has no ORDER BY or a frame of
// its own.
func withDefaultFrame(e sql.Expression) sql.Expression {
	switch e.(type) {
	case sql.Aggregation, *window.FirstValue, *window.LastValue:
	default:
		return nil
	}
	wa, ok := e.(sql.WindowAdaptableExpression)
	if !ok {
		return nil
	}
	w := wa.Window()
	if w == nil || len(w.OrderBy) == 0 || w.Frame != nil {
		return nil
	}
	nw := *w
	nw.Frame = &peersFrame{RangeUnboundedPrecedingToCurrentRowFrame: plan.NewRangeUnboundedPrecedingToCurrentRowFrame()}
	return wa.WithWindow(&nw)
}

// peersFrame is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW with
// peers found on every ORDER BY expression by its type
// (go-mysql-server's range framer compares the first one only).
type peersFrame struct {
	*plan.RangeUnboundedPrecedingToCurrentRowFrame
}

func (f *peersFrame) NewFramer(w *sql.WindowDefinition) (sql.WindowFramer, error) {
	return &peersToCurrent{peerGroups: peerGroups{orderBy: w.OrderBy.ToExpressions(), frameStart: -1, frameEnd: -1, partitionStart: -1, partitionEnd: -1}}, nil
}

// peersToCurrent frames each row of a sorted partition with the
// partition's rows up to the last of its peers.
type peersToCurrent struct {
	peerGroups
}

func (f *peersToCurrent) NewFramer(in sql.WindowInterval) (sql.WindowFramer, error) {
	return &peersToCurrent{peerGroups: peerGroups{orderBy: f.orderBy, idx: in.Start, partitionStart: in.Start, partitionEnd: in.End,
		frameStart: in.Start, frameEnd: in.Start, partitionSet: true}}, nil
}

func (f *peersToCurrent) Next(ctx *sql.Context, buf sql.WindowBuffer) (sql.WindowInterval, error) {
	if !f.partitionSet || (f.idx != 0 && f.idx >= f.partitionEnd) {
		return sql.WindowInterval{}, io.EOF
	}
	if f.idx >= f.frameEnd {
		end, err := f.peersEnd(ctx, buf)
		if err != nil {
			return sql.WindowInterval{}, err
		}
		f.frameEnd = end
	}
	f.frameStart = f.partitionStart
	f.idx++
	return f.Interval()
}

func (f *peersToCurrent) Interval() (sql.WindowInterval, error) {
	if !f.partitionSet {
		return sql.WindowInterval{}, aggregation.ErrPartitionNotSet
	}
	return sql.WindowInterval{Start: f.frameStart, End: f.frameEnd}, nil
}
