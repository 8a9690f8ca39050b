// Package tabledef is a SQL table's definition as storage keeps it: the
// SQL schema, indexes, checks and foreign keys encoded as a
// storage.TableDef whose Meta (JSON) travels in the journal with every DDL
// (Build), decoded back into go-mysql-server's schema (Decode, cached per
// definition), and the comparators that order each column's index
// entries by its SQL type and collation (Bind, the storage.Binder).
//
// The JSON field names of the metadata are part of the disk format: never
// rename one.
//
// It imports storage, go-mysql-server and compat/funcs (TIME(n)'s type).
// Every part of the SQL layer that reads a table's definition imports it.
package tabledef
