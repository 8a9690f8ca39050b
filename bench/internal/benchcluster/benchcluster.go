// Package benchcluster starts a cluster of real miraj-server processes for
// the benchmarks (certificates from miraj-cluster-pki, free ports on
// 127.0.0.1) and holds the small helpers they share. A benchmark stops at
// its first error: these helpers print it and exit.
package benchcluster

import (
	"bufio"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Node is one server of the cluster.
type Node struct {
	ID    string
	DB    *sql.DB
	HTTP  string // its --http address
	PProf string // its --pprof address, when asked for
	Cmd   *exec.Cmd
}

var readyRE = regexp.MustCompile(`msg="miraj server ready" addr=(\S+)`)

// Start starts n nodes (n1 … nn, every one a member) from the binaries in
// bin, under dir, and returns them with a function that kills them.
// pprof: each node also serves Go's profiling endpoints.
func Start(bin, dir string, n int, pprof bool) ([]Node, func()) {
	run := func(args ...string) {
		out, err := exec.Command(filepath.Join(bin, "miraj-cluster-pki"), args...).CombinedOutput()
		if err != nil {
			Check(fmt.Errorf("miraj-cluster-pki %v: %v\n%s", args, err, out))
		}
	}
	run("init-ca", "--name", "bench", "--out", filepath.Join(dir, "pki"))
	var ids, seeds, members []string
	addrs := map[string]string{}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%d", i)
		ids = append(ids, id)
		addrs[id] = FreeAddr()
		seeds = append(seeds, strconv.Quote(addrs[id]))
		members = append(members, strconv.Quote(id))
	}
	var nodes []Node
	for _, id := range ids {
		nd := filepath.Join(dir, id)
		run("issue-node", "--ca", filepath.Join(dir, "pki"), "--id", id, "--san", "127.0.0.1", "--out", nd)
		cfg := fmt.Sprintf("[node]\nid = %q\nlisten = %q\nadvertise = %q\n\n[cluster]\nname = \"bench\"\nseeds = [%s]\ntls_cert = \"node.pem\"\ntls_key = \"node-key.pem\"\ntls_ca = \"cluster-ca.pem\"\nmembers = [%s]\n",
			id, addrs[id], addrs[id], strings.Join(seeds, ", "), strings.Join(members, ", "))
		Check(os.WriteFile(filepath.Join(nd, "cluster.toml"), []byte(cfg), 0o644))
		httpAddr, pprofAddr := FreeAddr(), ""
		args := []string{"--root", filepath.Join(dir, "data-"+id), "--port", "0",
			"--cluster-config", filepath.Join(nd, "cluster.toml"), "--http", httpAddr, "--log=false"}
		if pprof {
			pprofAddr = FreeAddr()
			args = append(args, "--pprof", pprofAddr)
		}
		cmd := exec.Command(filepath.Join(bin, "miraj-server"), args...)
		pr, err := cmd.StderrPipe()
		Check(err)
		Check(cmd.Start())
		sc := bufio.NewScanner(pr)
		var addr string
		for sc.Scan() {
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				addr = m[1]
				break
			}
		}
		go func() {
			for sc.Scan() {
			}
		}()
		db, err := sql.Open("mysql", "root@tcp("+addr+")/")
		Check(err)
		nodes = append(nodes, Node{ID: id, DB: db, HTTP: httpAddr, PProf: pprofAddr, Cmd: cmd})
	}
	return nodes, func() {
		for _, n := range nodes {
			n.Cmd.Process.Kill()
			n.Cmd.Wait()
		}
	}
}

// Check prints err, if any, and exits.
func Check(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
}

// Must runs q, or exits.
func Must(db *sql.DB, q string) {
	if _, err := db.Exec(q); err != nil {
		Check(fmt.Errorf("%s: %w", q, err))
	}
}

// One returns the first column of q's first row ("" for NULL, none or an
// error).
func One(db *sql.DB, q string) string {
	var v sql.NullString
	if err := db.QueryRow(q).Scan(&v); err != nil {
		return ""
	}
	return v.String
}

// WaitFor polls cond every millisecond, for 10 minutes at most.
func WaitFor(cond func() bool) {
	deadline := time.Now().Add(10 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			Check(fmt.Errorf("timed out"))
		}
		time.Sleep(time.Millisecond)
	}
}

// Applied is the node's applied LSN of database name.
func Applied(db *sql.DB, name string) string {
	return One(db, "SELECT APPLIED_LSN FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = @@cluster_node_id AND `DATABASE` = '"+name+"'")
}

// CaughtUp waits until s has applied database name as far as p has.
func CaughtUp(p, s *sql.DB, name string) {
	target := Applied(p, name)
	WaitFor(func() bool { return Applied(s, name) == target })
}

// FreeAddr returns a free TCP address on 127.0.0.1.
func FreeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Check(err)
	defer l.Close()
	return l.Addr().String()
}
