package system

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The client programs of the transaction matrix (test/clients) and what
// they need. Debian's python3 is named by path: a python3 found first on
// PATH (pyenv, a venv) does not see Debian's modules.
const (
	debianPython   = "/usr/bin/python3"
	mariadbJDBCJar = "/usr/share/java/mariadb-java-client.jar"
	clientsDir     = "../clients"
	installClients = "scripts/install-test-clients.sh"
	// clientTimeout bounds one client program: each takes well under
	// 5 s (the JVM compiling the Java source included).
	clientTimeout = 60 * time.Second
)

// requireClient fails the test when a client is missing and
// MIRAJ_REQUIRE_CLIENTS=1 (CI), and skips it otherwise, saying what to
// install: a missing client must not pass unnoticed where it is required.
func requireClient(t *testing.T, what, install string, present bool) {
	t.Helper()
	if present {
		return
	}
	msg := fmt.Sprintf("%s is not installed: %s (or %s)", what, install, installClients)
	if os.Getenv("MIRAJ_REQUIRE_CLIENTS") == "1" {
		t.Fatal(msg + "; MIRAJ_REQUIRE_CLIENTS=1 requires every client")
	}
	t.Skip(msg)
}

func pythonModule(t *testing.T, module, debianPackage string) {
	t.Helper()
	err := exec.Command(debianPython, "-c", "import "+module).Run()
	requireClient(t, "Python module "+module, "apt-get install -y "+debianPackage, err == nil)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runClient runs one client program against the server and fails the test
// unless it ends with PASS; its output (a line per check) is logged. env
// is added to the test's environment.
func runClient(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "PASS") {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
}

// TestClientTransactions runs the transactions of each client library we
// claim against a real server: after a rollback nothing is there, after a
// commit everything is, and where the driver keeps the server's status flags
// (autocommit, in transaction) they agree with the session. Drivers decide
// by those flags whether to send SET autocommit, COMMIT and ROLLBACK at all.
// Each client also inserts two rows into a table with an AFTER INSERT
// trigger, and reads an OK packet: the rows inserted and the table's own
// first id, not a result set.
func TestClientTransactions(t *testing.T) {
	clientMatrix(t, newServer(t, t.TempDir()), "")
}

// TestClientTransactionsTLS runs the same programs over TLS, each client
// given the CA the server made at its first start (the server's
// certificate is verified against it where the driver does so: PyMySQL,
// go-sql-driver, mysql2, Connector/J), and checking first that its session
// has a cipher.
func TestClientTransactionsTLS(t *testing.T) {
	root := t.TempDir()
	s := newServer(t, root)
	clientMatrix(t, s, filepath.Join(root, "miraj", "ca.pem"))
}

// clientMatrix runs the client programs against s, over TLS with the CA
// file ca when it is not empty.
func clientMatrix(t *testing.T, s *server, ca string) {
	var env []string
	if ca != "" {
		env = []string{"MIRAJ_SSL_CA=" + ca}
	}
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	admin := s.open("")
	// newDB gives each client a database of its own.
	newDB := func(t *testing.T, name string) string {
		mustExec(t, admin, "CREATE DATABASE "+name)
		return name
	}
	python := func(script string, args ...string) []string {
		return append([]string{filepath.Join("python", script)}, append(args, host, port)...)
	}

	t.Run("PyMySQL", func(t *testing.T) {
		pythonModule(t, "pymysql", "python3-pymysql")
		runClient(t, clientsDir, env, debianPython, append(python("dbapi_tx.py", "pymysql"), newDB(t, "tx_pymysql"))...)
	})
	t.Run("MySQLdb", func(t *testing.T) {
		pythonModule(t, "MySQLdb", "python3-mysqldb")
		runClient(t, clientsDir, env, debianPython, append(python("dbapi_tx.py", "MySQLdb"), newDB(t, "tx_mysqldb"))...)
	})
	for _, driver := range []struct{ dialect, module, pkg string }{
		{"pymysql", "pymysql", "python3-pymysql"},
		{"mysqldb", "MySQLdb", "python3-mysqldb"},
	} {
		t.Run("SQLAlchemy+"+driver.dialect, func(t *testing.T) {
			pythonModule(t, "sqlalchemy", "python3-sqlalchemy")
			pythonModule(t, driver.module, driver.pkg)
			runClient(t, clientsDir, env, debianPython, append(python("sqlalchemy_tx.py", driver.dialect), newDB(t, "tx_sqlalchemy_"+driver.dialect))...)
		})
	}
	// Django's MySQL backend drives transactions through mysqlclient
	// (MySQLdb); the same calls through PyMySQL too.
	for _, driver := range []struct{ module, pkg string }{{"MySQLdb", "python3-mysqldb"}, {"pymysql", "python3-pymysql"}} {
		t.Run("Django-style+"+driver.module, func(t *testing.T) {
			pythonModule(t, driver.module, driver.pkg)
			runClient(t, clientsDir, env, debianPython, append(python("autocommit_toggle.py", driver.module), newDB(t, "tx_toggle_"+strings.ToLower(driver.module)))...)
		})
	}
	t.Run("go-sql-driver", func(t *testing.T) {
		if ca == "" {
			goSQLDriverTransactions(t, s.open(newDB(t, "tx_go")))
			return
		}
		db := s.openTLS(t, ca, "root", "", newDB(t, "tx_go"))
		if cipher := statusValue(t, db, "Ssl_cipher"); cipher == "" {
			t.Fatal("the session over TLS has no Ssl_cipher")
		}
		goSQLDriverTransactions(t, db)
	})
	t.Run("node-mysql2", func(t *testing.T) {
		_, err := exec.LookPath("node")
		requireClient(t, "node", "apt-get install -y nodejs", err == nil)
		requireClient(t, "mysql2 (npm)", "cd test/clients/node && npm ci", fileExists(filepath.Join(clientsDir, "node/node_modules/mysql2/package.json")))
		runClient(t, filepath.Join(clientsDir, "node"), env, "node", "tx.js", host, port, newDB(t, "tx_node"))
	})
	t.Run("JDBC-MariaDB-Connector-J", func(t *testing.T) {
		_, err := exec.LookPath("java")
		requireClient(t, "java", "apt-get install -y default-jdk-headless", err == nil)
		requireClient(t, "MariaDB Connector/J", "apt-get install -y libmariadb-java", fileExists(mariadbJDBCJar))
		// The source-file launcher compiles JdbcTx.java in memory: no
		// build step, no class files left behind.
		runClient(t, filepath.Join(clientsDir, "java"), env, "java", "-cp", mariadbJDBCJar, "JdbcTx.java", host, port, newDB(t, "tx_jdbc"))
	})
}

// goSQLDriverTransactions: database/sql's BeginTx, Rollback and Commit
// through go-sql-driver/mysql, and the lost update ending in 1213.
func goSQLDriverTransactions(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	count := func() string { return queryString(t, db, "SELECT COUNT(*) FROM t") }

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (1, 10), (2, 20)")
	mustExec(t, tx, "UPDATE t SET v = v + 1 WHERE id = ?", 1)
	if got := count(); got != "0;" {
		t.Fatalf("rows seen outside the transaction before commit: %s, want 0", got)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != "0;" {
		t.Fatalf("rows after tx.Rollback(): %s, want 0", got)
	}

	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (?, ?), (?, ?)", 1, 10, 2, 20)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != "2;" {
		t.Fatalf("rows after tx.Commit(): %s, want 2", got)
	}

	// A read-only transaction refuses writes and leaves nothing behind.
	ro, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Exec("INSERT INTO t VALUES (3, 30)"); err == nil {
		t.Fatal("INSERT in a READ ONLY transaction succeeded")
	}
	ro.Rollback()
	if got := count(); got != "2;" {
		t.Fatalf("rows after the read-only transaction: %s, want 2", got)
	}

	// Lost update: A reads 10 (no FOR UPDATE), B sets 11 and commits, A sets
	// 20 and commits: A gets 1213 and B's 11 stays.
	a, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := a.QueryRow("SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 10 {
		t.Fatalf("A reads %d (%v), want 10", v, err)
	}
	mustExec(t, db, "UPDATE t SET v = 11 WHERE id = 1")
	mustExec(t, a, "UPDATE t SET v = 20 WHERE id = 1")
	err = a.Commit()
	if num, state := mysqlError(err); num != 1213 || state != "40001" {
		t.Fatalf("A's commit after B's: %v, want error 1213 (40001)", err)
	}
	if got := queryString(t, db, "SELECT v FROM t WHERE id = 1"); got != "11;" {
		t.Fatalf("v after the conflict: %s, want 11", got)
	}

	// An INSERT into a table with an AFTER INSERT trigger (which writes to
	// a log table with an AUTO_INCREMENT of its own) answers an OK packet:
	// Exec reads the rows it inserted and the id of its first row in the
	// table itself (the log table's ids are 4 and 5). Exec discards a
	// result set, and reports 0 and 0 then.
	mustExec(t, db, "CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(20))")
	mustExec(t, db, "CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))")
	mustExec(t, db, "INSERT INTO audit (what) VALUES ('start'), ('start'), ('start')")
	mustExec(t, db, "CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('order ', NEW.id))")
	res, err := db.ExecContext(ctx, "INSERT INTO orders (item) VALUES ('pen'), ('ink')")
	if err != nil {
		t.Fatal(err)
	}
	n, errN := res.RowsAffected()
	id, errID := res.LastInsertId()
	if n != 2 || id != 1 || errN != nil || errID != nil {
		t.Fatalf("INSERT with a trigger: RowsAffected %d (%v), LastInsertId %d (%v); want 2 and 1", n, errN, id, errID)
	}
	if got := queryString(t, db, "SELECT what FROM audit WHERE n > 3 ORDER BY n"); got != "order 1;order 2;" {
		t.Fatalf("the trigger's rows: %s, want order 1 and order 2", got)
	}
}
