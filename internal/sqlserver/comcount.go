package sqlserver

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Statement counters. MySQL counts each statement it runs in the status
// counter of its kind (Com_begin, Com_commit, Com_create_table,
// Com_set_option, Com_show_tables, …), and each prepared-statement command
// in Com_stmt_prepare and Com_stmt_execute; monitoring reads them
// (transactions a second are Com_commit + Com_rollback). go-mysql-server
// declares them all but counts only Com_select, Com_insert, Com_update and
// Com_delete. The protocol handler counts the others here, from the first
// words of the statement's text, once per text statement and once per
// execution of a prepared one, whichever path runs it (planner or
// compiled).

// countCommand counts the statement that text q begins with in its Com_
// counter, for connection c's session and the server, and reports its
// time since start to the Observer.
func (h protocolHandler) countCommand(c *mysql.Conn, q string, start time.Time) {
	name := comCounter(q)
	if name != "" {
		h.count(c, name)
	}
	h.srv.observeStatement(q, name, start)
}

// statementKind is the kind a statement's timing is reported under: its
// Com_ counter, or for the statements go-mysql-server counts itself its
// first word (select, insert, update, delete, replace, with…); "" for
// none.
func statementKind(q, counter string) string {
	if counter != "" {
		return counter
	}
	w := sqltext.NewReader(q)
	switch first := strings.ToLower(w.Next()); first {
	case "select", "insert", "update", "delete", "replace", "with", "values", "table", "explain", "describe", "desc":
		return first
	}
	return ""
}

// count adds one to each status counter named (an empty name is none),
// for c's session and the server.
func (h protocolHandler) count(c *mysql.Conn, names ...string) {
	s := h.srv.session(c.ConnectionID)
	for _, name := range names {
		if name == "" {
			continue
		}
		sql.StatusVariables.IncrementGlobal(name, 1)
		if s != nil {
			s.IncrementStatusVariable(nil, name, 1)
		}
	}
}

// firstWordCounters are the counters a statement's first word names alone.
var firstWordCounters = map[string]string{
	"BEGIN":      "Com_begin",
	"COMMIT":     "Com_commit",
	"SAVEPOINT":  "Com_savepoint",
	"RELEASE":    "Com_release_savepoint",
	"USE":        "Com_change_db",
	"TRUNCATE":   "Com_truncate",
	"GRANT":      "Com_grant",
	"REVOKE":     "Com_revoke",
	"KILL":       "Com_kill",
	"FLUSH":      "Com_flush",
	"ANALYZE":    "Com_analyze",
	"OPTIMIZE":   "Com_optimize",
	"CHECK":      "Com_check",
	"CHECKSUM":   "Com_checksum",
	"REPAIR":     "Com_repair",
	"LOCK":       "Com_lock_tables",
	"UNLOCK":     "Com_unlock_tables",
	"CALL":       "Com_call_procedure",
	"DO":         "Com_do",
	"PREPARE":    "Com_prepare_sql",
	"EXECUTE":    "Com_execute_sql",
	"DEALLOCATE": "Com_dealloc_sql",
	"HELP":       "Com_help",
	"LOAD":       "Com_load",
	"PURGE":      "Com_purge",
	"RESET":      "Com_reset",
	"SHUTDOWN":   "Com_shutdown",
	"SIGNAL":     "Com_signal",
	"RESIGNAL":   "Com_resignal",
	"GET":        "Com_get_diagnostics",
	"INSTALL":    "Com_install_plugin",
	"UNINSTALL":  "Com_uninstall_plugin",
}

