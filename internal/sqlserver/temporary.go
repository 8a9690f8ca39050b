package sqlserver

import "github.com/dolthub/go-mysql-server/sql"

var _ sql.TemporaryTable = (*Table)(nil)

// IsTemporary reports false: we have no temporary tables yet. Implementing
// sql.TemporaryTable is still required: go-mysql-server's read-only
// transaction check (validateReadOnlyTransaction) calls IsTemporary on every
// table a write touches and dereferences nil for a table without it, so
// INSERT/UPDATE/DELETE inside START TRANSACTION READ ONLY panicked instead
// of returning ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION.
func (t *Table) IsTemporary() bool { return false }
