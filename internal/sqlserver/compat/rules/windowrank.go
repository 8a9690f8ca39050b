package rules

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
)

// RANK(), DENSE_RANK() and PERCENT_RANK() give rows whose ORDER BY values
// are equal the same rank. go-mysql-server v0.20 found the rows of equal
// values (the peer group) comparing them as Go values, so under a
// case-insensitive collation 'a' and 'A' got ranks 1 and 2, where MySQL
// gives both 1. peerRank makes the function find its peer groups with the
// values' type's comparison, which is the collation's for strings.

// peerRankOf returns e as such a function, or nil when e is not one of
// them (or is one already).
func peerRankOf(e sql.Expression) sql.Expression {
	switch e.(type) {
	case *window.Rank, *window.DenseRank, *window.PercentRank:
	default:
		return nil
	}
	wa := e.(sql.WindowAggregation)
	if wa.Window() == nil || len(wa.Window().OrderBy) == 0 {
		return nil
	}
	return &peerRank{WindowAggregation: wa}
}

// peerRank is go-mysql-server's rank function with peerGroups as its
// frame.
type peerRank struct {
	sql.WindowAggregation // *window.Rank, *window.DenseRank or *window.PercentRank
}

func (r *peerRank) NewWindowFunction() (sql.WindowFunction, error) {
	fn, err := r.WindowAggregation.NewWindowFunction()
	if err != nil {
		return nil, err
	}
	return &peerRankFunction{WindowFunction: fn, orderBy: r.Window().OrderBy.ToExpressions()}, nil
}

func (r *peerRank) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return &peerRank{WindowAggregation: r.WindowAggregation.WithWindow(w).(sql.WindowAggregation)}
}

func (r *peerRank) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := r.WindowAggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &peerRank{WindowAggregation: n.(sql.WindowAggregation)}, nil
}

func (r *peerRank) WithId(id sql.ColumnId) sql.IdExpression {
	return &peerRank{WindowAggregation: r.WindowAggregation.WithId(id).(sql.WindowAggregation)}
}

// peerRankFunction is the function with peerGroups for its frames.
type peerRankFunction struct {
	sql.WindowFunction
	orderBy []sql.Expression
}

func (f *peerRankFunction) DefaultFramer() sql.WindowFramer {
	return &peerGroups{orderBy: f.orderBy, frameStart: -1, frameEnd: -1, partitionStart: -1, partitionEnd: -1}
}

// peerGroups frames each row of a sorted partition with the rows whose
// ORDER BY values equal its own, compared by their type.
type peerGroups struct {
	orderBy                      []sql.Expression
	idx                          int
	partitionStart, partitionEnd int
	frameStart, frameEnd         int
	partitionSet                 bool
}

func (f *peerGroups) NewFramer(in sql.WindowInterval) (sql.WindowFramer, error) {
	return &peerGroups{orderBy: f.orderBy, idx: in.Start, partitionStart: in.Start, partitionEnd: in.End,
		frameStart: in.Start, frameEnd: in.Start, partitionSet: true}, nil
}

func (f *peerGroups) Next(ctx *sql.Context, buf sql.WindowBuffer) (sql.WindowInterval, error) {
	if !f.partitionSet || (f.idx != 0 && f.idx >= f.partitionEnd) {
		return sql.WindowInterval{}, io.EOF
	}
	if f.idx >= f.frameEnd {
		end, err := f.peersEnd(ctx, buf)
		if err != nil {
			return sql.WindowInterval{}, err
		}
		f.frameStart, f.frameEnd = f.idx, end
	}
	f.idx++
	return f.Interval()
}

// peersEnd returns the end of the current row's peer group: the first row
// after it whose ORDER BY values differ (or the partition's end).
func (f *peerGroups) peersEnd(ctx *sql.Context, buf sql.WindowBuffer) (int, error) {
	end := f.idx + 1
	for end < f.partitionEnd && end < len(buf) {
		same, err := f.peers(ctx, buf[end-1], buf[end])
		if err != nil {
			return 0, err
		}
		if !same {
			break
		}
		end++
	}
	return end, nil
}

// peers reports whether two rows have equal ORDER BY values.
func (f *peerGroups) peers(ctx *sql.Context, a, b sql.Row) (bool, error) {
	for _, e := range f.orderBy {
		va, err := e.Eval(ctx, a)
		if err != nil {
			return false, err
		}
		vb, err := e.Eval(ctx, b)
		if err != nil {
			return false, err
		}
		if va == nil || vb == nil {
			if va != nil || vb != nil {
				return false, nil
			}
			continue
		}
		cmp, err := e.Type().Compare(ctx, va, vb)
		if err != nil {
			return false, err
		}
		if cmp != 0 {
			return false, nil
		}
	}
	return true, nil
}

func (f *peerGroups) FirstIdx() int { return f.frameStart }

func (f *peerGroups) LastIdx() int { return f.frameEnd }

func (f *peerGroups) Interval() (sql.WindowInterval, error) {
	if !f.partitionSet {
		return sql.WindowInterval{}, aggregation.ErrPartitionNotSet
	}
	return sql.WindowInterval{Start: f.frameStart, End: f.frameEnd}, nil
}
