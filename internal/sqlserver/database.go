package sqlserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// Provider is the go-mysql-server view of the storage engine's databases.
type Provider struct {
	engine *storage.Engine
	// runner and srv run the bodies of stored functions (storedfunc.go);
	// nil in a provider without a server (no stored functions).
	runner sql.StatementRunner
	srv    *Server
	// collation of a database created without one; 0: defaultCollation.
	collation sql.CollationID
}

var _ sql.MutableDatabaseProvider = (*Provider)(nil)
var _ sql.CollatedDatabaseProvider = (*Provider)(nil)

// dbOptions is what a database's first journal transaction records.
type dbOptions struct {
	Name      string `json:"name"`
	Collation string `json:"collation,omitempty"`
}

func (p *Provider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	db, ok := p.engine.Database(name)
	if !ok {
		return nil, sql.ErrDatabaseNotFound.New(name)
	}
	return &Database{db: db}, nil
}

func (p *Provider) HasDatabase(ctx *sql.Context, name string) bool {
	_, ok := p.engine.Database(name)
	return ok
}

func (p *Provider) AllDatabases(ctx *sql.Context) []sql.Database {
	var out []sql.Database
	for _, db := range p.engine.Databases() {
		out = append(out, &Database{db: db})
	}
	return out
}

func (p *Provider) CreateDatabase(ctx *sql.Context, name string) error {
	return p.CreateCollatedDatabase(ctx, name, sql.Collation_Default)
}

// defaultCollation is MySQL 8's: utf8mb4 with case- and accent-insensitive
// comparisons. go-mysql-server's own default (utf8mb4_0900_bin) reaches
// CreateCollatedDatabase when no collation is named, and is replaced by it.
const defaultCollation = sql.Collation_utf8mb4_0900_ai_ci

func (p *Provider) CreateCollatedDatabase(ctx *sql.Context, name string, collation sql.CollationID) error {
	if p.engine.ReadOnly() {
		return errReadOnly()
	}
	if collation == sql.Collation_Default || collation == sql.Collation_Unspecified {
		collation = defaultCollation
		if p.collation != 0 {
			collation = p.collation
		}
	}
	opts, _ := json.Marshal(dbOptions{Name: name, Collation: collation.Name()})
	_, err := p.engine.CreateDatabase(name, opts)
	if errors.Is(err, storage.ErrDatabaseExists) {
		return sql.ErrDatabaseExists.New(name)
	}
	return p.srv.binlogDatabaseStatement(ctx, name, err) // binlog_hook.go
}

func (p *Provider) DropDatabase(ctx *sql.Context, name string) error {
	if p.engine.ReadOnly() {
		return errReadOnly()
	}
	err := p.engine.DropDatabase(name)
	if errors.Is(err, storage.ErrNoDatabase) {
		return sql.ErrDatabaseNotFound.New(name)
	}
	return p.srv.binlogDatabaseStatement(ctx, name, err) // binlog_hook.go
}

// Database is one database as go-mysql-server sees it. Everything it returns
// comes from the session's transaction on it.
type Database struct {
	db *storage.DB
}

var (
	_ sql.Database                = (*Database)(nil)
	_ sql.TableCreator            = (*Database)(nil)
	_ sql.TableDropper            = (*Database)(nil)
	_ sql.TableRenamer            = (*Database)(nil)
	_ sql.ViewDatabase            = (*Database)(nil)
	_ sql.TriggerDatabase         = (*Database)(nil)
	_ sql.StoredProcedureDatabase = (*Database)(nil)
	_ sql.CollatedDatabase        = (*Database)(nil)
	_ sql.TemporaryTableCreator   = (*Database)(nil)
	_ sql.TemporaryTableDatabase  = (*Database)(nil)
)

func (d *Database) Name() string { return d.db.Name() }

func (d *Database) tx(ctx *sql.Context) *storage.Tx { return sessionOf(ctx).storageTx(d.db) }

// defs returns the catalog in which the statement resolves the names of
// this database: the transaction's. A statement being prepared reads no
// rows, so in a transaction that has not yet taken its snapshot (writes by
// key alone, storage.DB.BeginDeferred) it reads the definitions the
// transaction's writes use, without taking it: a client that prepares
// each statement it runs (go-sql-driver does) gets the snapshot at its
// first read, as one that prepared them before.
func (d *Database) defs(ctx *sql.Context) *storage.Catalog {
	s := sessionOf(ctx)
	if !s.preparing {
		return d.tx(ctx).Catalog()
	}
	tx := s.pointTx(d.db)
	if tx.Pinned() {
		return tx.Catalog()
	}
	return tx.Meta()
}

// tempTx returns the session's transaction on its temporary tables of this
// database, or nil when it has none.
func (d *Database) tempTx(ctx *sql.Context) *storage.Tx {
	s := sessionOf(ctx)
	if t := s.tempDB(d.Name(), false); t != nil {
		return s.storageTx(t)
	}
	return nil
}

