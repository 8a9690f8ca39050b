// Command miraj-demo starts a local three-node Miraj cluster on 127.0.0.1:
// run it from the repository root with `go run ./cmd/miraj-demo`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/miraj-db/miraj/internal/demo"
)

func main() {
	dir := flag.String("dir", "./demo-cluster", "folder for binaries, certificates, configurations, data and logs")
	clientPort := flag.Int("port", 7007, "client port of the first node (the others follow)")
	clusterPort := flag.Int("cluster-port", 7107, "inter-node port of the first node (the others follow)")
	nodes := flag.Int("nodes", 3, "number of nodes")
	raft := flag.Bool("raft", false, "raft mode: the nodes elect the primary, and elect another when it stops")
	timeout := flag.Int("election-timeout-ms", 3000, "raft mode's election_timeout_ms (500 or more)")
	httpPort := flag.Int("http-port", 0, "with a port: each node serves --http (metrics, health checks) from it on 127.0.0.1, the others on the next ports")
	flag.Parse()
	raftMS := 0
	if *raft {
		raftMS = max(*timeout, 500)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := demo.Run(ctx, demo.Options{Dir: *dir, ClientPort: *clientPort, ClusterPort: *clusterPort, Nodes: *nodes, Raft: raftMS, HTTPPort: *httpPort, Out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "miraj-demo:", err)
		os.Exit(1)
	}
}