// comCounter returns the Com_ counter of the statement that text q begins
// with, as MySQL names its kind; "" for SELECT, INSERT, UPDATE, DELETE and
// REPLACE (counted where they run: go-mysql-server counts INSERT … SELECT
// and REPLACE in Com_insert, multi-table writes in Com_update and
// Com_delete) and for a statement it does not know.
func comCounter(q string) string {
	w := sqltext.NewReader(q)
	first := w.Next()
	if name, ok := lookupWord(firstWordCounters, first); ok {
		return name
	}
	switch {
	case sqltext.IsKeyword(first, "START"):
		switch next := w.Next(); {
		case sqltext.IsKeyword(next, "TRANSACTION"):
			return "Com_begin"
		case sqltext.IsKeyword(next, "SLAVE"):
			return "Com_slave_start"
		case sqltext.IsKeyword(next, "REPLICA"):
			return "Com_replica_start"
		}
	case sqltext.IsKeyword(first, "ROLLBACK"):
		next := w.Next()
		if sqltext.IsKeyword(next, "WORK") {
			next = w.Next()
		}
		if sqltext.IsKeyword(next, "TO") {
			return "Com_rollback_to_savepoint"
		}
		return "Com_rollback"
	case sqltext.IsKeyword(first, "SET"):
		switch next := w.Next(); {
		case sqltext.IsKeyword(next, "ROLE"):
			return "Com_set_role"
		case sqltext.IsKeyword(next, "PASSWORD"):
			return "" // Com_set_password: not a counter here
		}
		return "Com_set_option"
	case sqltext.IsKeyword(first, "SHOW"):
		return showCounter(&w)
	case sqltext.IsKeyword(first, "CREATE"):
		return objectCounter(&w, "Com_create_")
	case sqltext.IsKeyword(first, "DROP"):
		return objectCounter(&w, "Com_drop_")
	case sqltext.IsKeyword(first, "ALTER"):
		switch next := w.Next(); {
		case sqltext.IsKeyword(next, "TABLE"), sqltext.IsKeyword(next, "ONLINE"), sqltext.IsKeyword(next, "IGNORE"):
			return "Com_alter_table"
		case sqltext.IsKeyword(next, "DATABASE"), sqltext.IsKeyword(next, "SCHEMA"):
			return "Com_alter_db"
		case sqltext.IsKeyword(next, "USER"):
			return "Com_alter_user"
		case sqltext.IsKeyword(next, "EVENT"):
			return "Com_alter_event"
		case sqltext.IsKeyword(next, "PROCEDURE"):
			return "Com_alter_procedure"
		case sqltext.IsKeyword(next, "FUNCTION"):
			return "Com_alter_function"
		case sqltext.IsKeyword(next, "VIEW"), sqltext.IsKeyword(next, "ALGORITHM"), sqltext.IsKeyword(next, "DEFINER"), sqltext.IsKeyword(next, "SQL"):
			return "Com_create_view" // MySQL counts ALTER VIEW as a CREATE VIEW
		}
	case sqltext.IsKeyword(first, "RENAME"):
		switch next := w.Next(); {
		case sqltext.IsKeyword(next, "TABLE"):
			return "Com_rename_table"
		case sqltext.IsKeyword(next, "USER"):
			return "Com_rename_user"
		}
	case sqltext.IsKeyword(first, "STOP"):
		switch next := w.Next(); {
		case sqltext.IsKeyword(next, "SLAVE"):
			return "Com_slave_stop"
		case sqltext.IsKeyword(next, "REPLICA"):
			return "Com_replica_stop"
		}
	case sqltext.IsKeyword(first, "CHANGE"):
		switch next := w.Next(); {
		case sqltext.IsKeyword(next, "MASTER"):
			return "Com_change_master"
		case sqltext.IsKeyword(next, "REPLICATION"):
			if sqltext.IsKeyword(w.Next(), "FILTER") {
				return "Com_change_repl_filter"
			}
			return "Com_change_replication_source"
		}
	case sqltext.IsKeyword(first, "XA"):
		switch next := w.Next(); {
		case sqltext.IsKeyword(next, "START"), sqltext.IsKeyword(next, "BEGIN"):
			return "Com_xa_start"
		case sqltext.IsKeyword(next, "END"):
			return "Com_xa_end"
		case sqltext.IsKeyword(next, "PREPARE"):
			return "Com_xa_prepare"
		case sqltext.IsKeyword(next, "COMMIT"):
			return "Com_xa_commit"
		case sqltext.IsKeyword(next, "ROLLBACK"):
			return "Com_xa_rollback"
		case sqltext.IsKeyword(next, "RECOVER"):
			return "Com_xa_recover"
		}
	}
	return ""
}

// objectKinds name the Com_create_ and Com_drop_ counters by the kind of
// object.
var objectKinds = map[string]string{
	"TABLE": "table", "TABLES": "table", "DATABASE": "db", "SCHEMA": "db", "INDEX": "index", "VIEW": "view",
	"TRIGGER": "trigger", "PROCEDURE": "procedure", "FUNCTION": "function", "EVENT": "event", "USER": "user",
	"ROLE": "role", "SERVER": "server",
}

// objectCounter returns the counter of a CREATE or DROP (prefix
// Com_create_ or Com_drop_) by the kind of object, past the modifiers
// before it.
func objectCounter(w *sqltext.Reader, prefix string) string {
	for {
		next := w.Next()
		switch {
		case sqltext.IsKeyword(next, "OR"), sqltext.IsKeyword(next, "REPLACE"), sqltext.IsKeyword(next, "TEMPORARY"), sqltext.IsKeyword(next, "UNIQUE"),
			sqltext.IsKeyword(next, "FULLTEXT"), sqltext.IsKeyword(next, "SPATIAL"), sqltext.IsKeyword(next, "AGGREGATE"), sqltext.IsKeyword(next, "ONLINE"):
			continue
		case sqltext.IsKeyword(next, "DEFINER"), sqltext.IsKeyword(next, "ALGORITHM"):
			w.SkipAssignment()
			continue
		case sqltext.IsKeyword(next, "SQL"):
			w.Next() // SECURITY
			w.Next() // DEFINER or INVOKER
			continue
		}
		if kind, ok := lookupWord(objectKinds, next); ok {
			return prefix + kind
		}
		return ""
	}
}

