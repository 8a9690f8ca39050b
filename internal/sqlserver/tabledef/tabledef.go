package tabledef

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/storage"
)

// tableMeta is the SQL layer's description of a table, stored as
// storage.TableDef.Meta (JSON): it travels in the journal with every DDL.
type tableMeta struct {
	Columns     []metaColumn               `json:"columns"`
	Collation   string                     `json:"collation,omitempty"`
	Comment     string                     `json:"comment,omitempty"`
	Indexes     []IndexDef                 `json:"indexes,omitempty"`
	Checks      []sql.CheckDefinition      `json:"checks,omitempty"`
	ForeignKeys []sql.ForeignKeyConstraint `json:"foreign_keys,omitempty"`
	_           struct{}                   `json:"-"`
}

type metaColumn struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	Nullable      bool   `json:"nullable,omitempty"`
	PrimaryKey    bool   `json:"pk,omitempty"`
	AutoIncrement bool   `json:"auto_increment,omitempty"`
	Default       string `json:"default,omitempty"`
	OnUpdate      string `json:"on_update,omitempty"`
	Generated     string `json:"generated,omitempty"`
	Virtual       bool   `json:"virtual,omitempty"`
	Comment       string `json:"comment,omitempty"`
	Extra         string `json:"extra,omitempty"`
	// TimeDigits is a TIME(n) column's n (1 to 6; Type is then "time"):
	// go-mysql-server's TIME type has no digits (timetype.go). 0 for a
	// TIME column and for every other type; a definition written before
	// TIME(n) has none, and its TIME columns, written TIME(6) or TIME,
	// kept whole seconds.
	TimeDigits int `json:"time_digits,omitempty"`
}

type IndexDef struct {
	Name     string   `json:"name"`
	Columns  []string `json:"columns"`
	Unique   bool     `json:"unique,omitempty"`
	Comment  string   `json:"comment,omitempty"`
	Prefixes []uint16 `json:"prefixes,omitempty"`
}

// Info is a decoded table definition: the SQL schema and what storage
// needs, cached per *storage.TableDef.
type Info struct {
	Def    *storage.TableDef
	Meta   *tableMeta
	Schema sql.PrimaryKeySchema
	// dbSchema is schema with each column's DatabaseSource set, built at
	// the first use: a definition belongs to one database.
	dbOnce   sync.Once
	dbSchema sql.PrimaryKeySchema
}

// schemaIn returns the schema as go-mysql-server sees it: columns carry the
// database name (sent to clients as the column's schema in result sets).
func (ti *Info) SchemaIn(db string) sql.PrimaryKeySchema {
	ti.dbOnce.Do(func() {
		sch := ti.Schema.Schema.Copy()
		for _, c := range sch {
			c.DatabaseSource = db
		}
		ti.dbSchema = sql.NewPrimaryKeySchema(sch, ti.Schema.PkOrdinals...)
	})
	return ti.dbSchema
}

var infoCache sync.Map // *storage.TableDef -> *tableInfo

func colDefault(d *sql.ColumnDefaultValue) string {
	if d == nil {
		return ""
	}
	// A default read back from a definition is still the stored text:
	// keep it. Its String() would wrap it in parentheses (it is not marked
	// literal), turning DEFAULT 42 into DEFAULT (42) at every ALTER.
	if u, ok := d.Expr.(*sql.UnresolvedColumnDefault); ok {
		return u.String()
	}
	return d.String()
}

// Build turns a SQL schema into a storage definition.
func Build(name string, sch sql.PrimaryKeySchema, collation sql.CollationID, comment string, indexes []IndexDef, checks []sql.CheckDefinition, fks []sql.ForeignKeyConstraint) (*storage.TableDef, error) {
	indexes = keyOrder(sch.Schema, indexes)
	m := &tableMeta{Collation: collation.Name(), Comment: comment, Indexes: indexes, Checks: checks, ForeignKeys: fks}
	def := &storage.TableDef{Name: name, NumCols: len(sch.Schema), AutoCol: -1}
	for i, c := range sch.Schema {
		mc := metaColumn{Name: c.Name, Type: c.Type.String(), Nullable: c.Nullable, PrimaryKey: c.PrimaryKey,
			AutoIncrement: c.AutoIncrement, Default: colDefault(c.Default), OnUpdate: colDefault(c.OnUpdate),
			Virtual: c.Virtual, Comment: c.Comment, Extra: c.Extra}
		if c.Generated != nil {
			mc.Generated = c.Generated.String()
		}
		if n := funcs.TimeDigits(c.Type); n > 0 {
			// go-mysql-server reads "time(n)" for n < 6 as an error.
			mc.Type, mc.TimeDigits = "time", n
			if d, ok := funcs.TimeDefaultText(c.Default, n); ok {
				mc.Default = d
			}
		}
		if c.AutoIncrement {
			def.AutoCol = i
		}
		m.Columns = append(m.Columns, mc)
	}
	def.PK = append([]int(nil), sch.PkOrdinals...)
	for _, ix := range indexes {
		var cols []int
		for _, cn := range ix.Columns {
			pos := sch.Schema.IndexOfColName(cn)
			if pos < 0 {
				return nil, sql.ErrKeyColumnDoesNotExist.New(cn)
			}
			cols = append(cols, pos)
		}
		def.Indexes = append(def.Indexes, storage.IndexDef{Name: ix.Name, Cols: cols, Unique: ix.Unique})
	}
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	def.Meta = meta
	return def, nil
}

