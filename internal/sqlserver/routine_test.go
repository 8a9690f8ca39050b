package sqlserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// An inventory as applications write it: a stored function that reads a
// table, a procedure with a cursor loop, a NOT FOUND handler, parameters
// and local variables in every kind of expression (UPDATE's SET, CASE,
// BETWEEN, IN, ORDER BY…), an OUT parameter; a procedure that signals
// with a message made of its variables; a handler for an error number; an
// EXIT handler that logs and RESIGNALs. The test checks what they leave
// in the tables.
func TestInventoryProcedures(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE inv")
	c := dbConn(t, open("root", "", "inv"))
	ctx := context.Background()
	exec := func(q string, args ...any) error {
		_, err := c.ExecContext(ctx, q, args...)
		return err
	}
	must := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if err := exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	rows := func(q string) string {
		t.Helper()
		_, out := rowsAsText(t, c, q)
		return strings.Join(out, ";")
	}
	must(
		"CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(10,2), qty INT, reorder_at INT)",
		"CREATE TABLE orders (id INT PRIMARY KEY, product INT, qty INT, total DECIMAL(10,2))",
		"CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100))",
		"INSERT INTO products VALUES (1, 'bolt', 0.25, 100, 50), (2, 'nut', 0.10, 20, 50), (3, 'gear', 12.50, 2, 5), (4, 'belt', 7.00, 0, 1)",
		`CREATE FUNCTION line_total(p INT, n INT) RETURNS DECIMAL(10,2) READS SQL DATA
		BEGIN
		  DECLARE unit DECIMAL(10,2);
		  SELECT price INTO unit FROM products WHERE id = p;
		  IF unit IS NULL THEN RETURN NULL; END IF;
		  RETURN unit * n;
		END`,
		`CREATE PROCEDURE restock(IN extra INT, OUT restocked INT)
		BEGIN
		  DECLARE done INT DEFAULT 0;
		  DECLARE pid INT;
		  DECLARE pqty INT;
		  DECLARE target INT;
		  DECLARE cur CURSOR FOR SELECT id, qty, reorder_at FROM products WHERE qty < reorder_at ORDER BY id;
		  DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1;
		  SET restocked = 0;
		  OPEN cur;
		  fetching: LOOP
		    FETCH cur INTO pid, pqty, target;
		    IF done = 1 THEN LEAVE fetching; END IF;
		    UPDATE products SET qty = target + extra - CASE WHEN pqty BETWEEN 1 AND 9 THEN pqty ELSE 0 END + pqty WHERE id = pid;
		    INSERT INTO log (msg) VALUES (CONCAT('restocked ', pid, ' from ', pqty, ' to ', target + extra));
		    SET restocked = restocked + 1;
		  END LOOP;
		  CLOSE cur;
		END`,
		`CREATE PROCEDURE place_order(IN oid INT, IN p INT, IN n INT)
		BEGIN
		  DECLARE have INT;
		  DECLARE pname VARCHAR(20);
		  DECLARE msg VARCHAR(100);
		  DECLARE EXIT HANDLER FOR 1062
		  BEGIN
		    INSERT INTO log (msg) VALUES (CONCAT('order ', oid, ' exists'));
		  END;
		  SELECT qty, name INTO have, pname FROM products WHERE id = p;
		  IF have < n THEN
		    SET msg = CONCAT('not enough ', pname, ': ', have, ' < ', n);
		    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		  END IF;
		  INSERT INTO orders VALUES (oid, p, n, line_total(p, n));
		  UPDATE products SET qty = qty - n WHERE id = p AND p IN (SELECT id FROM products WHERE qty >= n);
		END`,
		`CREATE PROCEDURE strict_order(IN oid INT, IN p INT, IN n INT)
		BEGIN
		  DECLARE EXIT HANDLER FOR SQLEXCEPTION
		  BEGIN
		    INSERT INTO log (msg) VALUES (CONCAT('failed order ', oid));
		    RESIGNAL SET MESSAGE_TEXT = 'order refused';
		  END;
		  INSERT INTO orders VALUES (oid, p, n, line_total(p, n));
		END`,
	)

	if got := rows("SELECT line_total(3, 4), line_total(9, 1), line_total(1, 10)"); got != "50.00|NULL|2.50" {
		t.Errorf("line_total: %s", got)
	}
	must("CALL restock(10, @n)")
	if got := rows("SELECT @n"); got != "3" {
		t.Errorf("restocked %s products, want 3", got)
	}
	if got := rows("SELECT id, qty FROM products ORDER BY id"); got != "1|100;2|80;3|15;4|11" {
		t.Errorf("after restock: %s", got)
	}
	must("CALL place_order(1, 3, 4)", "CALL place_order(2, 1, 30)")
	err := exec("CALL place_order(3, 2, 500)")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1644 || me.SQLState != [5]byte{'4', '5', '0', '0', '0'} || me.Message != "not enough nut: 80 < 500" {
		t.Errorf("SIGNAL: %v, want 1644 (45000) 'not enough nut: 80 < 500'", err)
	}
	must("CALL place_order(1, 4, 1)") // 1062 handled
	err = exec("CALL strict_order(2, 1, 1)")
	if !errors.As(err, &me) || me.Number != 1062 || me.Message != "order refused" {
		t.Errorf("RESIGNAL: %v, want 1062 'order refused'", err)
	}
	if got := rows("SELECT id, product, qty, total FROM orders ORDER BY id"); got != "1|3|4|50.00;2|1|30|7.50" {
		t.Errorf("orders: %s", got)
	}
	if got := rows("SELECT id, qty FROM products ORDER BY id"); got != "1|70;2|80;3|11;4|11" {
		t.Errorf("stock after the orders: %s", got)
	}
	want := "restocked 2 from 20 to 60;restocked 3 from 2 to 15;restocked 4 from 0 to 11;order 1 exists;failed order 2"
	if got := rows("SELECT msg FROM log ORDER BY id"); got != want {
		t.Errorf("log:\n%s\nwant\n%s", got, want)
	}
}

