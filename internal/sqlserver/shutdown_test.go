package sqlserver

import (
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// SHUTDOWN needs the SHUTDOWN privilege; with it, the server stops.
func TestShutdownStatement(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root, "CREATE USER plain@'%'", "CREATE DATABASE sd", "CREATE TABLE sd.t (id INT PRIMARY KEY)", "INSERT INTO sd.t VALUES (1)")
	_, err := open("plain", "", "").Exec("SHUTDOWN")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1227 {
		t.Fatalf("SHUTDOWN without the privilege: %v, want 1227", err)
	}
	if err := root.Ping(); err != nil {
		t.Fatalf("server after a refused SHUTDOWN: %v", err)
	}
	if _, err := root.Exec("SHUTDOWN"); err != nil && !errors.Is(err, mysql.ErrInvalidConn) {
		t.Fatalf("SHUTDOWN: %v", err)
	}
	fresh := open("root", "", "")
	for i := 0; fresh.Ping() == nil; i++ {
		if i == 100 {
			t.Fatal("the server still takes connections 10 s after SHUTDOWN")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
