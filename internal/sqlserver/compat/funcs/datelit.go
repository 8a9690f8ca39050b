package funcs

import (
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Typed literals: DATE '2026-03-01', TIME '10:11:12', TIMESTAMP
// '2026-03-01 10:11:12'. go-mysql-server v0.20's parser reads each as its
// text (a string), so DATE '2026-03-01' was TEXT to the client and in
// arithmetic (DATE '2026-03-24' + INTERVAL 1 DAY was the text
// '2026-03-25'), and an invalid one was accepted. Before parsing,
// AssignmentText (assignvar.go) rewrites DATE '…' into a call of
// __miraj_DATE('…'), and so for TIME and TIMESTAMP; the column keeps the
// text the client wrote. The value is typed as MySQL types it — DATE;
// TIME; TIMESTAMP is a DATETIME with the digits of its fraction — and
// text that is not one is 1525, as in MySQL.

// typedLiteralWords are the words that make a literal of the string after
// them.
var typedLiteralWords = map[string]bool{"DATE": true, "TIME": true, "TIMESTAMP": true}

// TypedLiteral reports whether words[i] is DATE, TIME or TIMESTAMP before
// a string: a typed literal (not a column's type: DEFAULT '…' follows a
// type, not a string).
func TypedLiteral(q string, words []sqltext.Word, i int) bool {
	w := words[i]
	if !w.IsWord || q[w.Start] == '`' || !typedLiteralWords[w.Text] || i+1 >= len(words) {
		return false
	}
	s := words[i+1]
	return !s.IsWord && s.Text == "'" && (q[s.Start] == '\'' || q[s.Start] == '"')
}

// fractionRE reads the fraction of a TIMESTAMP literal.
var fractionRE = regexp.MustCompile(`\.(\d{1,6})\s*$`)

var TypedLiterals = []sql.Function{
	sql.Function1{Name: "__miraj_date", Fn: func(e sql.Expression) sql.Expression {
		return &Scalar{Name: "DATE", Args: []sql.Expression{e}, TypeOf: func([]sql.Expression) sql.Type { return types.Date },
			EvalArgs: typedLiteralEval("DATE", types.Date)}
	}},
	sql.Function1{Name: "__miraj_time", Fn: func(e sql.Expression) sql.Expression {
		return &Scalar{Name: "TIME", Args: []sql.Expression{e}, TypeOf: func([]sql.Expression) sql.Type { return types.Time },
			EvalArgs: typedLiteralEval("TIME", types.Time)}
	}},
	sql.Function1{Name: "__miraj_timestamp", Fn: func(e sql.Expression) sql.Expression {
		typ := sql.Type(types.Datetime)
		if lit, ok := e.(interface{ Value() any }); ok {
			if s, ok := lit.Value().(string); ok {
				if m := fractionRE.FindStringSubmatch(s); m != nil {
					typ = types.MustCreateDatetimeType(sqltypes.Datetime, len(m[1]))
				}
			}
		}
		return &Scalar{Name: "TIMESTAMP", Args: []sql.Expression{e}, TypeOf: func([]sql.Expression) sql.Type { return typ },
			EvalArgs: typedLiteralEval("DATETIME", typ)}
	}},
}

// typedLiteralEval converts the literal's text to typ; text that is not
// one is 1525 Incorrect <kind> value.
func typedLiteralEval(kind string, typ sql.Type) func(ctx *sql.Context, args []sql.Expression, vals []any) (any, error) {
	return func(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
		s, _ := vals[0].(string)
		v, _, err := typ.Convert(ctx, strings.TrimSpace(s))
		if err != nil || v == nil {
			return nil, mysql.NewSQLError(1525, "HY000", "Incorrect %s value: '%s'", kind, s)
		}
		return v, nil
	}
}
