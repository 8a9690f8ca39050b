package sqlserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Statements MySQL knows and Miraj does not answer are refused as not
// supported (1235), not as syntax errors (1064); their neighbours work.
func TestNotBuiltStatements(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"SHOW ENGINE INNODB STATUS", "show engine innodb mutex", "SHOW PROFILES", "SHOW PROFILE CPU FOR QUERY 1", "HELP 'select'"} {
		_, err := db.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, "doesn't yet support") {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	var engine, support, comment string
	var tx, xa, sp any
	if err := db.QueryRow("SHOW ENGINES").Scan(&engine, &support, &comment, &tx, &xa, &sp); err != nil {
		t.Errorf("SHOW ENGINES: %v", err)
	}
}
