package sqlserver

import (
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestComCounterNamesStatementKinds(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"BEGIN", "Com_begin"},
		{"  begin work;", "Com_begin"},
		{"START TRANSACTION READ ONLY", "Com_begin"},
		{"COMMIT", "Com_commit"},
		{"/* app: checkout */ COMMIT WORK", "Com_commit"},
		{"-- note\nROLLBACK", "Com_rollback"},
		{"ROLLBACK WORK TO SAVEPOINT a", "Com_rollback_to_savepoint"},
		{"rollback to a", "Com_rollback_to_savepoint"},
		{"SAVEPOINT a", "Com_savepoint"},
		{"RELEASE SAVEPOINT a", "Com_release_savepoint"},
		{"SET autocommit = 0", "Com_set_option"},
		{"SET NAMES utf8mb4", "Com_set_option"},
		{"SET ROLE r", "Com_set_role"},
		{"SET PASSWORD = 'x'", ""},
		{"USE shop", "Com_change_db"},
		{"SHOW TABLES", "Com_show_tables"},
		{"SHOW FULL TABLES FROM d", "Com_show_tables"},
		{"SHOW GLOBAL STATUS", "Com_show_status"},
		{"show session variables like 'x'", "Com_show_variables"},
		{"SHOW FULL PROCESSLIST", "Com_show_processlist"},
		{"SHOW TABLE STATUS", "Com_show_table_status"},
		{"SHOW EXTENDED FULL COLUMNS FROM t", "Com_show_fields"},
		{"SHOW INDEXES FROM t", "Com_show_keys"},
		{"SHOW CREATE TABLE t", "Com_show_create_table"},
		{"SHOW CREATE DATABASE d", "Com_show_create_db"},
		{"SHOW CHARACTER SET", "Com_show_charsets"},
		{"SHOW STORAGE ENGINES", "Com_show_storage_engines"},
		{"SHOW ENGINE INNODB STATUS", "Com_show_engine_status"},
		{"SHOW PROCEDURE STATUS", "Com_show_procedure_status"},
		{"SHOW FUNCTION CODE f", "Com_show_function_code"},
		{"SHOW MASTER STATUS", "Com_show_master_status"},
		{"SHOW BINARY LOGS", "Com_show_binlogs"},
		{"SHOW SLAVE HOSTS", "Com_show_slave_hosts"},
		{"SHOW REPLICA STATUS", "Com_show_replica_status"},
		{"SHOW CLUSTER STATUS", ""},
		{"CREATE TABLE t (id INT)", "Com_create_table"},
		{"CREATE TEMPORARY TABLE t (id INT)", "Com_create_table"},
		{"create database if not exists d", "Com_create_db"},
		{"CREATE UNIQUE INDEX i ON t (a)", "Com_create_index"},
		{"CREATE OR REPLACE ALGORITHM = MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW v AS SELECT 1", "Com_create_view"},
		{"CREATE DEFINER = 'u'@'%' TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1", "Com_create_trigger"},
		{"CREATE PROCEDURE p() SELECT 1", "Com_create_procedure"},
		{"CREATE USER u", "Com_create_user"},
		{"DROP TEMPORARY TABLE IF EXISTS t", "Com_drop_table"},
		{"DROP SCHEMA d", "Com_drop_db"},
		{"DROP INDEX i ON t", "Com_drop_index"},
		{"ALTER TABLE t ADD COLUMN c INT", "Com_alter_table"},
		{"ALTER DATABASE d CHARACTER SET utf8mb4", "Com_alter_db"},
		{"ALTER VIEW v AS SELECT 2", "Com_create_view"},
		{"RENAME TABLE a TO b", "Com_rename_table"},
		{"TRUNCATE TABLE t", "Com_truncate"},
		{"GRANT SELECT ON d.* TO u", "Com_grant"},
		{"KILL QUERY 5", "Com_kill"},
		{"FLUSH PRIVILEGES", "Com_flush"},
		{"ANALYZE TABLE t", "Com_analyze"},
		{"LOCK TABLES t READ", "Com_lock_tables"},
		{"CALL p()", "Com_call_procedure"},
		{"PREPARE s FROM 'SELECT 1'", "Com_prepare_sql"},
		{"EXECUTE s", "Com_execute_sql"},
		{"DEALLOCATE PREPARE s", "Com_dealloc_sql"},
		{"XA START 'x'", "Com_xa_start"},
		{"CHANGE REPLICATION SOURCE TO SOURCE_HOST = 'h'", "Com_change_replication_source"},
		{"STOP REPLICA", "Com_replica_stop"},
		{"SELECT 1", ""},
		{"(SELECT 1)", ""},
		{"INSERT INTO t VALUES (1)", ""},
		{"UPDATE t SET a = 1", ""},
		{"DELETE FROM t", ""},
		{"REPLACE INTO t VALUES (1)", ""},
		{"WITH x AS (SELECT 1) SELECT * FROM x", ""},
		{"", ""},
		{"/* unterminated", ""},
		{"'BEGIN'", ""},
	} {
		if got := comCounter(c.q); got != c.want {
			t.Errorf("%q: %q, want %q", c.q, got, c.want)
		}
	}
}

