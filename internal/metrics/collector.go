package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miraj-db/miraj/internal/journal"
)

// collector reads its Source at each scrape. It describes nothing ahead
// (an unchecked collector): the status variables it exports are known
// only when read.
type collector struct{ src Source }

func (c *collector) Describe(chan<- *prometheus.Desc) {}

// gauges are the status variables that go up and down; the other integer
// ones are counters (exported with _total).
var gauges = map[string]bool{
	"miraj_cluster_sync_degraded_bases": true,
	"miraj_cluster_sync_secondaries":    true,
	"miraj_cluster_term":                true, // raft mode
	"threads_connected":                 true,
	"threads_running":                   true,
	"max_used_connections":              true,
	"uptime":                            true,
}

var (
	groupDesc = prometheus.NewDesc("miraj_journal_group_commit_size", "Commits (journal appends) one fsync of the group commit made durable, per fsync.", nil, nil)
	roleDesc  = prometheus.NewDesc("miraj_cluster_role", "1 for this node's @@cluster_role (PRIMARY, SECONDARY, FENCED, NONE).", []string{"role"}, nil)
	epochDesc = prometheus.NewDesc("miraj_cluster_epoch", "This node's epoch (@@cluster_epoch).", nil, nil)
	stateDesc = prometheus.NewDesc("miraj_cluster_node_state", "1 for each node of SHOW CLUSTER STATUS, with its ROLE and STATE.", []string{"node", "role", "state"}, nil)
	lagBytes  = prometheus.NewDesc("miraj_cluster_node_lag_bytes", "LAG_BYTES of SHOW CLUSTER STATUS: bytes of the primary's log the node has not applied, over its databases.", []string{"node"}, nil)
	lagSecs   = prometheus.NewDesc("miraj_cluster_node_lag_seconds", "LAG_SECONDS of SHOW CLUSTER STATUS: age of the node's last applied batch while it lags (absent when NULL).", []string{"node"}, nil)
	lsnDesc   = prometheus.NewDesc("miraj_replication_lsn", "Positions of information_schema.MIRAJ_REPLICATION, per node and database: which is sent, written, applied, retained, primary or synced.", []string{"node", "database", "which"}, nil)
	copyDone  = prometheus.NewDesc("miraj_cluster_copy_done_bytes", "Bytes done of a copy (kind seed) or a catch-up (kind catchup) under way.", []string{"node", "database", "kind"}, nil)
	openTxns  = prometheus.NewDesc("miraj_stream_open_transactions", "Transactions open in the database's journal (information_schema.MIRAJ_STREAMS), by origin: local (streaming from this node) or received (from the primary, or left open by a crash).", []string{"database", "origin"}, nil)
	openBytes = prometheus.NewDesc("miraj_stream_open_bytes", "Journal bytes of the transactions open in the database's journal, by origin.", []string{"database", "origin"}, nil)
	openRows  = prometheus.NewDesc("miraj_stream_open_rows", "Rows written by the transactions open in the database's journal, by origin.", []string{"database", "origin"}, nil)
	openAge   = prometheus.NewDesc("miraj_stream_oldest_age_seconds", "Age of the oldest transaction open in the database's journal, by origin (absent when none is).", []string{"database", "origin"}, nil)
	copyTotal = prometheus.NewDesc("miraj_cluster_copy_total_bytes", "Bytes in all of a copy or catch-up under way (0 while unknown).", []string{"node", "database", "kind"}, nil)
)

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	if c.src.Status != nil {
		for _, v := range c.src.Status() {
			name := strings.ToLower(v.Name)
			var f float64
			switch x := v.Value.(type) {
			case uint64:
				f = float64(x)
			case int64:
				f = float64(x)
			case int:
				f = float64(x)
			case uint32:
				f = float64(x)
			case float64:
				ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, "SHOW GLOBAL STATUS LIKE '"+v.Name+"'.", nil, nil), prometheus.GaugeValue, x)
				continue
			default:
				continue
			}
			if gauges[name] {
				ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, "SHOW GLOBAL STATUS LIKE '"+v.Name+"'.", nil, nil), prometheus.GaugeValue, f)
			} else {
				ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name+"_total", "SHOW GLOBAL STATUS LIKE '"+v.Name+"'.", nil, nil), prometheus.CounterValue, f)
			}
		}
	}
	if c.src.GroupSizes != nil {
		g := c.src.GroupSizes()
		buckets := map[float64]uint64{}
		var n uint64
		for i, b := range journal.GroupSizeBounds {
			n += g.Counts[i]
			buckets[float64(b)] = n
		}
		n += g.Counts[len(journal.GroupSizeBounds)]
		ch <- prometheus.MustNewConstHistogram(groupDesc, n, float64(g.Sum), buckets)
	}
	if c.src.Role != nil {
		ch <- prometheus.MustNewConstMetric(roleDesc, prometheus.GaugeValue, 1, c.src.Role())
	}
	if c.src.Epoch != nil {
		ch <- prometheus.MustNewConstMetric(epochDesc, prometheus.GaugeValue, float64(c.src.Epoch()))
	}
	if c.src.Nodes != nil {
		for _, r := range c.src.Nodes() {
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, 1, r.NodeID, r.Role, r.State)
			ch <- prometheus.MustNewConstMetric(lagBytes, prometheus.GaugeValue, float64(r.LagBytes), r.NodeID)
			if r.LagSeconds != nil {
				ch <- prometheus.MustNewConstMetric(lagSecs, prometheus.GaugeValue, *r.LagSeconds, r.NodeID)
			}
		}
	}
	if c.src.Replication != nil {
		for _, r := range c.src.Replication() {
			for _, p := range []struct {
				which string
				v     *uint64
			}{{"sent", r.SentLSN}, {"written", r.WrittenLSN}, {"applied", r.AppliedLSN}, {"retained", r.RetainedLSN}, {"primary", r.PrimaryLSN}, {"synced", r.SyncedLSN}} {
				if p.v != nil {
					ch <- prometheus.MustNewConstMetric(lsnDesc, prometheus.GaugeValue, float64(*p.v), r.NodeID, r.Database, p.which)
				}
			}
		}
	}
	if c.src.Streams != nil {
		c.collectStreams(ch, time.Now())
	}
	if c.src.Copies != nil {
		for _, p := range c.src.Copies() {
			ch <- prometheus.MustNewConstMetric(copyDone, prometheus.GaugeValue, float64(p.Done), p.Node, p.Database, p.Kind)
			ch <- prometheus.MustNewConstMetric(copyTotal, prometheus.GaugeValue, float64(p.Total), p.Node, p.Database, p.Kind)
		}
	}
}

