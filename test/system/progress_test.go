package system

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
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

// While a promoted node catches up from its peer (§17.4.1), its own row of
// MIRAJ_REPLICATION shows COPY = 'CATCHUP' with the bytes appended of the
// bytes planned: n3, cut off while about 10 MB were written, is promoted
// after the primary's loss and catches up from n2.
func TestCatchUpShowsProgress(t *testing.T) {
	c, ns, p1 := shopCluster(t, "test_hooks = true\npromotion_catchup_mb = 256\n", "n1", "n2", "n3")
	n1, n2, n3 := ns[0], ns[1], ns[2]
	caughtUp(t, n1, n2, n3)
	marker := filepath.Join(c.dir, "data-n3", "miraj", "cluster-isolate")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to lose n3", 30*time.Second, func() bool {
		return one(t, p1, "SELECT STATE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n3'") != "CONNECTED"
	})
	mustExec(t, p1, "ALTER TABLE shop.t MODIFY v VARCHAR(1000)")
	const rows, batch = 10000, 200
	for i := 0; i < rows; i += batch {
		var vals []string
		for j := i; j < i+batch; j++ {
			vals = append(vals, fmt.Sprintf("(%d, REPEAT('%c', 1000))", j, 'a'+j%26))
		}
		mustExec(t, p1, "INSERT INTO shop.t VALUES "+strings.Join(vals, ","))
	}
	caughtUp(t, n1, n2)
	n1.kill()
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	p3 := n3.open("")
	watch := n3.open("")
	type seen struct{ done, total int64 }
	var samples []seen
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			var kind sql.NullString
			var d, tot sql.NullInt64
			if watch.QueryRow("SELECT COPY, COPY_BYTES_DONE, COPY_BYTES_TOTAL FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n3' AND `DATABASE` = 'shop'").Scan(&kind, &d, &tot) == nil && kind.String == "CATCHUP" {
				samples = append(samples, seen{d.Int64, tot.Int64})
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	waitFor(t, "n3's promotion to be accepted", 30*time.Second, func() bool {
		_, err := p3.Exec("SET GLOBAL cluster_role = 'primary'")
		return err == nil
	})
	waitFor(t, "n3 to take writes", 60*time.Second, func() bool {
		return one(t, p3, "SELECT CONCAT(@@cluster_role, ' ', @@read_only)") == "PRIMARY 0"
	})
	close(stop)
	<-done
	if got := one(t, p3, "SELECT COUNT(*) FROM shop.t"); got != fmt.Sprint(rows) {
		t.Fatalf("n3 promoted with %s rows, want %d", got, rows)
	}
	t.Logf("n3's catch-up, %d samples: first %v, last %v", len(samples), first(samples), last(samples))
	if len(samples) == 0 {
		t.Fatalf("n3 never showed its catch-up; log:\n%s", n3.output())
	}
	for _, s := range samples {
		if s.total < rows*1000 || s.done > s.total {
			t.Errorf("catch-up sample %v: want done <= total and total >= %d", s, rows*1000)
		}
	}
	if v := one(t, p3, "SELECT COUNT(*) FROM information_schema.MIRAJ_REPLICATION WHERE COPY IS NOT NULL"); v != "0" {
		t.Errorf("%s rows still show a copy after the promotion", v)
	}
}