// keyOrder returns a table's indexes in the order MariaDB and MySQL keep
// them, which SHOW CREATE TABLE, SHOW INDEX and information_schema.STATISTICS
// list: unique keys over NOT NULL columns, then unique keys with a nullable
// column, then the others; among unique keys of one kind, those without a
// prefix part (KEY (c(10))) first; each group in the order its keys were
// made. A key added later (ALTER TABLE … ADD UNIQUE) takes its group's
// place, not the end.
func keyOrder(sch sql.Schema, indexes []IndexDef) []IndexDef {
	rank := func(ix IndexDef) int {
		if !ix.Unique {
			return 4
		}
		r := 0
		for _, cn := range ix.Columns {
			if pos := sch.IndexOfColName(cn); pos >= 0 && sch[pos].Nullable {
				r = 2
				break
			}
		}
		for _, n := range ix.Prefixes {
			if n > 0 {
				return r + 1
			}
		}
		return r
	}
	out := slices.Clone(indexes)
	slices.SortStableFunc(out, func(a, b IndexDef) int { return rank(a) - rank(b) })
	return out
}

// info decodes a storage definition into a SQL schema (cached).
func Decode(def *storage.TableDef) (*Info, error) {
	if v, ok := infoCache.Load(def); ok {
		return v.(*Info), nil
	}
	m := &tableMeta{}
	if err := json.Unmarshal(def.Meta, m); err != nil {
		return nil, fmt.Errorf("table %s: schema: %w", def.Name, err)
	}
	sch := make(sql.Schema, len(m.Columns))
	for i, mc := range m.Columns {
		typ, err := planbuilder.ParseColumnTypeString(mc.Type)
		if err != nil {
			return nil, fmt.Errorf("table %s: column %s: type %q: %w", def.Name, mc.Name, mc.Type, err)
		}
		typ = withOmittedCollation(typ)
		if mc.TimeDigits > 0 {
			if !types.IsTimespan(typ) || mc.TimeDigits > funcs.MaxTimeDigits {
				return nil, fmt.Errorf("table %s: column %s: %d digits for type %q", def.Name, mc.Name, mc.TimeDigits, mc.Type)
			}
			typ = funcs.TimeOf(mc.TimeDigits)
		}
		col := &sql.Column{Name: mc.Name, Type: typ, Nullable: mc.Nullable, PrimaryKey: mc.PrimaryKey,
			AutoIncrement: mc.AutoIncrement, Source: def.Name, Comment: mc.Comment, Extra: mc.Extra, Virtual: mc.Virtual}
		// A literal default is resolved once here; an expression stays
		// text that the planner resolves against the table when it uses it.
		if col.Default, err = storedDefault(mc.Default, typ, mc.Nullable); err != nil {
			return nil, fmt.Errorf("table %s: column %s: default %q: %w", def.Name, mc.Name, mc.Default, err)
		}
		if mc.OnUpdate != "" {
			col.OnUpdate = sql.NewUnresolvedColumnDefaultValue(mc.OnUpdate)
		}
		if mc.Generated != "" {
			col.Generated = sql.NewUnresolvedColumnDefaultValue(mc.Generated)
		}
		sch[i] = col
	}
	ti := &Info{Def: def, Meta: m, Schema: sql.NewPrimaryKeySchema(sch, def.PK...)}
	infoCache.Store(def, ti)
	return ti, nil
}

var literalDefault = regexp.MustCompile(`^(NULL|-?[0-9]+(\.[0-9]+)?|'([^'\\]|'')*')$`)