// collectStreams exports the open transactions of each database, summed
// by origin; a database without any has zeros, so that a series does not
// vanish when its last transaction ends.
func (c *collector) collectStreams(ch chan<- prometheus.Metric, now time.Time) {
	type sum struct {
		n, bytes, rows int64
		oldest         time.Time
	}
	for db, list := range c.src.Streams() {
		by := map[string]*sum{"local": {}, "received": {}}
		for _, si := range list {
			origin := "received"
			if si.Local {
				origin = "local"
			}
			s := by[origin]
			s.n++
			s.bytes += si.Bytes
			s.rows += si.Rows
			if s.oldest.IsZero() || si.Began.Before(s.oldest) {
				s.oldest = si.Began
			}
		}
		for origin, s := range by {
			ch <- prometheus.MustNewConstMetric(openTxns, prometheus.GaugeValue, float64(s.n), db, origin)
			ch <- prometheus.MustNewConstMetric(openBytes, prometheus.GaugeValue, float64(s.bytes), db, origin)
			ch <- prometheus.MustNewConstMetric(openRows, prometheus.GaugeValue, float64(s.rows), db, origin)
			if s.n > 0 {
				ch <- prometheus.MustNewConstMetric(openAge, prometheus.GaugeValue, max(now.Sub(s.oldest).Seconds(), 0), db, origin)
			}
		}
	}
}
