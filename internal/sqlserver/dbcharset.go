package sqlserver

import (
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// CREATE DATABASE … CHARACTER SET / COLLATE: go-mysql-server v0.20 warns
// 1235 ("Setting CHARACTER SET, COLLATION and ENCRYPTION are not supported
// yet") whenever the clause is there, though the database keeps the
// collation (SHOW CREATE DATABASE shows it, its tables take it). MySQL has
// no warning, and every dump and ORM writes the clause. The warning stays,
// in MySQL's words and naming it, for a character set go-mysql-server
// cannot encode (big5, gb18030, …: the name is accepted, text in it is not
// stored as such).

// dbCharsetWarnings holds, per session, what becomes of the 1235 warning
// of the CREATE DATABASE being planned: "" drops it, else the character
// set the warning names. An entry is taken by the warning.
var dbCharsetWarnings sync.Map // the session's connection id (uint32) → string

// gmsCharsetWarning is go-mysql-server's text of the warning.
const gmsCharsetWarning = "Setting CHARACTER SET, COLLATION and ENCRYPTION are not supported yet"

// noteDatabaseCharset records, for a CREATE DATABASE with a character set
// or collation, what its warning becomes.
func noteDatabaseCharset(s *Session, stmt ast.Statement) {
	dbCharsetWarnings.Delete(s.ID()) // an entry no warning took (the statement failed first)
	d, ok := stmt.(*ast.DBDDL)
	if !ok || !strings.EqualFold(d.Action, ast.CreateStr) {
		return
	}
	if len(d.CharsetCollate) == 0 {
		return
	}
	var charset, collation string
	for _, cc := range d.CharsetCollate {
		switch strings.ToLower(cc.Type) {
		case "character set", "charset":
			charset = cc.Value
		case "collate":
			collation = cc.Value
		}
	}
	id, err := sql.ParseCollation(charset, collation, false)
	if err != nil {
		return // the statement fails with MySQL's error
	}
	name := ""
	if id.CharacterSet().Encoder() == nil {
		name = id.CharacterSet().Name()
	}
	dbCharsetWarnings.Store(s.ID(), name)
}

// databaseCharsetWarning rewrites or drops (nil) the warning w of a
// session's CREATE DATABASE as noteDatabaseCharset decided.
func databaseCharsetWarning(s *Session, w *sql.Warning) *sql.Warning {
	if w.Code != mysql.ERNotSupportedYet || w.Message != gmsCharsetWarning {
		return w
	}
	v, ok := dbCharsetWarnings.LoadAndDelete(s.ID())
	if !ok {
		return w
	}
	if name := v.(string); name != "" {
		c := *w
		c.Message = "This version of MySQL doesn't yet support 'character set " + name + "'"
		return &c
	}
	return nil
}
