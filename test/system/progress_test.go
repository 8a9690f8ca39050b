package system

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// While a new secondary is seeded with a copy of a database of some 20 MB,
// the primary's information_schema.MIRAJ_REPLICATION and SHOW CLUSTER
// STATUS show how far the copy is (bytes done, total, percent), the
// secondary's own row the bytes received, and /metrics the same; once the
// copy is installed the columns are NULL again.
func TestSeedingShowsProgress(t *testing.T) {
	c := newTestCluster(t, "n1", "n2")
	n1 := c.startWith("n1", "--http", "127.0.0.1:0")
	logOnFailure(t, c.nodes)
	p := designate(t, n1)
	mustExec(t, p, "CREATE DATABASE big")
	mustExec(t, p, "CREATE TABLE big.t (id INT PRIMARY KEY, pad VARCHAR(1000))")
	const rows, batch = 20000, 200
	for i := 0; i < rows; i += batch {
		var vals []string
		for j := i; j < i+batch; j++ {
			vals = append(vals, fmt.Sprintf("(%d, REPEAT('%c', 1000))", j, 'a'+j%26))
		}
		mustExec(t, p, "INSERT INTO big.t VALUES "+strings.Join(vals, ","))
	}
	n2 := c.start("n2")
	s2 := n2.open("")
	type seen struct{ done, total int64 }
	var onPrimary, onSecondary []seen
	var status string
	deadline := time.Now().Add(120 * time.Second)
	for applied(t, n2, "big") == "" {
		if time.Now().After(deadline) {
			t.Fatal("n2 never got database big")
		}
		var done, total sql.NullInt64
		var pct sql.NullFloat64
		var kind sql.NullString
		err := p.QueryRow("SELECT COPY, COPY_BYTES_DONE, COPY_BYTES_TOTAL, COPY_PERCENT FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n2' AND `DATABASE` = 'big'").Scan(&kind, &done, &total, &pct)
		if err == nil && kind.Valid {
			if kind.String != "SEED" || !total.Valid || done.Int64 > total.Int64 || pct.Float64 < 0 || pct.Float64 > 100 {
				t.Errorf("primary's row while seeding: %v %v %v %v", kind, done, total, pct)
			}
			onPrimary = append(onPrimary, seen{done.Int64, total.Int64})
			if status == "" {
				status = queryString(t, p, "SELECT NODE_ID, STATE, COPY_BYTES_DONE, COPY_BYTES_TOTAL, COPY_PERCENT FROM information_schema.MIRAJ_NODES")
			}
		}
		err = s2.QueryRow("SELECT COPY, COPY_BYTES_DONE, COPY_BYTES_TOTAL FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n2' AND `DATABASE` = 'big'").Scan(&kind, &done, &total)
		if err == nil && kind.Valid {
			onSecondary = append(onSecondary, seen{done.Int64, total.Int64})
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("primary's view, %d samples during the copy: first %v, last %v; SHOW CLUSTER STATUS then: %s", len(onPrimary), first(onPrimary), last(onPrimary), status)
	t.Logf("secondary's view, %d samples: first %v, last %v", len(onSecondary), first(onSecondary), last(onSecondary))
	if len(onPrimary) == 0 {
		t.Fatalf("the primary never showed the copy's progress")
	}
	if tot := onPrimary[0].total; tot < rows*1000 {
		t.Errorf("total %d bytes, less than the %d of the rows' text", tot, rows*1000)
	}
	for i := 1; i < len(onPrimary); i++ {
		if onPrimary[i].done < onPrimary[i-1].done {
			t.Errorf("bytes done went back: %v then %v", onPrimary[i-1], onPrimary[i])
		}
	}
	if !strings.Contains(status, "n2") || strings.Count(status, "NULL") > 3 {
		t.Errorf("SHOW CLUSTER STATUS during the copy: %s", status)
	}
	// Done: NULL again.
	waitFor(t, "the copy's columns to clear", 30*time.Second, func() bool {
		return one(t, p, "SELECT COUNT(*) FROM information_schema.MIRAJ_REPLICATION WHERE COPY IS NOT NULL") == "0"
	})
	if v := one(t, s2, "SELECT COUNT(*) FROM big.t"); v != fmt.Sprint(rows) {
		t.Errorf("n2 has %s rows, want %d", v, rows)
	}
}

func first[T any](xs []T) any {
	if len(xs) == 0 {
		return nil
	}
	return xs[0]
}

func last[T any](xs []T) any {
	if len(xs) == 0 {
		return nil
	}
	return xs[len(xs)-1]
}