func (d *Database) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	if ttx := d.tempTx(ctx); ttx != nil {
		if t, ok := ttx.Table(name); ok {
			// A temporary table hides a table of the same name.
			ti, err := tabledef.Decode(t.Def())
			if err != nil {
				return nil, false, err
			}
			return &Table{db: d, info: ti, temp: true}, true, nil
		}
	}
	t, ok := d.defs(ctx).Table(name)
	if !ok {
		return nil, false, nil
	}
	ti, err := tabledef.Decode(t.Def())
	if err != nil {
		return nil, false, err
	}
	return &Table{db: d, info: ti}, true, nil
}

func (d *Database) GetTableNames(ctx *sql.Context) ([]string, error) {
	return d.defs(ctx).TableNames(), nil
}

func (d *Database) IsReadOnly() bool { return false }

func (d *Database) CreateTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, collation sql.CollationID, comment string) error {
	return d.createTable(ctx, name, sch, collation, comment)
}

func (d *Database) createTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, collation sql.CollationID, comment string) error {
	tx := d.tx(ctx)
	if _, exists := tx.Table(name); exists {
		return sql.ErrTableAlreadyExists.New(name)
	}
	def, err := tabledef.Build(name, sch, collation, comment, nil, nil, nil)
	if err != nil {
		return err
	}
	return mysqlerr.From(tx.CreateTable(def))
}

// CreateIndexedTable creates a table whose primary key is given as an index
// definition (go-mysql-server's form for some CREATE TABLE statements).
func (d *Database) CreateIndexedTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, idx sql.IndexDef, collation sql.CollationID) error {
	return d.createTable(ctx, name, sch, collation, "")
}

// CreateTemporaryTable creates a table seen by this session only, kept in
// memory and dropped when the session ends.
func (d *Database) CreateTemporaryTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, collation sql.CollationID) error {
	s := sessionOf(ctx)
	tx := s.storageTx(s.tempDB(d.Name(), true))
	if _, exists := tx.Table(name); exists {
		return sql.ErrTableAlreadyExists.New(name)
	}
	def, err := tabledef.Build(name, sch, collation, "", nil, nil, nil)
	if err != nil {
		return err
	}
	return mysqlerr.From(tx.CreateTable(def))
}

func (d *Database) GetAllTemporaryTables(ctx *sql.Context) ([]sql.Table, error) {
	var out []sql.Table
	if ttx := d.tempTx(ctx); ttx != nil {
		for _, n := range ttx.Catalog().TableNames() {
			t, _ := ttx.Table(n)
			ti, err := tabledef.Decode(t.Def())
			if err != nil {
				return nil, err
			}
			out = append(out, &Table{db: d, info: ti, temp: true})
		}
	}
	return out, nil
}

func (d *Database) DropTable(ctx *sql.Context, name string) error {
	if ttx := d.tempTx(ctx); ttx != nil {
		if _, ok := ttx.Table(name); ok {
			return mysqlerr.From(ttx.DropTable(name))
		}
	}
	tx := d.tx(ctx)
	if _, ok := tx.Table(name); !ok {
		return sql.ErrTableNotFound.New(name)
	}
	return mysqlerr.From(tx.DropTable(name))
}

func (d *Database) RenameTable(ctx *sql.Context, from, to string) error {
	if clusterOf(ctx) != nil {
		// §17.7: no table renaming in a multi-node cluster.
		return errRenameInCluster()
	}
	tx := d.tx(ctx)
	if _, ok := tx.Table(from); !ok {
		return sql.ErrTableNotFound.New(from)
	}
	// Table names are compared without letter case here: a new name that
	// differs only in case renames the table; the same name is the
	// existing table, as in MySQL (1050).
	if _, ok := tx.Table(to); ok && (from == to || !strings.EqualFold(from, to)) {
		return sql.ErrTableAlreadyExists.New(to)
	}
	if err := tx.RenameTable(from, to); err != nil {
		return mysqlerr.From(err)
	}
	return d.renameTriggers(ctx, from, to)
}

func (d *Database) GetCollation(ctx *sql.Context) sql.CollationID {
	var o dbOptions
	if json.Unmarshal(d.defs(ctx).Options(), &o) == nil && o.Collation != "" {
		if c, err := sql.ParseCollation("", o.Collation, false); err == nil {
			return c
		}
	}
	return defaultCollation
}

func (d *Database) SetCollation(ctx *sql.Context, collation sql.CollationID) error {
	if collation == sql.Collation_Default || collation == sql.Collation_Unspecified {
		collation = defaultCollation
	}
	opts, _ := json.Marshal(dbOptions{Name: d.Name(), Collation: collation.Name()})
	return d.tx(ctx).SetOptions(opts)
}

// Catalog objects: views, triggers and stored procedures are stored as the
// SQL text go-mysql-server gives, in the journal like rows.
const (
	objView      = "view"
	objTrigger   = "trigger"
	objProcedure = "procedure"
)

