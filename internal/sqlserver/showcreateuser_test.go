package sqlserver

import (
	"strings"
	"testing"
)

// SHOW CREATE USER writes the statement that makes the account again (its
// hash included: run on another server, the password still works); an
// account sees its own, another's with CREATE USER or SELECT on mysql
// (1142 otherwise); an unknown account is 1396.
func TestShowCreateUser(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE USER 'app'@'%' IDENTIFIED BY 'pw'",
		"CREATE USER 'admin'@'%' IDENTIFIED BY 'pw2'", "GRANT CREATE USER ON *.* TO 'admin'@'%'",
		"CREATE USER 'locked'@'localhost' ACCOUNT LOCK",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	get := func(user, pass, q string) (col, text string, err error) {
		t.Helper()
		rows, err := open(user, pass, "").Query(q)
		if err != nil {
			return "", "", err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		if !rows.Next() {
			t.Fatalf("%s: no row", q)
		}
		if err := rows.Scan(&text); err != nil {
			t.Fatal(err)
		}
		return cols[0], text, nil
	}
	col, text, err := get("root", "", "SHOW CREATE USER app")
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	if err := root.QueryRow("SELECT authentication_string FROM mysql.user WHERE User = 'app'").Scan(&hash); err != nil {
		t.Fatal(err)
	}
	want := "CREATE USER `app`@`%` IDENTIFIED WITH 'mysql_native_password' AS '" + hash + "' REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT"
	if col != "CREATE USER for app@%" || text != want {
		t.Fatalf("SHOW CREATE USER app:\n got %s: %s\nwant CREATE USER for app@%%: %s", col, text, want)
	}
	if _, text, err := get("root", "", "SHOW CREATE USER 'locked'@'localhost'"); err != nil || !strings.Contains(text, "IDENTIFIED WITH 'mysql_native_password' REQUIRE NONE") || !strings.Contains(text, "ACCOUNT LOCK ") {
		t.Fatalf("SHOW CREATE USER of a locked account without a password: %s (%v)", text, err)
	}
	// Run again elsewhere, the statement gives the same account.
	if _, err := root.Exec("DROP USER 'app'@'%'"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Exec(text); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	if _, err := root.Exec(want); err == nil {
		t.Fatal("CREATE USER of an existing account succeeded")
	}
	if _, err := root.Exec("DROP USER 'app'@'%'"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Exec(want); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	if err := open("app", "pw", "").Ping(); err != nil {
		t.Fatalf("app's password after its CREATE USER ran again: %v", err)
	}

	if _, text, err := get("app", "pw", "SHOW CREATE USER CURRENT_USER()"); err != nil || !strings.HasPrefix(text, "CREATE USER `app`@`%`") {
		t.Fatalf("app's own SHOW CREATE USER: %s (%v)", text, err)
	}
	if _, _, err := get("app", "pw", "SHOW CREATE USER 'root'@'localhost'"); mysqlErr(err) != "1142 42000 SELECT command denied to user 'app'@'%' for table 'user'" {
		t.Fatalf("app's SHOW CREATE USER of root: %v", err)
	}
	if _, text, err := get("admin", "pw2", "SHOW CREATE USER `app`@`%`"); err != nil || !strings.HasPrefix(text, "CREATE USER `app`@`%`") {
		t.Fatalf("SHOW CREATE USER with CREATE USER: %s (%v)", text, err)
	}
	if _, _, err := get("root", "", "SHOW CREATE USER nobody@localhost"); mysqlErr(err) != "1396 HY000 Operation SHOW CREATE USER failed for 'nobody'@'localhost'" {
		t.Fatalf("SHOW CREATE USER of no account: %v", err)
	}
}

// CREATE USER keeps ACCOUNT LOCK (the account cannot log in) and COMMENT
// (REQUIRE: tls_test.go), refuses the options Miraj does not carry out
// (1235) and passes their
// DEFAULT forms; ALTER USER … ACCOUNT LOCK | UNLOCK locks and unlocks.
func TestAccountOptions(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE USER 'lk'@'%' IDENTIFIED BY 'pw' ACCOUNT LOCK",
		"CREATE USER 'dflt'@'%' IDENTIFIED BY 'pw' REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT",
		"CREATE USER 'never'@'%' WITH MAX_USER_CONNECTIONS 0 PASSWORD EXPIRE NEVER",
		"CREATE USER 'noted'@'%' IDENTIFIED BY 'pw' COMMENT 'reporting job'",
		"CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for q, what := range map[string]string{
		"CREATE USER 'x2'@'%' WITH MAX_QUERIES_PER_HOUR 100":                "account resource limits (MAX_QUERIES_PER_HOUR, MAX_UPDATES_PER_HOUR, MAX_CONNECTIONS_PER_HOUR, MAX_USER_CONNECTIONS)",
		"CREATE USER 'x3'@'%' PASSWORD EXPIRE INTERVAL 90 DAY":              "PASSWORD EXPIRE INTERVAL: passwords do not expire",
		"CREATE USER 'x4'@'%' FAILED_LOGIN_ATTEMPTS 3 PASSWORD_LOCK_TIME 1": "FAILED_LOGIN_ATTEMPTS and PASSWORD_LOCK_TIME",
		"CREATE USER 'x5'@'%' PASSWORD HISTORY 5":                           "PASSWORD HISTORY",
	} {
		_, err := root.Exec(q)
		if got, want := mysqlErr(err), "1235 42000 This version of MySQL doesn't yet support '"+what+"'"; got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
	var n int
	if err := root.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User LIKE 'x_'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d refused accounts were created (%v)", n, err)
	}
	login := func(user string) error { return open(user, "pw", "").Ping() }
	if got := mysqlErr(login("lk")); got != "3118 HY000 Access denied for user 'lk'@'127.0.0.1'. Account is locked." {
		t.Fatalf("login to an account created with ACCOUNT LOCK: %s", got)
	}
	if got := mysqlErr(open("lk", "wrong", "").Ping()); got != "1045 28000 Access denied for user 'lk'@'127.0.0.1' (using password: YES)" {
		t.Fatalf("login to a locked account with a wrong password: %s", got)
	}
	if err := login("dflt"); err != nil {
		t.Fatalf("the account with the DEFAULT options: %v", err)
	}
	var text string
	if err := root.QueryRow("SHOW CREATE USER noted").Scan(&text); err != nil || !strings.HasSuffix(text, ` ATTRIBUTE '{"comment": "reporting job"}'`) {
		t.Fatalf("SHOW CREATE USER of an account with a COMMENT: %s (%v)", text, err)
	}

	if _, err := root.Exec("ALTER USER 'lk'@'%' ACCOUNT UNLOCK"); err != nil {
		t.Fatal(err)
	}
	if err := login("lk"); err != nil {
		t.Fatalf("after ACCOUNT UNLOCK: %v", err)
	}
	if _, err := root.Exec("ALTER USER lk, 'plain'@'%' ACCOUNT LOCK"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"lk", "plain"} {
		if err := login(u); err == nil {
			t.Fatalf("%s logged in after ACCOUNT LOCK", u)
		}
	}
	if _, err := root.Exec("ALTER USER 'nobody'@'%' ACCOUNT LOCK"); mysqlErr(err) != "1396 HY000 Operation ALTER USER failed for 'nobody'@'%'" {
		t.Fatalf("ALTER USER of no account: %v", err)
	}
	if _, err := root.Exec("ALTER USER IF EXISTS 'nobody'@'%' ACCOUNT LOCK"); err != nil {
		t.Fatalf("ALTER USER IF EXISTS of no account: %v", err)
	}
	if _, err := open("dflt", "pw", "").Exec("ALTER USER 'dflt'@'%' ACCOUNT LOCK"); mysqlErr(err) != "1227 42000 Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation" {
		t.Fatalf("ALTER USER … ACCOUNT LOCK without CREATE USER: %v", err)
	}
}

// SET PASSWORD changes one's own password, or another's with CREATE USER;
// RENAME USER moves an account with its password and privileges.
func TestSetPasswordRenameUser(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE USER 'app'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON *.* TO 'app'@'%'",
		"CREATE USER 'other'@'%' IDENTIFIED BY 'pw'",
		"CREATE ROLE 'r1'", "CREATE USER 'member'@'%' IDENTIFIED BY 'pw'", "GRANT 'r1' TO 'member'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	app := open("app", "pw", "")
	app.SetMaxOpenConns(1)
	if _, err := app.Exec("SET PASSWORD = 'pw2'"); err != nil {
		t.Fatalf("SET PASSWORD of one's own: %v", err)
	}
	if err := open("app", "pw2", "").Ping(); err != nil {
		t.Fatalf("login with the new password: %v", err)
	}
	if _, err := app.Exec("SET PASSWORD FOR 'other'@'%' = 'x'"); err == nil {
		t.Fatal("SET PASSWORD FOR another account without CREATE USER succeeded")
	}
	if _, err := root.Exec("SET PASSWORD FOR 'other'@'%' = 'pw3'"); err != nil {
		t.Fatal(err)
	}
	if err := open("other", "pw3", "").Ping(); err != nil {
		t.Fatalf("login after SET PASSWORD FOR: %v", err)
	}
	for q, what := range map[string]string{
		"SET PASSWORD FOR other = 'a' REPLACE 'pw3'":             "SET PASSWORD … REPLACE: no password history is kept",
		"SET PASSWORD TO RANDOM":                                 "SET PASSWORD … TO RANDOM",
		"CREATE USER 'd'@'%' IDENTIFIED BY 'pw' DEFAULT ROLE r1": "DEFAULT ROLE",
		"RENAME USER member TO member2":                          "RENAME USER of a role or of an account granted one",
	} {
		if _, err := root.Exec(q); mysqlErr(err) != "1235 42000 This version of MySQL doesn't yet support '"+what+"'" {
			t.Errorf("%s: %v", q, err)
		}
	}

	if _, err := root.Exec("RENAME USER 'app'@'%' TO 'app2'@'localhost', other TO other2"); err != nil {
		t.Fatal(err)
	}
	if err := open("app", "pw2", "").Ping(); err == nil {
		t.Fatal("the old account name still logs in")
	}
	var grants string
	if err := root.QueryRow("SHOW GRANTS FOR 'app2'@'localhost'").Scan(&grants); err != nil || grants != "GRANT SELECT ON *.* TO `app2`@`localhost`" {
		t.Fatalf("SHOW GRANTS of the renamed account: %q (%v)", grants, err)
	}
	if err := open("other2", "pw3", "").Ping(); err != nil {
		t.Fatalf("login of the renamed account: %v", err)
	}
	for q, want := range map[string]string{
		"RENAME USER nobody TO x":        "1396 HY000 Operation RENAME USER failed for 'nobody'@'%'",
		"RENAME USER other2 TO 'r1'@'%'": "1396 HY000 Operation RENAME USER failed for 'other2'@'%'",
	} {
		if _, err := root.Exec(q); mysqlErr(err) != want {
			t.Errorf("%s: %v, want %s", q, err, want)
		}
	}
}
