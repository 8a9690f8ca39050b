package show

import (
	"regexp"
	"strings"

	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// SHOW TABLES LIKE 'p%' names its column Tables_in_<db> (p%) in MySQL,
// and SHOW DATABASES LIKE 'x%' Database (x%): the pattern joins the
// header. go-mysql-server left it out.

// ShowLikeRE reads SHOW [FULL] TABLES [FROM db] LIKE 'pattern' and SHOW
// DATABASES|SCHEMAS LIKE 'pattern'.
var ShowLikeRE = regexp.MustCompile(`(?is)^\s*SHOW\s+(?:(?:FULL\s+)?TABLES(?:\s+(?:FROM|IN)\s+\S+)?|DATABASES|SCHEMAS)\s+LIKE\s+('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")\s*;?\s*$`)

// ShowLikeHeader adds the LIKE pattern of a SHOW TABLES or SHOW DATABASES
// to the name of the result's first column.
func ShowLikeHeader(q string, r *sqltypes.Result) {
	if r == nil || len(r.Fields) == 0 {
		return
	}
	f := r.Fields[0]
	if f.Name != "Database" && !strings.HasPrefix(f.Name, "Tables_in_") {
		return
	}
	m := ShowLikeRE.FindStringSubmatch(q)
	if m == nil {
		return
	}
	f.Name = f.Name + " (" + unquoteSQLString(m[1]) + ")"
}

// unquoteSQLString is the value of a quoted string literal.
func unquoteSQLString(s string) string {
	q := s[0]
	s = s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case '%', '_':
				b.WriteByte('\\') // kept, as in a LIKE pattern
				b.WriteByte(s[i])
			default:
				b.WriteByte(s[i])
			}
		case c == q && i+1 < len(s) && s[i+1] == q:
			i++
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ShowSchemasText rewrites SHOW SCHEMAS, MySQL's other name of SHOW
// DATABASES, into SHOW DATABASES: go-mysql-server's parser knew SHOW
// SCHEMAS alone, without LIKE or WHERE (1064).
func ShowSchemasText(q string) string {
	w := sqltext.ScanUpTo(q, true, 2)
	if len(w) == 2 && w[0].Text == "SHOW" && w[1].Text == "SCHEMAS" && q[w[1].Start] != '`' {
		return q[:w[1].Start] + "DATABASES" + q[w[1].End:]
	}
	return q
}