type viewData struct {
	Select string `json:"select"`
	Create string `json:"create"`
	// Check is the view's CHECK OPTION: "CASCADED", "LOCAL" or ""
	// (viewdml.go).
	Check string `json:"check,omitempty"`
}

func (d *Database) CreateView(ctx *sql.Context, name string, selectStatement, createViewStmt string) error {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objView, name); ok {
		return sql.ErrExistingView.New(d.Name(), name)
	}
	// go-mysql-server cut WITH … CHECK OPTION in two: the view's text
	// kept "WITH". The option is read from the statement and kept apart
	// (the planner reads Create again, and would cut it again; SHOW
	// CREATE VIEW and information_schema.VIEWS give it: viewdml.go).
	vd := viewData{Select: viewTailRE.ReplaceAllString(selectStatement, ""), Create: viewTailRE.ReplaceAllString(createViewStmt, "")}
	vd.Check = viewCheckOption(ctx.Query())
	b, _ := json.Marshal(vd)
	return tx.PutObject(objView, name, b)
}

func (d *Database) DropView(ctx *sql.Context, name string) error {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objView, name); !ok {
		return sql.ErrViewDoesNotExist.New(d.Name(), name)
	}
	return tx.DeleteObject(objView, name)
}

func (d *Database) GetViewDefinition(ctx *sql.Context, name string) (sql.ViewDefinition, bool, error) {
	o, ok := d.defs(ctx).Object(objView, name)
	if !ok {
		return sql.ViewDefinition{}, false, nil
	}
	if s := sessionOf(ctx); s.BaseSession.GetCurrentDatabase() == "" {
		s.viewDB = d.Name()
	}
	return viewDef(o), true, nil
}

func viewDef(o *storage.Object) sql.ViewDefinition {
	var v viewData
	_ = json.Unmarshal(o.Data, &v)
	return sql.ViewDefinition{Name: o.Name, TextDefinition: v.Select, CreateViewStatement: v.Create}
}

func (d *Database) AllViews(ctx *sql.Context) ([]sql.ViewDefinition, error) {
	var out []sql.ViewDefinition
	for _, o := range d.defs(ctx).Objects(objView) {
		out = append(out, viewDef(o))
	}
	return out, nil
}

func (d *Database) GetTriggers(ctx *sql.Context) ([]sql.TriggerDefinition, error) {
	var out []sql.TriggerDefinition
	for _, o := range d.defs(ctx).Objects(objTrigger) {
		var t sql.TriggerDefinition
		if err := json.Unmarshal(o.Data, &t); err != nil {
			return nil, err
		}
		if table, ok := d.triggerTable(t); ok {
			if _, exists := d.tx(ctx).Table(table); !exists {
				continue // left behind by a rename in an older version
			}
		}
		out = append(out, t)
	}
	// Triggers fire in creation order.
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

func (d *Database) CreateTrigger(ctx *sql.Context, def sql.TriggerDefinition) error {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objTrigger, def.Name); ok {
		return fmt.Errorf("trigger %q already exists", def.Name)
	}
	if def.CreatedAt.IsZero() {
		def.CreatedAt = time.Now()
	}
	b, err := json.Marshal(def)
	if err != nil {
		return err
	}
	return tx.PutObject(objTrigger, def.Name, b)
}

func (d *Database) DropTrigger(ctx *sql.Context, name string) error {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objTrigger, name); !ok {
		noteMissingTrigger(ctx)
		return sql.ErrTriggerDoesNotExist.New(name)
	}
	return tx.DeleteObject(objTrigger, name)
}

func (d *Database) GetStoredProcedure(ctx *sql.Context, name string) (sql.StoredProcedureDetails, bool, error) {
	o, ok := d.defs(ctx).Object(objProcedure, name)
	if !ok {
		return sql.StoredProcedureDetails{}, false, nil
	}
	var p sql.StoredProcedureDetails
	if err := json.Unmarshal(o.Data, &p); err != nil {
		return p, false, err
	}
	return p, true, nil
}

func (d *Database) GetStoredProcedures(ctx *sql.Context) ([]sql.StoredProcedureDetails, error) {
	var out []sql.StoredProcedureDetails
	for _, o := range d.defs(ctx).Objects(objProcedure) {
		var p sql.StoredProcedureDetails
		if err := json.Unmarshal(o.Data, &p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (d *Database) SaveStoredProcedure(ctx *sql.Context, spd sql.StoredProcedureDetails) error {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objProcedure, spd.Name); ok {
		return sql.ErrStoredProcedureAlreadyExists.New(spd.Name)
	}
	b, err := json.Marshal(spd)
	if err != nil {
		return err
	}
	return tx.PutObject(objProcedure, spd.Name, b)
}

func (d *Database) DropStoredProcedure(ctx *sql.Context, name string) error {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objProcedure, name); !ok {
		noteMissingProcedure(ctx, d.Name(), name)
		return sql.ErrStoredProcedureDoesNotExist.New(name)
	}
	return tx.DeleteObject(objProcedure, name)
}
