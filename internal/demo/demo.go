// Package demo starts a local three-node cluster: certificates made with
// miraj-cluster-pki, one cluster.toml per node, three miraj-server processes
// on 127.0.0.1, the first designated primary (or, in raft mode, the
// leader the nodes elect).
package demo

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Options configure the demo.
type Options struct {
	Dir         string // where binaries, certificates, configs and data go
	ClientPort  int    // first client port; nodes use ClientPort, +1, +2
	ClusterPort int    // first inter-node port
	Nodes       int
	// Raft: mode = "raft" (the nodes elect the primary) with this
	// election_timeout_ms; 0: manual mode, the first node designated.
	Raft int
	// HTTPPort: with a port, each node serves --http on 127.0.0.1 from
	// it (the next node on the next port); 0: none.
	HTTPPort int
	Out      io.Writer
}

type node struct {
	id         string
	clientPort int
	cmd        *exec.Cmd
}

// Run builds the binaries, starts the cluster and waits for ctx to end, then
// stops the nodes cleanly.
func Run(ctx context.Context, o Options) error {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "bin")
	fmt.Fprintf(o.Out, "building miraj-server and miraj-cluster-pki into %s\n", bin)
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/miraj-server", "./cmd/miraj-cluster-pki")
	build.Stdout, build.Stderr = o.Out, o.Out
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	pkiTool := filepath.Join(bin, "miraj-cluster-pki")
	ca := filepath.Join(dir, "pki")
	if _, err := os.Stat(filepath.Join(ca, "cluster-ca.pem")); err != nil {
		if err := run(o.Out, pkiTool, "init-ca", "--name", "demo", "--out", ca); err != nil {
			return err
		}
	}
	var ids, seeds, members []string
	for i := 1; i <= o.Nodes; i++ {
		id := fmt.Sprintf("n%d", i)
		ids = append(ids, id)
		seeds = append(seeds, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", o.ClusterPort+i-1)))
		members = append(members, fmt.Sprintf("%q", id))
	}
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			if n.cmd.ProcessState == nil {
				n.cmd.Process.Signal(os.Interrupt)
				n.cmd.Wait()
			}
		}
	}()
	for i, id := range ids {
		nd := filepath.Join(dir, id)
		if _, err := os.Stat(filepath.Join(nd, "node.pem")); err != nil {
			if err := run(o.Out, pkiTool, "issue-node", "--ca", ca, "--id", id, "--san", "127.0.0.1", "--out", nd); err != nil {
				return err
			}
		}
		addr := fmt.Sprintf("127.0.0.1:%d", o.ClusterPort+i)
		cfg := fmt.Sprintf(`[node]
id = %q
listen = %q
advertise = %q

[cluster]
name = "demo"
seeds = [%s]
tls_cert = "node.pem"
tls_key = "node-key.pem"
tls_ca = "cluster-ca.pem"
members = [%s]
`, id, addr, addr, strings.Join(seeds, ", "), strings.Join(members, ", "))
		if o.Raft > 0 {
			cfg += fmt.Sprintf("mode = \"raft\"\nelection_timeout_ms = %d\n", o.Raft)
		}
		if err := os.WriteFile(filepath.Join(nd, "cluster.toml"), []byte(cfg), 0o644); err != nil {
			return err
		}
		n := &node{id: id, clientPort: o.ClientPort + i}
		n.cmd = exec.Command(filepath.Join(bin, "miraj-server"), "--root", filepath.Join(dir, "data-"+id),
			"--port", fmt.Sprint(n.clientPort), "--cluster-config", filepath.Join(nd, "cluster.toml"), "--log")
		if o.HTTPPort > 0 {
			n.cmd.Args = append(n.cmd.Args, "--http", fmt.Sprintf("127.0.0.1:%d", o.HTTPPort+i))
		}
		logf, err := os.Create(filepath.Join(dir, id+".log"))
		if err != nil {
			return err
		}
		defer logf.Close()
		pr, pw := io.Pipe()
		n.cmd.Stdout, n.cmd.Stderr = pw, pw
		if err := n.cmd.Start(); err != nil {
			return err
		}
		nodes = append(nodes, n)
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(pr)
			once := false
			for sc.Scan() {
				fmt.Fprintln(logf, sc.Text())
				if !once && strings.Contains(sc.Text(), "miraj server ready") {
					once = true
					close(ready)
				}
			}
		}()
		go func() { n.cmd.Wait(); pw.Close() }()
		select {
		case <-ready:
			fmt.Fprintf(o.Out, "node %s: client port %d, inter-node %s, log %s\n", id, n.clientPort, addr, logf.Name())
			if o.HTTPPort > 0 {
				fmt.Fprintf(o.Out, "node %s: metrics and health checks on http://127.0.0.1:%d/\n", id, o.HTTPPort+i)
			}
		case <-time.After(60 * time.Second):
			return fmt.Errorf("node %s did not start; see %s", id, logf.Name())
		}
	}

	lead := nodes[0]
	if o.Raft > 0 {
		if lead, err = elected(nodes); err != nil {
			return err
		}
	}
	primary, err := open(lead.clientPort)
	if err != nil {
		return err
	}
	defer primary.Close()
	var role string
	if err := primary.QueryRow("SELECT @@cluster_role").Scan(&role); err != nil {
		return err
	}
	if role != "PRIMARY" && o.Raft == 0 {
		if _, err := primary.Exec("SET GLOBAL cluster_role = 'primary'"); err != nil {
			return fmt.Errorf("designating the primary: %w", err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for role != "PRIMARY" && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			primary.QueryRow("SELECT @@cluster_role").Scan(&role)
		}
	}
	time.Sleep(1500 * time.Millisecond) // let the secondaries connect before showing the status
	if o.Raft > 0 {
		fmt.Fprintf(o.Out, "\nRaft mode: the nodes elected %s. SHOW CLUSTER STATUS on it:\n", lead.id)
	} else {
		fmt.Fprintf(o.Out, "\n%s is the primary. SHOW CLUSTER STATUS on it:\n", lead.id)
	}
	if err := printStatus(o.Out, primary); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nConnect with any MySQL client, for example:\n")
	fmt.Fprintf(o.Out, "  mariadb -h127.0.0.1 -P%d -uroot     # the primary: reads and writes\n", lead.clientPort)
	for _, n := range nodes {
		if n != lead {
			fmt.Fprintf(o.Out, "  mariadb -h127.0.0.1 -P%d -uroot     # secondary %s: reads (writes get 1290)\n", n.clientPort, n.id)
		}
	}
	if o.Raft > 0 {
		fmt.Fprintf(o.Out, "Stop the leader's process (kill %d) and another node is elected within about %d ms.\n", lead.cmd.Process.Pid, 2*o.Raft+500)
	}
	fmt.Fprintf(o.Out, "\nPress Ctrl-C to stop the cluster (data stays in %s).\n", dir)
	<-ctx.Done()
	fmt.Fprintln(o.Out, "stopping the nodes")
	return nil
}

func run(out io.Writer, name string, args ...string) error {
	c := exec.Command(name, args...)
	c.Stdout, c.Stderr = out, out
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return nil
}

func open(port int) (*sql.DB, error) {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = "root", "tcp", fmt.Sprintf("127.0.0.1:%d", port)
	c.AllowNativePasswords = true
	return sql.Open("mysql", c.FormatDSN())
}

var ws = regexp.MustCompile(`\s+`)

func printStatus(out io.Writer, db *sql.DB) error {
	rows, err := db.Query("SHOW CLUSTER STATUS")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	fmt.Fprintln(out, strings.Join(cols, " | "))
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = ws.ReplaceAllString(v.String, " ")
			}
		}
		fmt.Fprintln(out, strings.Join(parts, " | "))
	}
	return rows.Err()
}

// elected waits for the nodes to elect a leader and returns it.
func elected(nodes []*node) (*node, error) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			db, err := open(n.clientPort)
			if err != nil {
				return nil, err
			}
			var role string
			var ro int
			err = db.QueryRow("SELECT @@cluster_role, @@read_only").Scan(&role, &ro)
			db.Close()
			if err == nil && role == "PRIMARY" && ro == 0 {
				return n, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("no leader elected within 60 s; see the nodes' logs")
}