// Local variables take their declared type (SET x = 2.6 into an INT is
// 3), are NULL until set, and DEFAULT takes any expression; a handler for
// an SQLSTATE or a named condition catches its error, the most specific
// handler first; RESIGNAL outside a handler is 1645; FETCH past the end
// without a handler is 1329; SELECT … INTO of no row warns 1329.
func TestRoutineVariablesAndHandlers(t *testing.T) {
	_, open := startServer(t)
	execAll(t, open("root", "", ""), "CREATE DATABASE rv")
	c := dbConn(t, open("root", "", "rv"))
	ctx := context.Background()
	must := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	must("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)",
		`CREATE PROCEDURE vars(IN n INT)
		BEGIN
		  DECLARE i INT;
		  DECLARE d INT DEFAULT n * 2 + 1;
		  DECLARE wasnull INT;
		  SET wasnull = i IS NULL;
		  SET i = 2.6;
		  SELECT i, d, wasnull, (SELECT COUNT(*) FROM t GROUP BY id HAVING id = n) AS h;
		END`,
		`CREATE PROCEDURE which(IN k INT)
		BEGIN
		  DECLARE r VARCHAR(20) DEFAULT 'none';
		  DECLARE dup CONDITION FOR 1062;
		  BEGIN
		    DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET r = 'exception';
		    DECLARE CONTINUE HANDLER FOR SQLSTATE '23000' SET r = 'state';
		    DECLARE CONTINUE HANDLER FOR dup SET r = 'number';
		    IF k = 1 THEN INSERT INTO t VALUES (1); END IF;
		    IF k = 2 THEN INSERT INTO nosuch VALUES (1); END IF;
		  END;
		  SELECT r;
		END`,
		"CREATE PROCEDURE bad_resignal() RESIGNAL",
		`CREATE PROCEDURE fetch_past()
		BEGIN
		  DECLARE x INT;
		  DECLARE cur CURSOR FOR SELECT id FROM t;
		  OPEN cur;
		  FETCH cur INTO x;
		  FETCH cur INTO x;
		END`,
		`CREATE PROCEDURE decimals(IN x DECIMAL(10,2))
		BEGIN
		  DECLARE a DECIMAL(10,2) DEFAULT 100.50;
		  DECLARE c DECIMAL(10,2);
		  DECLARE d DATE DEFAULT '2026-03-01';
		  DECLARE r VARCHAR(10) DEFAULT 'right';
		  SET c = a + x;
		  IF a < x THEN SET r = 'wrong'; END IF;
		  SELECT r, a < x AS lt, c, a * 3 AS t, d + INTERVAL 1 DAY AS nd, a;
		END`,
		`CREATE PROCEDURE into_none(OUT o INT)
		BEGIN
		  SET o = 7;
		  SELECT id INTO o FROM t WHERE id = 99;
		END`,
	)
	_, out := rowsAsText(t, c, "CALL vars(1)")
	if got := strings.Join(out, ";"); got != "3|3|1|1" {
		t.Errorf("vars: %s, want 3|3|1|1", got)
	}
	// DECIMAL and DATE variables compare and compute as numbers and dates
	// (as text, 100.50 < 20.00 was true), and are sent with their types.
	cols, out := rowsAsText(t, c, "CALL decimals(20.00)")
	if got := strings.Join(out, ";"); got != "right|0|120.50|301.50|2026-03-02|100.50" {
		t.Errorf("decimals: %s (%s)", got, cols)
	}
	rs, err := c.QueryContext(ctx, "CALL decimals(1)")
	if err != nil {
		t.Fatal(err)
	}
	cts, _ := rs.ColumnTypes()
	var typeNames []string
	for _, ct := range cts {
		typeNames = append(typeNames, ct.DatabaseTypeName())
	}
	rs.Close()
	if got := strings.Join(typeNames, ","); !strings.HasSuffix(got, ",DECIMAL,DECIMAL,DATE,DECIMAL") {
		t.Errorf("decimals' column types: %s", got)
	}
	for k, want := range map[int]string{1: "number", 2: "exception", 3: "none"} {
		_, out := rowsAsText(t, c, "CALL which(?)", k)
		if got := strings.Join(out, ";"); got != want {
			t.Errorf("which(%d): %s, want %s", k, got, want)
		}
	}
	var me *mysql.MySQLError
	if _, err := c.ExecContext(ctx, "CALL bad_resignal()"); !errors.As(err, &me) || me.Number != 1645 {
		t.Errorf("RESIGNAL outside a handler: %v, want 1645", err)
	}
	if _, err := c.ExecContext(ctx, "CALL fetch_past()"); !errors.As(err, &me) || me.Number != 1329 {
		t.Errorf("FETCH past the end: %v, want 1329", err)
	}
	must("CALL into_none(@o)")
	var o, code int
	var lvl, msg string
	if err := c.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&lvl, &code, &msg); err != nil || code != 1329 {
		t.Errorf("SELECT … INTO of no row: warning %d %q (%v), want 1329", code, msg, err)
	}
	if err := c.QueryRowContext(ctx, "SELECT @o").Scan(&o); err != nil || o != 7 {
		t.Errorf("@o = %d (%v), want 7: SELECT … INTO of no row leaves the variable", o, err)
	}
}

