package sqlserver

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
)

// Foreign keys are stored in the child table's definition; go-mysql-server
// enforces them through the editors and index lookups below.

var _ sql.ForeignKeyTable = (*Table)(nil)

func (t *Table) CreateIndexForForeignKey(ctx *sql.Context, idx sql.IndexDef) error {
	return t.CreateIndex(ctx, idx)
}

func (t *Table) GetDeclaredForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	_, st, err := t.current(ctx)
	if err != nil {
		return nil, err
	}
	ti, err := tabledef.Decode(st.Def())
	if err != nil {
		return nil, err
	}
	return ti.Meta.ForeignKeys, nil
}

// GetReferencedForeignKeys returns the foreign keys of this database's
// tables whose parent is this table.
func (t *Table) GetReferencedForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	cat := t.tx(ctx).Catalog()
	var out []sql.ForeignKeyConstraint
	for _, name := range cat.TableNames() {
		st, _ := cat.Table(name)
		ti, err := tabledef.Decode(st.Def())
		if err != nil {
			return nil, err
		}
		for _, fk := range ti.Meta.ForeignKeys {
			if strings.EqualFold(fk.ParentTable, t.Name()) && strings.EqualFold(fk.ParentDatabase, t.db.Name()) {
				out = append(out, fk)
			}
		}
	}
	return out, nil
}

func (t *Table) setForeignKeys(ctx *sql.Context, fks []sql.ForeignKeyConstraint) error {
	_, st, err := t.current(ctx)
	if err != nil {
		return err
	}
	ti, err := tabledef.Decode(st.Def())
	if err != nil {
		return err
	}
	def, err := ti.With(t.Name(), nil, nil, nil, &fks)
	if err != nil {
		return err
	}
	return t.redefine(ctx, def)
}

func (t *Table) AddForeignKey(ctx *sql.Context, fk sql.ForeignKeyConstraint) error {
	fks, err := t.GetDeclaredForeignKeys(ctx)
	if err != nil {
		return err
	}
	// Foreign key names are unique in a database, as in MySQL.
	cat := t.tx(ctx).Catalog()
	for _, name := range cat.TableNames() {
		st, _ := cat.Table(name)
		ti, err := tabledef.Decode(st.Def())
		if err != nil {
			return err
		}
		for _, k := range ti.Meta.ForeignKeys {
			if strings.EqualFold(k.Name, fk.Name) {
				return sql.ErrForeignKeyDuplicateName.New(fk.Name)
			}
		}
	}
	return t.setForeignKeys(ctx, append(append([]sql.ForeignKeyConstraint(nil), fks...), fk))
}

func (t *Table) DropForeignKey(ctx *sql.Context, name string) error {
	fks, err := t.GetDeclaredForeignKeys(ctx)
	if err != nil {
		return err
	}
	keep, found := withoutNamed(fks, name, func(k sql.ForeignKeyConstraint) string { return k.Name })
	if !found {
		return sql.ErrForeignKeyNotFound.New(name, t.Name())
	}
	return t.setForeignKeys(ctx, keep)
}

func (t *Table) UpdateForeignKey(ctx *sql.Context, name string, fk sql.ForeignKeyConstraint) error {
	fks, err := t.GetDeclaredForeignKeys(ctx)
	if err != nil {
		return err
	}
	out := append([]sql.ForeignKeyConstraint(nil), fks...)
	found := false
	for i, k := range out {
		if strings.EqualFold(k.Name, name) {
			out[i], found = fk, true
		}
	}
	if !found {
		return sql.ErrForeignKeyNotFound.New(name, t.Name())
	}
	return t.setForeignKeys(ctx, out)
}

// fkEditor is the editor go-mysql-server uses to check and cascade foreign
// keys: it writes like the table's editor and looks rows up by index.
type fkEditor struct {
	*editor
	t *Table
}

func (t *Table) GetForeignKeyEditor(ctx *sql.Context) sql.ForeignKeyEditor {
	return &fkEditor{editor: t.editor(ctx), t: t}
}

func (e *fkEditor) IndexedAccess(ctx *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	nt := *e.t
	nt.live = true
	return nt.IndexedAccess(ctx, lookup)
}

func (e *fkEditor) GetIndexes(ctx *sql.Context) ([]sql.Index, error) { return e.t.GetIndexes(ctx) }
func (e *fkEditor) PreciseMatch() bool                               { return e.t.PreciseMatch() }