// showCounters are the counters of SHOW statements that their second word
// names alone.
var showCounters = map[string]string{
	"TABLES":      "Com_show_tables",
	"DATABASES":   "Com_show_databases",
	"SCHEMAS":     "Com_show_databases",
	"STATUS":      "Com_show_status",
	"VARIABLES":   "Com_show_variables",
	"PROCESSLIST": "Com_show_processlist",
	"WARNINGS":    "Com_show_warnings",
	"ERRORS":      "Com_show_errors",
	"GRANTS":      "Com_show_grants",
	"COLUMNS":     "Com_show_fields",
	"FIELDS":      "Com_show_fields",
	"INDEX":       "Com_show_keys",
	"INDEXES":     "Com_show_keys",
	"KEYS":        "Com_show_keys",
	"TABLE":       "Com_show_table_status",
	"TRIGGERS":    "Com_show_triggers",
	"EVENTS":      "Com_show_events",
	"CHARACTER":   "Com_show_charsets",
	"CHARSET":     "Com_show_charsets",
	"COLLATION":   "Com_show_collations",
	"ENGINES":     "Com_show_storage_engines",
	"STORAGE":     "Com_show_storage_engines",
	"PLUGINS":     "Com_show_plugins",
	"PRIVILEGES":  "Com_show_privileges",
	"OPEN":        "Com_show_open_tables",
	"PROFILES":    "Com_show_profiles",
	"PROFILE":     "Com_show_profile",
	"REPLICAS":    "Com_show_replicas",
	"BINLOG":      "Com_show_binlog_events",
	"RELAYLOG":    "Com_show_relaylog_events",
	"REPLICA":     "Com_show_replica_status",
}

// showCounter returns the counter of a SHOW statement.
func showCounter(w *sqltext.Reader) string {
	next := w.Next()
	for sqltext.IsKeyword(next, "FULL") || sqltext.IsKeyword(next, "GLOBAL") || sqltext.IsKeyword(next, "SESSION") || sqltext.IsKeyword(next, "LOCAL") || sqltext.IsKeyword(next, "EXTENDED") {
		next = w.Next()
	}
	if name, ok := lookupWord(showCounters, next); ok {
		return name
	}
	switch {
	case sqltext.IsKeyword(next, "ENGINE"):
		w.Next() // the engine's name
		switch what := w.Next(); {
		case sqltext.IsKeyword(what, "MUTEX"):
			return "Com_show_engine_mutex"
		case sqltext.IsKeyword(what, "LOGS"):
			return "Com_show_engine_logs"
		}
		return "Com_show_engine_status"
	case sqltext.IsKeyword(next, "PROCEDURE"), sqltext.IsKeyword(next, "FUNCTION"):
		kind := "procedure"
		if sqltext.IsKeyword(next, "FUNCTION") {
			kind = "function"
		}
		if sqltext.IsKeyword(w.Next(), "CODE") {
			return "Com_show_" + kind + "_code"
		}
		return "Com_show_" + kind + "_status"
	case sqltext.IsKeyword(next, "MASTER"), sqltext.IsKeyword(next, "BINARY"):
		if what := w.Next(); sqltext.IsKeyword(what, "LOGS") {
			return "Com_show_binlogs"
		}
		return "Com_show_master_status"
	case sqltext.IsKeyword(next, "SLAVE"):
		if sqltext.IsKeyword(w.Next(), "HOSTS") {
			return "Com_show_slave_hosts"
		}
		return "Com_show_slave_status"
	case sqltext.IsKeyword(next, "CREATE"):
		switch what := w.Next(); {
		case sqltext.IsKeyword(what, "TABLE"), sqltext.IsKeyword(what, "VIEW"):
			return "Com_show_create_table"
		case sqltext.IsKeyword(what, "DATABASE"), sqltext.IsKeyword(what, "SCHEMA"):
			return "Com_show_create_db"
		case sqltext.IsKeyword(what, "PROCEDURE"):
			return "Com_show_create_proc"
		case sqltext.IsKeyword(what, "FUNCTION"):
			return "Com_show_create_func"
		case sqltext.IsKeyword(what, "TRIGGER"):
			return "Com_show_create_trigger"
		case sqltext.IsKeyword(what, "EVENT"):
			return "Com_show_create_event"
		case sqltext.IsKeyword(what, "USER"):
			return "Com_show_create_user"
		}
	}
	return ""
}

// lookupWord looks word up, in upper case, in table (keyed by upper-case
// words), without allocating.
func lookupWord(table map[string]string, word string) (string, bool) {
	var b [16]byte
	if len(word) == 0 || len(word) > len(b) {
		return "", false
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	v, ok := table[string(b[:len(word)])]
	return v, ok
}