// Stored functions: created (a dump's DEFINER and version comments
// included), called in any expression (a table's rows, WHERE, a
// procedure), shown, dropped; a function that writes writes in the
// caller's transaction; recursion is 1424; a missing RETURN is 1321; a
// wrong argument count 1318; an existing name 1304.
func TestStoredFunctions(t *testing.T) {
	_, open := startServer(t)
	execAll(t, open("root", "", ""), "CREATE DATABASE sf")
	c := dbConn(t, open("root", "", "sf"))
	ctx := context.Background()
	must := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	rows := func(q string) string {
		t.Helper()
		_, out := rowsAsText(t, c, q)
		return strings.Join(out, ";")
	}
	must("CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
		"CREATE TABLE audit (n INT)",
		"/*!50003 CREATE*/ /*!50020 DEFINER=`root`@`localhost`*/ /*!50003 FUNCTION `twice`(x INT) RETURNS int\n    DETERMINISTIC\nRETURN x * 2 */",
		"CREATE FUNCTION clamp(x INT, lo INT, hi INT) RETURNS INT DETERMINISTIC RETURN CASE WHEN x < lo THEN lo WHEN x > hi THEN hi ELSE x END",
		"CREATE FUNCTION noted(x INT) RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO audit VALUES (x); RETURN x; END",
		"CREATE FUNCTION fact(n INT) RETURNS INT BEGIN IF n <= 1 THEN RETURN 1; END IF; RETURN n * fact(n - 1); END",
		"CREATE FUNCTION noret(n INT) RETURNS INT BEGIN DECLARE x INT; SET x = n; END",
		"CREATE PROCEDURE use_fn(IN n INT) SELECT twice(n) + clamp(n, 0, 5) AS r",
	)
	if got := rows("SELECT id, twice(v), clamp(v, 15, 25) FROM t WHERE twice(id) >= 4 ORDER BY id"); got != "2|40|20;3|60|25" {
		t.Errorf("functions over rows: %s", got)
	}
	if got := rows("CALL use_fn(7)"); got != "19" {
		t.Errorf("a function in a procedure: %s, want 19", got)
	}
	must("START TRANSACTION")
	if got := rows("SELECT noted(5), noted(6)"); got != "5|6" {
		t.Errorf("noted: %s", got)
	}
	must("ROLLBACK")
	if got := rows("SELECT COUNT(*) FROM audit"); got != "0" {
		t.Errorf("a function's writes after ROLLBACK: %s rows, want 0 (the caller's transaction)", got)
	}
	if got := rows("SELECT noted(8)"); got != "8" {
		t.Errorf("noted: %s", got)
	}
	if got := rows("SELECT n FROM audit"); got != "8" {
		t.Errorf("a function's write in autocommit: %s, want 8", got)
	}
	var me *mysql.MySQLError
	for q, code := range map[string]uint16{
		"SELECT fact(3)":     1424,
		"SELECT noret(1)":    1321,
		"SELECT twice(1, 2)": 1318,
		"CREATE FUNCTION twice(y INT) RETURNS INT RETURN y": 1304,
		"DROP FUNCTION nosuch":                              1305,
		"SHOW CREATE FUNCTION nosuch":                       1305,
	} {
		rs, err := c.QueryContext(ctx, q)
		if err == nil {
			for rs.Next() {
			}
			err = rs.Err()
			rs.Close()
		}
		if !errors.As(err, &me) || me.Number != code {
			t.Errorf("%s: %v, want %d", q, err, code)
		}
	}
	var name, mode, create, cs, cc, dc string
	if err := c.QueryRowContext(ctx, "SHOW CREATE FUNCTION clamp").Scan(&name, &mode, &create, &cs, &cc, &dc); err != nil {
		t.Fatal(err)
	}
	if want := "CREATE FUNCTION clamp(x INT, lo INT, hi INT) RETURNS INT DETERMINISTIC RETURN CASE WHEN x < lo THEN lo WHEN x > hi THEN hi ELSE x END"; name != "clamp" || create != want {
		t.Errorf("SHOW CREATE FUNCTION: %s %q", name, create)
	}
	// Called with its database; listed by SHOW FUNCTION STATUS and
	// information_schema.ROUTINES, which dumps read.
	if got := rows("SELECT sf.twice(4), `sf`.clamp(9, 0, 5)"); got != "8|5" {
		t.Errorf("qualified calls: %s", got)
	}
	if got := rows("SELECT ROUTINE_NAME, ROUTINE_TYPE, DTD_IDENTIFIER, IS_DETERMINISTIC, SQL_DATA_ACCESS FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'sf' ORDER BY ROUTINE_NAME"); got != "clamp|FUNCTION|int|YES|CONTAINS SQL;fact|FUNCTION|int|NO|CONTAINS SQL;noret|FUNCTION|int|NO|CONTAINS SQL;noted|FUNCTION|int|NO|MODIFIES SQL DATA;twice|FUNCTION|int|YES|CONTAINS SQL;use_fn|PROCEDURE|NULL|NO|CONTAINS SQL" {
		t.Errorf("information_schema.ROUTINES: %s", got)
	}
	if _, out := rowsAsText(t, c, "SHOW FUNCTION STATUS WHERE Db = 'sf'"); len(out) != 5 {
		t.Errorf("SHOW FUNCTION STATUS: %q, want 5 functions", out)
	}
	must("DROP FUNCTION twice", "DROP FUNCTION IF EXISTS twice")
	if _, err := c.ExecContext(ctx, "SELECT twice(1)"); !errors.As(err, &me) || me.Number != 1305 {
		t.Errorf("a dropped function: %v, want 1305", err)
	}
}

