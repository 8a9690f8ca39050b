// Package sqlvalues is the part of the journal and checkpoint format that
// holds go-mysql-server's own Go types: TIME (types.Timespan, tag 64),
// JSON (sql.JSONWrapper, tag 65) and the spatial types
// (types.GeometryValue, tag 66), registered with storage's extension
// encoding when the package is imported.
//
// Every program that reads or writes rows of SQL tables imports it: the
// SQL layer (internal/sqlserver) and the tools that read a journal without
// it (cmd/miraj-quarantine). It imports storage and go-mysql-server's
// sql/types only; storage itself stays free of go-mysql-server.
//
//	import _ "github.com/miraj-db/miraj/internal/storage/sqlvalues"
package sqlvalues
