package difftest

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Target is one server to run the scripts on.
type Target struct {
	Name string // "miraj", "mariadb"
	Host string
	Port int
	User string
	Pass string
}

// maxRows bounds the rows read of one result: the corpus's results are
// small, and a runaway one (a cross join gone wrong) must not fill memory.
const maxRows = 10000

// SQLError is an error as the client sees it.
type SQLError struct {
	Code    int
	State   string
	Message string
}

func (e SQLError) String() string {
	return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.State, e.Message)
}

// Warning is one row of SHOW WARNINGS.
type Warning struct {
	Level   string
	Code    string
	Message string
}

func (w Warning) String() string { return w.Level + " " + w.Code + " " + w.Message }

// Outcome is what a client saw of one statement on one server.
type Outcome struct {
	Columns  []string // "name TYPE"
	Rows     []string // one line per row, values separated by " | ", NULL as NULL
	Affected uint64   // rows affected, for statements without a result set
	Err      *SQLError
	Warnings []Warning
}

// Result is one statement's outcome on both servers.
type Result struct {
	Script    string
	Statement Statement
	Miraj     Outcome
	MariaDB   Outcome
}

// Run runs every script on both targets: each script in a database of its
// own (created fresh, dropped afterwards), on one connection per target.
func Run(ctx context.Context, miraj, mariadb Target, scripts []Script) ([]Result, error) {
	var out []Result
	for _, s := range scripts {
		res, err := runScript(ctx, miraj, mariadb, s)
		if err != nil {
			return out, fmt.Errorf("%s: %w", s.Name, err)
		}
		out = append(out, res...)
	}
	return out, nil
}

// Database is the database a script runs in: "dt_" and the file name
// without its extension.
func Database(script string) string {
	return "dt_" + strings.TrimSuffix(script, ".sql")
}

func runScript(ctx context.Context, miraj, mariadb Target, s Script) ([]Result, error) {
	db := Database(s.Name)
	var conns [2]*mysql.Conn
	for i, t := range []Target{miraj, mariadb} {
		c, err := mysql.Connect(ctx, &mysql.ConnParams{Host: t.Host, Port: t.Port, Uname: t.User, Pass: t.Pass})
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", t.Name, err)
		}
		defer c.Close()
		for _, q := range []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db, "USE " + db} {
			if _, err := c.ExecuteFetch(q, 0, false); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", t.Name, q, err)
			}
		}
		conns[i] = c
	}
	var out []Result
	for _, st := range s.Statements {
		r := Result{Script: s.Name, Statement: st}
		q := strings.ReplaceAll(st.SQL, CorpusDirToken, s.Dir)
		var err error
		if r.Miraj, err = execute(conns[0], q); err != nil {
			return out, fmt.Errorf("%s line %d: %w", miraj.Name, st.Line, err)
		}
		if r.MariaDB, err = execute(conns[1], q); err != nil {
			return out, fmt.Errorf("%s line %d: %w", mariadb.Name, st.Line, err)
		}
		out = append(out, r)
	}
	for i, c := range conns {
		if _, err := c.ExecuteFetch("DROP DATABASE IF EXISTS "+db, 0, false); err != nil {
			return out, fmt.Errorf("%s: drop %s: %w", []Target{miraj, mariadb}[i].Name, db, err)
		}
	}
	return out, nil
}

// execute runs q and reads its warnings when the server says it has some
// (asking only then keeps ROW_COUNT() and FOUND_ROWS() of the next
// statement as the script left them). An error of the server is part of
// the outcome; the returned error is a broken connection. A statement of
// several results (a CALL: its procedure's result sets, then an OK) has
// the columns and rows of each result set, each after the first behind a
// "-- next result" line.
func execute(c *mysql.Conn, q string) (Outcome, error) {
	var o Outcome
	if err := c.WriteComQuery(q); err != nil {
		return o, err
	}
	for first := true; ; first = false {
		res, status, warnings, err := c.ReadQueryResult(context.Background(), maxRows, true)
		if err != nil {
			se, ok := err.(*mysql.SQLError)
			if !ok || (se.Num >= 2000 && se.Num < 3000) { // 2xxx are the client library's (CR_…): the connection is gone
				return o, err
			}
			o.Err = &SQLError{Code: se.Num, State: se.State, Message: se.Message}
			return o, nil
		}
		if !first && len(res.Fields) > 0 {
			o.Columns = append(o.Columns, nextResult)
			o.Rows = append(o.Rows, nextResult)
		}
		for _, f := range res.Fields {
			o.Columns = append(o.Columns, f.Name+" "+typeName(f))
		}
		for _, row := range res.Rows {
			o.Rows = append(o.Rows, rowString(row))
		}
		if first && len(res.Fields) == 0 {
			o.Affected = res.RowsAffected
		}
		if status&mysql.ServerMoreResultsExists == 0 {
			return o, o.readWarnings(c, warnings)
		}
	}
}

// nextResult stands between the result sets of one statement.
const nextResult = "-- next result"

// readWarnings reads the warnings of the statement just run into o when
// the server said it has some.
func (o *Outcome) readWarnings(c *mysql.Conn, warnings uint16) error {
	if warnings == 0 {
		return nil
	}
	w, err := c.ExecuteFetch("SHOW WARNINGS", maxRows, false)
	if err != nil {
		return fmt.Errorf("SHOW WARNINGS: %w", err)
	}
	for _, row := range w.Rows {
		if len(row) == 3 {
			o.Warnings = append(o.Warnings, Warning{Level: row[0].ToString(), Code: row[1].ToString(), Message: row[2].ToString()})
		}
	}
	return nil
}

// typeName is the column's type as the protocol sends it, with the scale of
// a DECIMAL (which decides how its values print) and the digits of a
// table's DATETIME, TIMESTAMP or TIME column (which decide how much of a
// binary value's fraction a client reads).
func typeName(f *querypb.Field) string {
	t := querypb.Type_name[int32(f.Type)]
	switch {
	case f.Type == querypb.Type_DECIMAL:
		t += fmt.Sprintf("(%d)", f.Decimals)
	case f.OrgTable != "" && (f.Type == querypb.Type_DATETIME || f.Type == querypb.Type_TIMESTAMP || f.Type == querypb.Type_TIME):
		t += fmt.Sprintf("(%d)", f.Decimals)
	}
	return t
}

func rowString(row []sqltypes.Value) string {
	vals := make([]string, len(row))
	for i, v := range row {
		if v.IsNull() {
			vals[i] = "NULL"
		} else {
			vals[i] = v.ToString()
		}
	}
	return strings.Join(vals, " | ")
}

// ordered says whether the statement fixes its rows' order.
func ordered(q string) bool {
	return strings.Contains(strings.ToUpper(normalize(q)), "ORDER BY")
}

func sortedCopy(rows []string) []string {
	c := append([]string(nil), rows...)
	sort.Strings(c)
	return c
}