func storedDefault(text string, typ sql.Type, nullable bool) (*sql.ColumnDefaultValue, error) {
	if text == "" {
		return nil, nil
	}
	if !literalDefault.MatchString(text) {
		return sql.NewUnresolvedColumnDefaultValue(text), nil
	}
	d, err := planbuilder.StringToColumnDefaultValue(sql.NewEmptyContext(), text)
	if err != nil {
		return sql.NewUnresolvedColumnDefaultValue(text), nil
	}
	v, err := sql.NewColumnDefaultValue(d.Expr, typ, true, false, nullable)
	if err != nil {
		return sql.NewUnresolvedColumnDefaultValue(text), nil
	}
	return v, nil
}

// withOmittedCollation gives a text type parsed back from its String() the
// collation that String() leaves out: go-mysql-server's default
// (utf8mb4_0900_bin). The parser leaves it unspecified (0), and with an
// unspecified collation LIKE is always false and COLLATE fails
// ("COLLATION 'utf8mb4_0900_bin' is not valid for CHARACTER SET").
func withOmittedCollation(typ sql.Type) sql.Type {
	tc, ok := typ.(sql.TypeWithCollation)
	if !ok || tc.Collation() != sql.Collation_Unspecified {
		return typ
	}
	if t, err := tc.WithNewCollation(sql.Collation_Default); err == nil {
		return t
	}
	return typ
}

func (ti *Info) Collation() sql.CollationID {
	if ti.Meta.Collation == "" {
		return sql.Collation_Default
	}
	c, err := sql.ParseCollation("", ti.Meta.Collation, false)
	if err != nil {
		return sql.Collation_Default
	}
	return c
}

// with returns a copy of the definition with the given changes applied
// (nil arguments keep what is there).
func (ti *Info) With(name string, sch *sql.PrimaryKeySchema, indexes *[]IndexDef, checks *[]sql.CheckDefinition, fks *[]sql.ForeignKeyConstraint) (*storage.TableDef, error) {
	s, ix, ck, fk := ti.Schema, ti.Meta.Indexes, ti.Meta.Checks, ti.Meta.ForeignKeys
	if sch != nil {
		s = *sch
	}
	if indexes != nil {
		ix = *indexes
	}
	if checks != nil {
		ck = *checks
	}
	if fks != nil {
		fk = *fks
	}
	return Build(name, s, ti.Collation(), ti.Meta.Comment, ix, ck, fk)
}

// bind is the storage.Binder: each column compares with its SQL type, so
// indexes follow the column's collation (utf8mb4_0900_ai_ci: 'a' = 'A').
func Bind(def *storage.TableDef) ([]storage.Compare, error) {
	ti, err := Decode(def)
	if err != nil {
		return nil, err
	}
	out := make([]storage.Compare, len(ti.Schema.Schema))
	for i, c := range ti.Schema.Schema {
		out[i] = comparator(c.Type)
	}
	return out, nil
}

// comparator compares two values of a column. Integers, the most common
// keys, are compared directly; everything else goes through the type (which
// knows collations, decimals, times…).
func comparator(typ sql.Type) storage.Compare {
	// A string type's Compare fails on a value longer than the column (a
	// range bound such as v < 'defdef' on VARBINARY(3)): compare such
	// values as the longest type of the same collation, as MySQL does. The
	// textual fallback below is no consistent order and would make B-tree
	// seeks depend on earlier searches.
	var wide sql.Type
	if st, ok := typ.(sql.StringType); ok {
		if types.IsBinaryType(st) {
			wide = types.LongBlob
		} else {
			wide = types.CreateLongText(st.Collation())
		}
	}
	slow := func(a, b any) int {
		r, err := typ.Compare(context.Background(), a, b)
		if err != nil && wide != nil {
			r, err = wide.Compare(context.Background(), a, b)
		}
		if err != nil {
			return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
		}
		return r
	}
	switch {
	case types.IsSigned(typ):
		return func(a, b any) int {
			x, ok1 := funcs.AsInt64(a)
			y, ok2 := funcs.AsInt64(b)
			if ok1 && ok2 {
				return cmp.Compare(x, y)
			}
			return slow(a, b)
		}
	case types.IsUnsigned(typ):
		return func(a, b any) int {
			x, ok1 := funcs.AsUint64(a)
			y, ok2 := funcs.AsUint64(b)
			if ok1 && ok2 {
				return cmp.Compare(x, y)
			}
			return slow(a, b)
		}
	}
	return slow
}
