package sqlserver

import (
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

func TestUnwrapVersionComments(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"SELECT 1", "SELECT 1"},
		{"/*!40101 SET NAMES utf8mb4 */", "         SET NAMES utf8mb4   "},
		{"/*!50106 CREATE*/ /*!50106 EVENT e DO DELETE FROM t \n*/", "         CREATE            EVENT e DO DELETE FROM t \n  "},
		{"/*!90000 SELECT 2 */SELECT 1", "                    SELECT 1"},
		{"SELECT '/*!50000 x */'", "SELECT '/*!50000 x */'"},
		{"/*M!999999\\- enable the sandbox mode */ SELECT 1", "/*M!999999\\- enable the sandbox mode */ SELECT 1"},
		{"/* plain */ /*!50001 CREATE VIEW v AS SELECT 'a*/b' */", "/* plain */          CREATE VIEW v AS SELECT 'a*/b'   "},
	} {
		got := sqltext.UnwrapVersionComments(c.q)
		if got != c.want {
			t.Errorf("%q:\n got  %q\n want %q", c.q, got, c.want)
		}
		if len(got) != len(c.q) {
			t.Errorf("%q: length %d, want %d", c.q, len(got), len(c.q))
		}
	}
}

func TestSystemSchemaRewrite(t *testing.T) {
	for _, c := range []struct {
		q, db string
		want  string // prefix of the rewrite; "" when none
	}{
		{"SHOW CREATE TABLE `general_log`", "mysql", "SELECT 'general_log' AS `Table`"},
		{"show create table mysql.slow_log", "shop", "SELECT 'slow_log' AS `Table`"},
		{"SHOW CREATE TABLE general_log", "shop", ""},
		{"SHOW CREATE TABLE user", "mysql", ""},
		{"DROP TABLE IF EXISTS `db`", "mysql", "SET @miraj_system_table"},
		{"DROP TABLE IF EXISTS `db`, `items`", "mysql", ""},
		{"DROP TABLE mysql.user", "", "SET @miraj_system_table"},
		{"DROP TABLE user", "shop", ""},
		{"CREATE TABLE IF NOT EXISTS `general_log` (a int) ENGINE=CSV", "mysql", "SET @miraj_system_table"},
		{"CREATE TABLE `items` (a int)", "mysql", ""},
		{"SELECT engine, table_type FROM INFORMATION_SCHEMA.TABLES WHERE table_schema = DATABASE() AND table_name = 'general_log'", "mysql", "SELECT 'CSV' AS engine"},
		{"SELECT engine, table_type FROM INFORMATION_SCHEMA.TABLES WHERE table_schema = DATABASE() AND table_name = 'user'", "mysql", "SELECT 'InnoDB' AS engine"},
		{"SELECT engine, table_type FROM INFORMATION_SCHEMA.TABLES WHERE table_schema = DATABASE() AND table_name = 'items'", "mysql", ""},
		{"SELECT engine, table_type FROM INFORMATION_SCHEMA.TABLES WHERE table_schema = DATABASE() AND table_name = 'user'", "shop", ""},
		{"FLUSH /*!40101 LOCAL */ TABLES", "", "FLUSH /*!40101       */ TABLES"},
		{"FLUSH NO_WRITE_TO_BINLOG TABLES WITH READ LOCK", "", "FLUSH                    TABLES WITH READ LOCK"},
		{"FLUSH TABLES", "", ""},
		{"/*!40000 DROP DATABASE IF EXISTS `mysql`*/", "", "SET @miraj_system_table"},
		{"DROP SCHEMA mysql", "shop", "SET @miraj_system_table"},
		{"DROP DATABASE IF EXISTS `shop`", "", ""},
	} {
		got, ok := systemSchemaRewrite(c.q, c.db)
		if ok != (c.want != "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%q in %q: %q %v, want a rewrite starting %q", c.q, c.db, got, ok, c.want)
		}
	}
	// The statements after the first are kept.
	if got, _ := systemSchemaRewrite("DROP TABLE IF EXISTS `db`; SELECT 1", "mysql"); !strings.HasSuffix(got, "; SELECT 1") {
		t.Errorf("rest of the query lost: %q", got)
	}
}

func TestChecksumRewrite(t *testing.T) {
	got, ok := checksumRewrite("CHECKSUM TABLE shop.items, `o``dd` EXTENDED; SELECT 1")
	if !ok {
		t.Fatal("no rewrite")
	}
	for _, want := range []string{
		"SELECT miraj_table_checksum_label('shop', 'items') AS `Table`, miraj_table_checksum('shop', 'items') AS `Checksum`",
		" UNION ALL SELECT miraj_table_checksum_label(DATABASE(), 'o`dd') AS `Table`, miraj_table_checksum(DATABASE(), 'o`dd') AS `Checksum`; SELECT 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewrite %q lacks %q", got, want)
		}
	}
	if got, _ := checksumRewrite("CHECKSUM TABLE t QUICK"); !strings.Contains(got, "IF(FALSE, miraj_table_checksum(DATABASE(), 't'), NULL) AS `Checksum`") {
		t.Errorf("QUICK: %q", got)
	}
	for _, q := range []string{"CHECKSUM TABLE", "CHECKSUM TABLE t QUICK x", "SELECT 1"} {
		if _, ok := checksumRewrite(q); ok {
			t.Errorf("%q rewritten", q)
		}
	}
}
