package system

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"testing"
)

// Read-your-writes across nodes: 1,000 times, a write on the primary, its
// session's @@cluster_last_position carried to a secondary, and a read of
// the row there. Waiting with CLUSTER_POSITION_WAIT, or with the session
// setting cluster_read_after, no read is stale; without a wait, the stale
// reads are counted (how often asynchronous replication had not applied
// the write yet: what the check would see without the wait).
//
// MIRAJ_CAUSAL_WRITES changes the count (1000 by default).
func TestCausalReadsOnASecondary(t *testing.T) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MIRAJ_CAUSAL_WRITES")); err == nil && v > 0 {
		n = v
	}
	c, ns, p := shopCluster(t, "", "n1", "n2")
	caughtUp(t, ns[0], ns[1])
	ctx := context.Background()
	conn := func(db *sql.DB) *sql.Conn {
		cn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cn.Close() })
		return cn
	}
	w := conn(p)
	r := conn(c.nodes["n2"].open(""))
	stale := map[string]int{}
	for _, mode := range []string{"none", "function", "session"} {
		if mode == "session" {
			mustExec(t, r, "SET SESSION cluster_read_after_timeout = 10000")
		}
		for i := 0; i < n; i++ {
			id := mode2base(mode) + i
			mustExec(t, w, "INSERT INTO shop.t VALUES (?, 'x')", id)
			var token string
			if err := w.QueryRowContext(ctx, "SELECT @@cluster_last_position").Scan(&token); err != nil || token == "" {
				t.Fatalf("token after a write: %q, %v", token, err)
			}
			switch mode {
			case "function":
				var res int
				if err := r.QueryRowContext(ctx, "SELECT CLUSTER_POSITION_WAIT(?, 10)", token).Scan(&res); err != nil || res != 0 {
					t.Fatalf("CLUSTER_POSITION_WAIT(%q, 10) = %d, %v", token, res, err)
				}
			case "session":
				mustExec(t, r, "SET SESSION cluster_read_after = ?", token)
			}
			var got int
			if err := r.QueryRowContext(ctx, "SELECT COUNT(*) FROM shop.t WHERE id = ?", id).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got == 0 {
				stale[mode]++
			}
		}
	}
	t.Logf("%d writes on the primary, each read at once on the secondary: stale reads without a wait %d, with CLUSTER_POSITION_WAIT %d, with cluster_read_after %d",
		n, stale["none"], stale["function"], stale["session"])
	if stale["function"] > 0 || stale["session"] > 0 {
		t.Errorf("stale reads despite waiting for the position: %v", stale)
	}
}

// mode2base keeps the ids of the three runs apart.
func mode2base(mode string) int {
	switch mode {
	case "function":
		return 1_000_000
	case "session":
		return 2_000_000
	}
	return 0
}
