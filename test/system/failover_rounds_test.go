package system

import (
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFailoverRounds kills the primary with SIGKILL and promotes another
// node, round after round, under a write load from two clients that record
// every acknowledged write; each killed primary restarts fenced and returns
// to service as a secondary. At the end every acknowledged write is on the
// final primary or, if no surviving node had received it, in the quarantine
// of the node that acknowledged it: acknowledged-and-lost must be 0.
//
// MIRAJ_FAILOVER_ROUNDS sets the number of rounds (5 by default; 50 for
// the full run: MIRAJ_FAILOVER_ROUNDS=50 go test -run TestFailoverRounds
// -v ./test/system).
func TestFailoverRounds(t *testing.T) {
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("MIRAJ_FAILOVER_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	r := failoverRounds(t, "", rounds)
	if r.lost > 0 {
		t.Errorf("%d acknowledged writes are neither on the primary nor in the quarantine of the node that acknowledged them", r.lost)
	}
}

// roundsResult counts what became of the writes acknowledged during
// failoverRounds.
type roundsResult struct {
	acknowledged, kept, quarantined, lost int
}

// failoverRounds runs the rounds of TestFailoverRounds on a cluster whose
// cluster.toml files have extra in [cluster], and says where each
// acknowledged write ended: on the final primary, in the quarantine of the
// node that acknowledged it, or nowhere (lost).
func failoverRounds(t *testing.T, extra string, rounds int) roundsResult {
	c := newTestClusterWith(t, extra, "n1", "n2", "n3")
	ids := []string{"n1", "n2", "n3"}
	for _, id := range ids {
		c.start(id)
	}
	logOnFailure(t, c.nodes)
	cur := "n1"
	p := designate(t, c.nodes[cur])
	mustExec(t, p, "CREATE DATABASE shop")
	// The secondaries get the new database by a copy; until it is
	// installed they do not count toward semi-synchronous acks.
	target := applied(t, c.nodes[cur], "shop")
	for _, id := range ids[1:] {
		waitFor(t, id+" to have the database", 30*time.Second, func() bool { return applied(t, c.nodes[id], "shop") == target })
	}
	mustExec(t, p, "CREATE TABLE shop.t (id INT PRIMARY KEY, node VARCHAR(8))")

	var primary atomic.Pointer[string]
	primary.Store(&cur)
	conns := map[string]*sql.DB{}
	for _, id := range ids {
		conns[id] = c.nodes[id].open("")
	}
	var mu sync.Mutex
	acked := map[int64]string{} // id → node that acknowledged it
	var nextID atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				node := *primary.Load()
				mu.Lock()
				db := conns[node]
				mu.Unlock()
				id := nextID.Add(1)
				if _, err := db.Exec("INSERT INTO shop.t VALUES (?, ?)", id, node); err != nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				mu.Lock()
				acked[id] = node
				mu.Unlock()
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	// regained: per round, from the promotion's acceptance to the new
	// primary having a secondary streaming again.
	var regained []time.Duration

	for r := 1; r <= rounds; r++ {
		before := count()
		waitFor(t, "writes in this round", 60*time.Second, func() bool { return count() >= before+30 })
		// At least one secondary streams from this primary (the kill
		// then lands in a running cluster, not in the middle of a
		// reconnection).
		mark, _ := strconv.ParseInt(applied(t, c.nodes[cur], "shop"), 10, 64)
		waitFor(t, "a secondary streaming", 60*time.Second, func() bool {
			for _, id := range ids {
				if lsn, err := strconv.ParseInt(applied(t, c.nodes[id], "shop"), 10, 64); id != cur && err == nil && lsn >= mark {
					return true
				}
			}
			return false
		})
		old := cur
		c.nodes[old].kill()
		// The operator promotes one of the two others, preferring one
		// in turn; a controlled promotion that is refused (the other
		// holds a newer history) goes to the other.
		first := ids[(indexOf(ids, old)+1+r%2)%3]
		cands := []string{first}
		for _, id := range ids {
			if id != old && id != first {
				cands = append(cands, id)
			}
		}
		var next string
		var promoted time.Time
		waitFor(t, "a promotion", 60*time.Second, func() bool {
			for _, id := range cands {
				if _, err := conns[id].Exec("SET GLOBAL cluster_role = 'primary'"); err == nil {
					next, promoted = id, time.Now()
					return true
				}
			}
			return false
		})
		q := conns[next]
		waitFor(t, next+" to take writes", 60*time.Second, func() bool {
			var role string
			var ro int
			return q.QueryRow("SELECT @@cluster_role, @@read_only").Scan(&role, &ro) == nil && role == "PRIMARY" && ro == 0
		})
		// How long until the new primary has a secondary acknowledging
		// again (its semi-synchronous commits count it).
		waitFor(t, next+" to have a secondary streaming", 60*time.Second, func() bool {
			return syncStatus(t, q)["secondaries"] >= 1
		})
		regained = append(regained, time.Since(promoted))
		cur = next
		primary.Store(&next)
		c.nodes[old].restart()
		mu.Lock()
		conns[old].Close()
		conns[old] = c.nodes[old].open("")
		o := conns[old]
		mu.Unlock()
		waitFor(t, old+" to be fenced", 60*time.Second, func() bool { return one(t, o, "SELECT @@cluster_role") == "FENCED" })
		mustExec(t, o, "SET GLOBAL cluster_role = 'secondary'")
		t.Logf("round %d: killed %s, promoted %s, %d writes acknowledged so far", r, old, next, count())
	}
	stop.Store(true)
	wg.Wait()

	pdb := conns[cur]
	target = applied(t, c.nodes[cur], "shop")
	for _, id := range ids {
		waitFor(t, id+" to catch up", 60*time.Second, func() bool { return applied(t, c.nodes[id], "shop") == target })
	}
	want := tableSum(t, pdb, "shop.t")
	for _, id := range ids {
		if got := tableSum(t, conns[id], "shop.t"); got != want {
			t.Errorf("%s's rows differ from the primary's", id)
		}
	}
	final := idSet(t, pdb, "SELECT id FROM shop.t")
	quarantined := quarantinedIDs(t, c)
	res := roundsResult{acknowledged: len(acked)}
	for id, node := range acked {
		switch {
		case final[id]:
			res.kept++
		case quarantined[node][id]:
			res.quarantined++
			t.Logf("write %d acknowledged by %s is in %s's quarantine", id, node, node)
		default:
			res.lost++
			if res.lost <= 10 {
				t.Logf("write %d acknowledged by %s is neither on the primary nor in %s's quarantine", id, node, node)
			}
		}
	}
	t.Logf("rounds=%d acknowledged=%d kept=%d quarantined=%d acknowledged_and_lost=%d", rounds, res.acknowledged, res.kept, res.quarantined, res.lost)
	slices.Sort(regained)
	if len(regained) > 0 {
		t.Logf("from a promotion to a secondary streaming again: p50 %v, max %v", regained[len(regained)/2].Round(time.Millisecond), regained[len(regained)-1].Round(time.Millisecond))
	}
	return res
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

var (
	quarantineFrom = regexp.MustCompile(`Not on the primary's history \(LSN (\d+) to`)
	insertedID     = regexp.MustCompile("INSERT INTO `t` VALUES \\((\\d+),")
)

// quarantinedIDs lists, per node, the ids its quarantine folders hold in
// what left the primary's history.
func quarantinedIDs(t *testing.T, c *testCluster) map[string]map[int64]bool {
	out := map[string]map[int64]bool{}
	for _, id := range c.ids {
		out[id] = map[int64]bool{}
		reports, _ := filepath.Glob(filepath.Join(c.dir, "data-"+id, "miraj", "quarantaine", "*", "shop", "report.txt"))
		for _, r := range reports {
			rep, _ := os.ReadFile(r)
			args := []string{filepath.Dir(r)}
			if m := quarantineFrom.FindSubmatch(rep); m != nil {
				args = []string{"--from", string(m[1]), filepath.Dir(r)}
			}
			list, err := execCommand(quarantineBin, args...)
			if err != nil {
				t.Fatalf("miraj-quarantine %v: %v\n%s", args, err, list)
			}
			for _, m := range insertedID.FindAllSubmatch(list, -1) {
				n, _ := strconv.ParseInt(string(m[1]), 10, 64)
				out[id][n] = true
			}
		}
	}
	return out
}