// Statements of every kind count in their Com_ counter once each, whether
// sent as text or prepared and executed, compiled or planned, as in MySQL;
// COM_STMT_PREPARE and COM_STMT_EXECUTE count in Com_stmt_prepare and
// Com_stmt_execute.
func TestStatementKindsCounted(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE cc", "CREATE TABLE cc.t (id INT PRIMARY KEY, v INT)", "INSERT INTO cc.t VALUES (1, 1)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	names := []string{"Com_begin", "Com_commit", "Com_rollback", "Com_savepoint", "Com_rollback_to_savepoint",
		"Com_release_savepoint", "Com_set_option", "Com_change_db", "Com_show_tables", "Com_show_create_table",
		"Com_show_status", "Com_create_table", "Com_alter_table", "Com_create_index", "Com_drop_index",
		"Com_truncate", "Com_rename_table", "Com_drop_table", "Com_create_db", "Com_drop_db",
		"Com_stmt_prepare", "Com_stmt_execute", "Com_update", "Questions"}
	counters := func() map[string]int { return sessionStatus(t, c, names...) }
	text := []string{
		"BEGIN", "UPDATE cc.t SET v = v + 1 WHERE id = 1", "COMMIT",
		"START TRANSACTION", "ROLLBACK",
		"START TRANSACTION", "SAVEPOINT a", "ROLLBACK TO SAVEPOINT a", "RELEASE SAVEPOINT a", "/* end */ COMMIT",
		"SET @x = 1", "USE cc", "SHOW TABLES", "SHOW CREATE TABLE t",
		"CREATE TABLE t2 (id INT PRIMARY KEY)", "ALTER TABLE t2 ADD COLUMN v INT", "CREATE INDEX i ON t2 (v)",
		"DROP INDEX i ON t2", "TRUNCATE TABLE t2", "RENAME TABLE t2 TO t3", "DROP TABLE t3",
		"CREATE DATABASE cc2", "DROP DATABASE cc2",
	}
	want := map[string]int{
		"Com_begin": 3, "Com_commit": 2, "Com_rollback": 1, "Com_savepoint": 1, "Com_rollback_to_savepoint": 1,
		"Com_release_savepoint": 1, "Com_set_option": 1, "Com_change_db": 1, "Com_show_tables": 1,
		"Com_show_create_table": 1, "Com_create_table": 1, "Com_alter_table": 1, "Com_create_index": 1,
		"Com_drop_index": 1, "Com_truncate": 1, "Com_rename_table": 1, "Com_drop_table": 1,
		"Com_create_db": 1, "Com_drop_db": 1, "Com_update": 1,
		// The first status read counts once it has read.
		"Com_show_status": 1, "Questions": len(text) + 1,
	}
	// Prepared: SET @y = ? three times, and BEGIN, the UPDATE and COMMIT
	// twice each.
	prepared := []struct {
		q    string
		args []any
		runs int
	}{
		{"SET @y = ?", []any{1}, 3},
		{"BEGIN", nil, 2},
		{"UPDATE cc.t SET v = v + ? WHERE id = ?", []any{1, 1}, 2},
		{"COMMIT", nil, 2},
	}
	want["Com_stmt_prepare"] = len(prepared)
	want["Com_set_option"] += 3
	want["Com_begin"] += 2
	want["Com_update"] += 2
	want["Com_commit"] += 2
	want["Com_stmt_execute"] = 9
	want["Questions"] += 9

	commits := globalStatus(t, db, "Com_commit")
	for _, planner := range []bool{false, true} {
		t.Run(fmt.Sprintf("planner=%v", planner), func(t *testing.T) {
			s.points.off.Store(planner)
			defer s.points.off.Store(false)
			for _, q := range []string{"USE cc", "DROP TABLE IF EXISTS t3"} {
				if _, err := c.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			before := counters()
			for _, q := range text {
				if _, err := c.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, p := range prepared {
				st, err := c.PrepareContext(ctx, p.q)
				if err != nil {
					t.Fatalf("prepare %s: %v", p.q, err)
				}
				for range p.runs {
					if _, err := st.ExecContext(ctx, p.args...); err != nil {
						t.Fatalf("%s: %v", p.q, err)
					}
				}
				st.Close()
			}
			after := counters()
			var diffs []string
			for _, n := range names {
				if got := after[n] - before[n]; got != want[n] {
					diffs = append(diffs, fmt.Sprintf("%s +%d, want +%d", n, got, want[n]))
				}
			}
			sort.Strings(diffs)
			if len(diffs) > 0 {
				t.Errorf("counters:\n%s", strings.Join(diffs, "\n"))
			}
		})
	}
	// The server's counters count the same.
	if got := globalStatus(t, db, "Com_commit") - commits; got != 2*want["Com_commit"] {
		t.Errorf("global Com_commit +%d, want +%d", got, 2*want["Com_commit"])
	}
}

// sessionStatusQuery is the statement that reads the named status counters
// of the session.
func sessionStatusQuery(names ...string) string {
	return "SHOW SESSION STATUS WHERE Variable_name IN ('" + strings.Join(names, "', '") + "')"
}

// sessionStatus reads the named status counters of c's session.
func sessionStatus(t *testing.T, c *sql.Conn, names ...string) map[string]int {
	t.Helper()
	rows, err := c.QueryContext(t.Context(), sessionStatusQuery(names...))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var n string
		var v int
		if err := rows.Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		out[n] = v
	}
	return out
}
