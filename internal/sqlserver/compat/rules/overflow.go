package rules

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// Overflow replaces +, - and * of two integers by checkedArith, which
// computes in BIGINT (BIGINT UNSIGNED when an operand is unsigned) and fails
// with 1690 when the result does not fit, as MySQL does. go-mysql-server
// v0.20 wraps around: SELECT 9223372036854775807 + 1 gave
// -9223372036854775808, and UPDATE p SET n = n - 2 on an INT UNSIGNED of 1
// stored 4294967295. Client connections only (Session.mysql).
func Overflow(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !compat.FromClient(ctx) {
		return n, transform.SameTree, nil
	}
	return CheckArithmetic(n)
}

func CheckArithmetic(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return compat.TransformAllExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		a, ok := e.(*expression.Arithmetic)
		if !ok {
			return e, transform.SameTree, nil
		}
		switch a.Op {
		case "+", "-", "*":
		default:
			return e, transform.SameTree, nil
		}
		lInt, lUnsigned := integerOperand(a.Left())
		rInt, rUnsigned := integerOperand(a.Right())
		if !lInt || !rInt {
			return e, transform.SameTree, nil
		}
		return &checkedArith{Arithmetic: a, unsigned: lUnsigned || rUnsigned}, transform.NewTree, nil
	})
}

// integerOperand says whether e is an integer, and an unsigned one. A
// literal (or a bound parameter) is unsigned only above BIGINT's range, as
// in MySQL: go-mysql-server types 157 as TINYINT UNSIGNED.
func integerOperand(e sql.Expression) (integer, unsigned bool) {
	if lit, ok := e.(*expression.Literal); ok {
		v := lit.Value()
		if _, ok := funcs.AsInt64(v); ok {
			return true, false
		}
		if u, ok := funcs.AsUint64(v); ok {
			return true, u > math.MaxInt64
		}
		return IntegerKind(lit.Type())
	}
	return IntegerKind(e.Type())
}

// IntegerKind says whether t is an integer type, and an unsigned one. By
// the wire type: a column's type need not be go-mysql-server's own
// instance, which types.IsInteger compares with.
func IntegerKind(t sql.Type) (integer, unsigned bool) {
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Int16, sqltypes.Int24, sqltypes.Int32, sqltypes.Int64:
		return true, false
	case sqltypes.Uint8, sqltypes.Uint16, sqltypes.Uint24, sqltypes.Uint32, sqltypes.Uint64:
		return true, true
	}
	return false, false
}

// checkedArith is +, - or * of two integers that fails with 1690 where the
// result leaves BIGINT (or BIGINT UNSIGNED, when an operand is unsigned).
type checkedArith struct {
	*expression.Arithmetic
	unsigned bool
}

func (c *checkedArith) Type() sql.Type {
	if c.unsigned {
		return types.Uint64
	}
	return c.Arithmetic.Type()
}

func (c *checkedArith) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := c.Arithmetic.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	a, ok := e.(*expression.Arithmetic)
	if !ok {
		return e, nil
	}
	return &checkedArith{Arithmetic: a, unsigned: c.unsigned}, nil
}

func (c *checkedArith) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	lv, err := c.Left().Eval(ctx, row)
	if err != nil || lv == nil {
		return nil, err
	}
	rv, err := c.Right().Eval(ctx, row)
	if err != nil || rv == nil {
		return nil, err
	}
	l, lok := funcs.AsInt64(lv)
	r, rok := funcs.AsInt64(rv)
	if !c.unsigned && lok && rok {
		if v, ok := signedArith(c.Op, l, r); ok {
			return v, nil
		}
		return nil, c.outOfRange("BIGINT")
	}
	lb, lok := bigOf(lv)
	rb, rok := bigOf(rv)
	if !lok || !rok {
		return c.Arithmetic.Eval(ctx, row) // not integers after all
	}
	var res big.Int
	switch c.Op {
	case "+":
		res.Add(lb, rb)
	case "-":
		res.Sub(lb, rb)
	default:
		res.Mul(lb, rb)
	}
	if c.unsigned {
		if res.Sign() < 0 || !res.IsUint64() {
			return nil, c.outOfRange("BIGINT UNSIGNED")
		}
		return res.Uint64(), nil
	}
	if !res.IsInt64() {
		return nil, c.outOfRange("BIGINT")
	}
	return res.Int64(), nil
}

// signedArith computes l op r in int64, and false on overflow.
func signedArith(op string, l, r int64) (int64, bool) {
	switch op {
	case "+":
		s := l + r
		return s, !((l > 0 && r > 0 && s < 0) || (l < 0 && r < 0 && s >= 0))
	case "-":
		d := l - r
		return d, !((l >= 0 && r < 0 && d < 0) || (l < 0 && r > 0 && d >= 0))
	}
	if l == 0 || r == 0 {
		return 0, true
	}
	if (l == -1 && r == math.MinInt64) || (r == -1 && l == math.MinInt64) {
		return 0, false
	}
	p := l * r
	return p, p/r == l
}

func bigOf(v any) (*big.Int, bool) {
	if i, ok := funcs.AsInt64(v); ok {
		return big.NewInt(i), true
	}
	if u, ok := funcs.AsUint64(v); ok {
		return new(big.Int).SetUint64(u), true
	}
	return nil, false
}

func (c *checkedArith) outOfRange(typ string) error {
	return mysql.NewSQLError(mysql.ERDataOutOfRange, "22003", "%s value is out of range in '%s'", typ, mysqlExprText(c.Arithmetic))
}

// mysqlExprText writes an expression as MySQL 8 quotes it in 1690: columns
// as `db`.`table`.`column`, operations in parentheses.
func mysqlExprText(e sql.Expression) string {
	switch e := e.(type) {
	case *checkedArith:
		return mysqlExprText(e.Arithmetic)
	case *expression.Arithmetic:
		return fmt.Sprintf("(%s %s %s)", mysqlExprText(e.Left()), e.Op, mysqlExprText(e.Right()))
	case *expression.GetField:
		var parts []string
		for _, p := range []string{e.Database(), e.Table(), e.Name()} {
			if p != "" {
				parts = append(parts, "`"+p+"`")
			}
		}
		return strings.Join(parts, ".")
	}
	return e.String()
}
