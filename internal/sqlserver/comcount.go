package sqlserver

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
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
	w := words{s: q}
	switch first := strings.ToLower(w.next()); first {
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
	w := words{s: q}
	first := w.next()
	if name, ok := lookupWord(firstWordCounters, first); ok {
		return name
	}
	switch {
	case isKeyword(first, "START"):
		switch next := w.next(); {
		case isKeyword(next, "TRANSACTION"):
			return "Com_begin"
		case isKeyword(next, "SLAVE"):
			return "Com_slave_start"
		case isKeyword(next, "REPLICA"):
			return "Com_replica_start"
		}
	case isKeyword(first, "ROLLBACK"):
		next := w.next()
		if isKeyword(next, "WORK") {
			next = w.next()
		}
		if isKeyword(next, "TO") {
			return "Com_rollback_to_savepoint"
		}
		return "Com_rollback"
	case isKeyword(first, "SET"):
		switch next := w.next(); {
		case isKeyword(next, "ROLE"):
			return "Com_set_role"
		case isKeyword(next, "PASSWORD"):
			return "" // Com_set_password: not a counter here
		}
		return "Com_set_option"
	case isKeyword(first, "SHOW"):
		return showCounter(&w)
	case isKeyword(first, "CREATE"):
		return objectCounter(&w, "Com_create_")
	case isKeyword(first, "DROP"):
		return objectCounter(&w, "Com_drop_")
	case isKeyword(first, "ALTER"):
		switch next := w.next(); {
		case isKeyword(next, "TABLE"), isKeyword(next, "ONLINE"), isKeyword(next, "IGNORE"):
			return "Com_alter_table"
		case isKeyword(next, "DATABASE"), isKeyword(next, "SCHEMA"):
			return "Com_alter_db"
		case isKeyword(next, "USER"):
			return "Com_alter_user"
		case isKeyword(next, "EVENT"):
			return "Com_alter_event"
		case isKeyword(next, "PROCEDURE"):
			return "Com_alter_procedure"
		case isKeyword(next, "FUNCTION"):
			return "Com_alter_function"
		case isKeyword(next, "VIEW"), isKeyword(next, "ALGORITHM"), isKeyword(next, "DEFINER"), isKeyword(next, "SQL"):
			return "Com_create_view" // MySQL counts ALTER VIEW as a CREATE VIEW
		}
	case isKeyword(first, "RENAME"):
		switch next := w.next(); {
		case isKeyword(next, "TABLE"):
			return "Com_rename_table"
		case isKeyword(next, "USER"):
			return "Com_rename_user"
		}
	case isKeyword(first, "STOP"):
		switch next := w.next(); {
		case isKeyword(next, "SLAVE"):
			return "Com_slave_stop"
		case isKeyword(next, "REPLICA"):
			return "Com_replica_stop"
		}
	case isKeyword(first, "CHANGE"):
		switch next := w.next(); {
		case isKeyword(next, "MASTER"):
			return "Com_change_master"
		case isKeyword(next, "REPLICATION"):
			if isKeyword(w.next(), "FILTER") {
				return "Com_change_repl_filter"
			}
			return "Com_change_replication_source"
		}
	case isKeyword(first, "XA"):
		switch next := w.next(); {
		case isKeyword(next, "START"), isKeyword(next, "BEGIN"):
			return "Com_xa_start"
		case isKeyword(next, "END"):
			return "Com_xa_end"
		case isKeyword(next, "PREPARE"):
			return "Com_xa_prepare"
		case isKeyword(next, "COMMIT"):
			return "Com_xa_commit"
		case isKeyword(next, "ROLLBACK"):
			return "Com_xa_rollback"
		case isKeyword(next, "RECOVER"):
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
func objectCounter(w *words, prefix string) string {
	for {
		next := w.next()
		switch {
		case isKeyword(next, "OR"), isKeyword(next, "REPLACE"), isKeyword(next, "TEMPORARY"), isKeyword(next, "UNIQUE"),
			isKeyword(next, "FULLTEXT"), isKeyword(next, "SPATIAL"), isKeyword(next, "AGGREGATE"), isKeyword(next, "ONLINE"):
			continue
		case isKeyword(next, "DEFINER"), isKeyword(next, "ALGORITHM"):
			w.skipAssignment()
			continue
		case isKeyword(next, "SQL"):
			w.next() // SECURITY
			w.next() // DEFINER or INVOKER
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
func showCounter(w *words) string {
	next := w.next()
	for isKeyword(next, "FULL") || isKeyword(next, "GLOBAL") || isKeyword(next, "SESSION") || isKeyword(next, "LOCAL") || isKeyword(next, "EXTENDED") {
		next = w.next()
	}
	if name, ok := lookupWord(showCounters, next); ok {
		return name
	}
	switch {
	case isKeyword(next, "ENGINE"):
		w.next() // the engine's name
		switch what := w.next(); {
		case isKeyword(what, "MUTEX"):
			return "Com_show_engine_mutex"
		case isKeyword(what, "LOGS"):
			return "Com_show_engine_logs"
		}
		return "Com_show_engine_status"
	case isKeyword(next, "PROCEDURE"), isKeyword(next, "FUNCTION"):
		kind := "procedure"
		if isKeyword(next, "FUNCTION") {
			kind = "function"
		}
		if isKeyword(w.next(), "CODE") {
			return "Com_show_" + kind + "_code"
		}
		return "Com_show_" + kind + "_status"
	case isKeyword(next, "MASTER"), isKeyword(next, "BINARY"):
		if what := w.next(); isKeyword(what, "LOGS") {
			return "Com_show_binlogs"
		}
		return "Com_show_master_status"
	case isKeyword(next, "SLAVE"):
		if isKeyword(w.next(), "HOSTS") {
			return "Com_show_slave_hosts"
		}
		return "Com_show_slave_status"
	case isKeyword(next, "CREATE"):
		switch what := w.next(); {
		case isKeyword(what, "TABLE"), isKeyword(what, "VIEW"):
			return "Com_show_create_table"
		case isKeyword(what, "DATABASE"), isKeyword(what, "SCHEMA"):
			return "Com_show_create_db"
		case isKeyword(what, "PROCEDURE"):
			return "Com_show_create_proc"
		case isKeyword(what, "FUNCTION"):
			return "Com_show_create_func"
		case isKeyword(what, "TRIGGER"):
			return "Com_show_create_trigger"
		case isKeyword(what, "EVENT"):
			return "Com_show_create_event"
		case isKeyword(what, "USER"):
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

// isKeyword reports whether word is kw, ignoring case (kw is upper case).
func isKeyword(word, kw string) bool { return len(word) == len(kw) && strings.EqualFold(word, kw) }

// words reads the leading words of a statement's text (isWordByte), past
// white space and comments.
type words struct{ s string }

// next returns the next word, or "" when something else comes first (a
// quote, an operator, the end).
func (w *words) next() string {
	w.skipSpace()
	i := 0
	for i < len(w.s) && isWordByte(w.s[i]) {
		i++
	}
	word := w.s[:i]
	w.s = w.s[i:]
	return word
}

// skipAssignment skips "= value" (DEFINER = 'u'@'h', ALGORITHM = MERGE):
// the '=' and the text up to the next white space.
func (w *words) skipAssignment() {
	w.skipSpace()
	if len(w.s) > 0 && w.s[0] == '=' {
		w.s = w.s[1:]
	}
	w.skipSpace()
	i := 0
	for i < len(w.s) && !isSpace(w.s[i]) {
		i++
	}
	w.s = w.s[i:]
}

// skipSpace skips white space, /* … */ comments (not /*! … */, whose text
// MySQL runs), -- and # comments, and an opening parenthesis.
func (w *words) skipSpace() {
	for len(w.s) > 0 {
		switch c := w.s[0]; {
		case isSpace(c), c == '(':
			w.s = w.s[1:]
		case strings.HasPrefix(w.s, "/*!"):
			w.s = w.s[3:]
			for len(w.s) > 0 && w.s[0] >= '0' && w.s[0] <= '9' {
				w.s = w.s[1:] // the version
			}
		case strings.HasPrefix(w.s, "/*"):
			end := strings.Index(w.s[2:], "*/")
			if end < 0 {
				w.s = ""
				return
			}
			w.s = w.s[2+end+2:]
		case c == '#', strings.HasPrefix(w.s, "-- "):
			end := strings.IndexByte(w.s, '\n')
			if end < 0 {
				w.s = ""
				return
			}
			w.s = w.s[end+1:]
		default:
			return
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
