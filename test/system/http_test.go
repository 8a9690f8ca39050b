package system

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var httpReadyRE = regexp.MustCompile(`msg="http endpoint ready" addr=(\S+)`)

// httpAddr is the address a server's --http endpoint took (from its log).
func httpAddr(t *testing.T, s *server) string {
	t.Helper()
	m := httpReadyRE.FindAllStringSubmatch(s.output(), -1)
	if m == nil {
		t.Fatalf("no http endpoint in the log:\n%s", s.output())
	}
	return m[len(m)-1][1]
}

// startWith starts node id with extra server options.
func (c *testCluster) startWith(id string, args ...string) *server {
	s := newServer(c.t, filepath.Join(c.dir, "data-"+id), append([]string{"--cluster-config", filepath.Join(c.dir, id, "cluster.toml")}, args...)...)
	c.nodes[id] = s
	return s
}

var plainHTTP = &http.Client{Timeout: 10 * time.Second}

// get returns the status code and body of GET url (code 0: no answer).
func get(client *http.Client, url string) (int, string) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metricValue returns the value of the sample named exactly name (with its
// labels, as exposed) in a /metrics page.
func metricValue(page, name string) (float64, bool) {
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// The health checks answer as Patroni's on a 3-node cluster: /primary 200
// only on the writable primary, /replica 200 only on a streaming secondary
// (503 once it is cut off, or beyond ?lag), /cluster is SHOW CLUSTER STATUS;
// /metrics carries the counters of SHOW STATUS with the same values.
func TestHTTPHealthChecksAndMetrics(t *testing.T) {
	c := newTestClusterWith(t, "test_hooks = true\n", "n1", "n2", "n3")
	for _, id := range c.ids {
		c.startWith(id, "--http", "127.0.0.1:0")
	}
	logOnFailure(t, c.nodes)
	url := map[string]string{}
	for _, id := range c.ids {
		url[id] = "http://" + httpAddr(t, c.nodes[id])
	}
	code := func(id, path string) int { n, _ := get(plainHTTP, url[id]+path); return n }

	// No primary yet: nobody is writable, nobody streams.
	for _, id := range c.ids {
		if n := code(id, "/health"); n != 200 {
			t.Errorf("%s /health before a primary: %d, want 200", id, n)
		}
		if n := code(id, "/primary"); n != 503 {
			t.Errorf("%s /primary before a primary: %d, want 503", id, n)
		}
	}
	p := designate(t, c.nodes["n1"])
	mustExec(t, p, "CREATE DATABASE shop")
	mustExec(t, p, "CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(20))")
	for i := 0; i < 100; i++ {
		mustExec(t, p, "INSERT INTO shop.t VALUES (?, 'x')", i)
	}
	for _, id := range []string{"n2", "n3"} {
		waitFor(t, id+" /replica to answer 200", 60*time.Second, func() bool { return code(id, "/replica") == 200 })
	}
	caughtUp(t, c.nodes["n1"], c.nodes["n2"], c.nodes["n3"])
	for _, tc := range []struct {
		id, path string
		want     int
	}{
		{"n1", "/primary", 200}, {"n1", "/master", 200}, {"n1", "/replica", 503}, {"n1", "/read-only", 200},
		{"n2", "/primary", 503}, {"n2", "/replica", 200}, {"n2", "/read-only", 200},
		{"n2", "/replica?lag=1MB", 200}, {"n2", "/replica?lag=30s", 200}, {"n2", "/replica?lag=bogus", 503},
		{"n3", "/primary", 503}, {"n3", "/nothing", 404},
	} {
		if n := code(tc.id, tc.path); n != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.id, tc.path, n, tc.want)
		}
	}
	// Caught up, lag 0 is within ?lag=0.
	waitFor(t, "n2 /replica?lag=0", 30*time.Second, func() bool { return code("n2", "/replica?lag=0") == 200 })

	// n3 cut off from its peers: it no longer streams, /replica says so.
	marker := filepath.Join(c.dir, "data-n3", "miraj", "cluster-isolate")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mustExec(t, p, "INSERT INTO shop.t VALUES (1000, 'while n3 is cut off')")
	waitFor(t, "n3 /replica to answer 503 once cut off", 60*time.Second, func() bool { return code("n3", "/replica") == 503 })
	_, body := get(plainHTTP, url["n3"]+"/replica")
	t.Logf("n3 cut off, /replica: %s", strings.TrimSpace(body))
	os.Remove(marker)
	waitFor(t, "n3 /replica to answer 200 again", 60*time.Second, func() bool { return code("n3", "/replica") == 200 })

	// /cluster is SHOW CLUSTER STATUS.
	_, body = get(plainHTTP, url["n1"]+"/cluster")
	var cl struct {
		Primary string `json:"primary"`
		Members []struct {
			NodeID string `json:"NODE_ID"`
			Role   string `json:"ROLE"`
			State  string `json:"STATE"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(body), &cl); err != nil {
		t.Fatalf("/cluster: %v\n%s", err, body)
	}
	if len(cl.Members) != 3 || cl.Primary != "n1" || cl.Members[0].NodeID != "n1" || cl.Members[0].State != "SELF" || cl.Members[0].Role != "PRIMARY" {
		t.Errorf("/cluster: %s", body)
	}
	t.Logf("n1 /cluster: %s", strings.TrimSpace(body))

	// /metrics and SHOW STATUS read the same counters: with no write in
	// between, the same values.
	commits, _ := strconv.ParseFloat(queryStatus(t, p, "Miraj_commits"), 64)
	fsyncs, _ := strconv.ParseFloat(queryStatus(t, p, "Miraj_journal_fsyncs"), 64)
	_, page := get(plainHTTP, url["n1"]+"/metrics")
	for _, m := range []struct {
		name string
		want float64
	}{{"miraj_commits_total", commits}, {"miraj_journal_fsyncs_total", fsyncs}} {
		if v, ok := metricValue(page, m.name); !ok || v != m.want {
			t.Errorf("/metrics %s = %v (found %v), SHOW STATUS says %v", m.name, v, ok, m.want)
		}
	}
	for _, name := range []string{
		`miraj_cluster_role{role="PRIMARY"}`, `miraj_cluster_sync_waits_total`, `miraj_cluster_sync_secondaries`,
		`miraj_cluster_sync_wait_avg_ms`, `miraj_cluster_node_lag_bytes{node="n2"}`, `miraj_cluster_node_lag_bytes{node="n3"}`,
		`miraj_commits_in_place_total`, `miraj_journal_group_waits_missed_total`, `threads_connected`,
		`miraj_journal_group_commit_size_count`, `miraj_commit_duration_seconds_count{kind="autocommit"}`,
		`miraj_replication_lsn{database="shop",node="n2",which="applied"}`,
	} {
		if _, ok := metricValue(page, name); !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if v, _ := metricValue(page, `miraj_statement_duration_seconds_count{kind="insert"}`); v < 101 {
		t.Errorf("/metrics counts %v INSERT statements, want at least 101", v)
	}
	if v, _ := metricValue(page, `miraj_cluster_node_state{node="n2",role="SECONDARY",state="CONNECTED"}`); v != 1 {
		t.Errorf("/metrics: n2 not CONNECTED:\n%s", grepLines(page, "miraj_cluster_node_state"))
	}
	_, page2 := get(plainHTTP, url["n2"]+"/metrics")
	if _, ok := metricValue(page2, `miraj_cluster_role{role="SECONDARY"}`); !ok {
		t.Errorf("n2 /metrics: role not SECONDARY:\n%s", grepLines(page2, "miraj_cluster_role"))
	}
	t.Logf("n1 /metrics (part):\n%s", grepLines(page, "miraj_commits_total", "miraj_journal_fsyncs_total", "miraj_cluster_node_lag", "miraj_cluster_sync_secondaries"))
}

func grepLines(page string, subs ...string) string {
	var out []string
	for _, line := range strings.Split(page, "\n") {
		for _, s := range subs {
			if strings.Contains(line, s) && !strings.HasPrefix(line, "#") {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// queryStatus reads one SHOW GLOBAL STATUS value.
func queryStatus(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var n, v string
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatalf("SHOW GLOBAL STATUS LIKE '%s': %v", name, err)
	}
	return v
}

// --http-tls serves the endpoint with the client port's certificate
// (made at the first start): a client that trusts ROOT/miraj/ca.pem gets
// its answer; plain HTTP gets none. Without --http there is no endpoint.
func TestHTTPOverTLS(t *testing.T) {
	root := t.TempDir()
	s := newServer(t, root, "--http", "127.0.0.1:0", "--http-tls")
	addr := httpAddr(t, s)
	pem, err := os.ReadFile(filepath.Join(root, "miraj", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if n, body := get(client, "https://"+addr+"/primary"); n != 200 {
		t.Errorf("https /primary: %d %s", n, body)
	}
	if n, body := get(client, "https://"+addr+"/metrics"); n != 200 || !strings.Contains(body, "miraj_commits_total") {
		t.Errorf("https /metrics: %d", n)
	}
	if n, _ := get(plainHTTP, "http://"+addr+"/primary"); n == 200 {
		t.Errorf("plain http answered 200 on the TLS endpoint")
	}
	s2 := newServer(t, t.TempDir())
	if strings.Contains(s2.output(), "http endpoint") {
		t.Errorf("an endpoint without --http:\n%s", s2.output())
	}
}
