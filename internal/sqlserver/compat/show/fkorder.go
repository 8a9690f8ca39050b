package show

import (
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// orderForeignKeys puts the foreign keys of SHOW CREATE TABLE's statements
// in rows in the order of their names, as MySQL lists them (go-mysql-server
// lists them in the order they were declared).
func orderForeignKeys(rows []sql.Row) {
	for _, r := range rows {
		if len(r) < 2 {
			continue
		}
		stmt, ok := r[1].(string)
		if !ok || !strings.Contains(stmt, " FOREIGN KEY ") {
			continue
		}
		lines := strings.Split(stmt, "\n")
		var at []int
		for i, l := range lines {
			if strings.HasPrefix(l, "  CONSTRAINT `") && strings.Contains(l, " FOREIGN KEY (") {
				at = append(at, i)
			}
		}
		if len(at) < 2 {
			continue
		}
		fks := make([]string, len(at))
		for j, i := range at {
			fks[j] = strings.TrimSuffix(lines[i], ",")
		}
		name := func(l string) string {
			l = strings.TrimPrefix(l, "  CONSTRAINT `")
			if k := strings.Index(l, "` FOREIGN KEY ("); k >= 0 {
				l = l[:k]
			}
			return strings.ToLower(l)
		}
		sort.SliceStable(fks, func(a, b int) bool { return name(fks[a]) < name(fks[b]) })
		for j, i := range at {
			if strings.HasSuffix(lines[i], ",") {
				lines[i] = fks[j] + ","
			} else {
				lines[i] = fks[j]
			}
		}
		r[1] = strings.Join(lines, "\n")
	}
}