// Writes through views: an updatable view's UPDATE, INSERT and DELETE
// reach its table (its column names and its WHERE applied); a view that
// is not updatable is 1288 / 1471, an expression column 1348; WITH
// [CASCADED | LOCAL] CHECK OPTION is kept (SHOW CREATE VIEW,
// information_schema.VIEWS) and refuses a row the view would not show
// with 1369, through a view over it too, and in a procedure.
func TestUpdatableViews(t *testing.T) {
	_, open := startServer(t)
	execAll(t, open("root", "", ""), "CREATE DATABASE uv")
	c := dbConn(t, open("root", "", "uv"))
	ctx := context.Background()
	must := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	rows := func(q string) string {
		t.Helper()
		_, out := rowsAsText(t, c, q)
		return strings.Join(out, ";")
	}
	must("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), qty INT)",
		"INSERT INTO t VALUES (1, 'a', 5), (2, 'b', 50)",
		"CREATE VIEW low AS SELECT id, name AS nm, qty, qty * 2 AS dbl FROM t WHERE qty < 10",
		"CREATE VIEW checked AS SELECT id, qty FROM t WHERE qty < 10 WITH CHECK OPTION",
		"CREATE VIEW local_checked AS SELECT id, qty FROM t WHERE qty < 10 WITH LOCAL CHECK OPTION",
		"CREATE VIEW outer_v AS SELECT id, qty FROM checked WHERE qty > 0",
		"CREATE VIEW grouped AS SELECT qty, COUNT(*) AS n FROM t GROUP BY qty",
		"CREATE PROCEDURE via_view(IN q INT) UPDATE checked SET qty = q WHERE id = 1",
	)
	must("UPDATE low SET qty = 6 WHERE nm = 'a'", "UPDATE low SET qty = qty + 1", // row 2 is not in the view
		"INSERT INTO low (id, nm, qty) VALUES (3, 'c', 1)", "DELETE FROM low WHERE nm = 'c'", "DELETE FROM low WHERE id = 2")
	if got := rows("SELECT id, name, qty FROM t ORDER BY id"); got != "1|a|7;2|b|50" {
		t.Errorf("after writes through a view: %s", got)
	}
	var me *mysql.MySQLError
	for q, code := range map[string]uint16{
		"UPDATE low SET dbl = 3":                     1348,
		"INSERT INTO low VALUES (4, 'd', 1, 2)":      1471,
		"UPDATE grouped SET qty = 1":                 1288,
		"DELETE FROM grouped":                        1288,
		"INSERT INTO grouped VALUES (1, 1)":          1471,
		"UPDATE checked SET qty = 20 WHERE id = 1":   1369,
		"INSERT INTO checked VALUES (5, 50)":         1369,
		"INSERT INTO local_checked VALUES (5, NULL)": 1369,
		"INSERT INTO outer_v VALUES (6, 60)":         1369,
		"CALL via_view(30)":                          1369,
	} {
		_, err := c.ExecContext(ctx, q)
		if !errors.As(err, &me) || me.Number != code {
			t.Errorf("%s: %v, want %d", q, err, code)
		}
	}
	if _, err := c.ExecContext(ctx, "UPDATE checked SET qty = 20 WHERE id = 1"); !errors.As(err, &me) || me.Message != "CHECK OPTION failed 'uv.checked'" {
		t.Errorf("1369's text: %v", err)
	}
	must("INSERT INTO checked VALUES (5, 5)", "CALL via_view(8)", "UPDATE outer_v SET qty = 9 WHERE id = 5")
	if got := rows("SELECT id, qty FROM t ORDER BY id"); got != "1|8;2|50;5|9" {
		t.Errorf("after checked writes: %s", got)
	}
	var name, create, cs, cc string
	if err := c.QueryRowContext(ctx, "SHOW CREATE VIEW local_checked").Scan(&name, &create, &cs, &cc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(create, "WHERE qty < 10 WITH LOCAL CHECK OPTION") {
		t.Errorf("SHOW CREATE VIEW: %q", create)
	}
	if got := rows("SELECT TABLE_NAME, CHECK_OPTION, IS_UPDATABLE FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'uv' ORDER BY TABLE_NAME"); got != "checked|CASCADED|YES;grouped|NONE|NO;local_checked|LOCAL|YES;low|NONE|YES;outer_v|NONE|YES" {
		t.Errorf("information_schema.VIEWS: %s", got)
	}
}
