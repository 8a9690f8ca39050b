package replica

import "testing"

// @@gtid_current_pos, as MariaDB's: per domain, this server's own newer
// write, else the replica's position.
func TestCurrentPos(t *testing.T) {
	for _, c := range []struct {
		binlog, slave string
		server        uint32
		want          string
	}{
		{"", "", 5, ""},
		{"", "0-2-10", 5, "0-2-10"},
		{"0-5-3", "", 5, "0-5-3"},         // only this server's writes
		{"0-2-10", "0-2-10", 5, "0-2-10"}, // a chain: the binary log holds the source's
		{"0-5-11", "0-2-10", 5, "0-5-11"}, // written here after the replica's last
		{"0-5-9", "0-2-10", 5, "0-2-10"},  // older than the replica's
		{"0-7-12", "0-2-10", 5, "0-2-10"}, // another server's
		{"1-5-4,0-2-10", "0-2-10", 5, "0-2-10,1-5-4"},
		{"0-5-1,2-5-8", "0-2-3,1-2-6,2-2-9", 5, "0-2-3,1-2-6,2-2-9"},
		{"garbage", "0-2-1", 5, "0-2-1"},
	} {
		if got := CurrentPos(c.binlog, c.slave, c.server); got != c.want {
			t.Errorf("CurrentPos(%q, %q, %d) = %q, want %q", c.binlog, c.slave, c.server, got, c.want)
		}
	}
}
