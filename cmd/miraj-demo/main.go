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
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := demo.Run(ctx, demo.Options{Dir: *dir, ClientPort: *clientPort, ClusterPort: *clusterPort, Nodes: *nodes, Out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "miraj-demo:", err)
		os.Exit(1)
	}
}
