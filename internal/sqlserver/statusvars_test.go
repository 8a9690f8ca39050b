package sqlserver

import (
	"testing"
	"time"
)

// Uptime, Queries, Bytes_received and Bytes_sent are MySQL's: the seconds
// since the server started, the statements, and the bytes of the
// connection's packets (for the session) or of every connection (global).
func TestDerivedStatusCounters(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	ctx := t.Context()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	names := []string{"Bytes_received", "Bytes_sent", "Queries", "Questions"}
	read := sessionStatusQuery(names...)
	status := func() map[string]int { return sessionStatus(t, c, names...) }
	before := status()
	const q = "SELECT 'a somewhat long literal to make the packet longer'"
	if _, err := c.ExecContext(ctx, q); err != nil {
		t.Fatal(err)
	}
	after := status()
	// Received: the two COM_QUERY packets, each a 4-byte header, the
	// command byte and the text.
	if got, want := after["Bytes_received"]-before["Bytes_received"], (4+1+len(q))+(4+1+len(read)); got != want {
		t.Errorf("Bytes_received +%d, want +%d", got, want)
	}
	// Sent: the first status read's rows and the SELECT's row, each
	// with its column definitions: more than the values alone.
	if got := after["Bytes_sent"] - before["Bytes_sent"]; got < 100 {
		t.Errorf("Bytes_sent +%d for two result sets", got)
	}
	if after["Queries"] != after["Questions"] || after["Questions"] != before["Questions"]+2 {
		t.Errorf("Queries %d, Questions %d (before %d), want equal and +2", after["Queries"], after["Questions"], before["Questions"])
	}
	if got := globalStatus(t, db, "Bytes_received"); got < after["Bytes_received"] {
		t.Errorf("global Bytes_received %d under the session's %d", got, after["Bytes_received"])
	}

	up := globalStatus(t, db, "Uptime")
	if want := int(time.Since(time.Unix(0, startedAt.Load())) / time.Second); up < want-1 || up > want+1 {
		t.Errorf("Uptime %d, want about %d", up, want)
	}
	startedAt.Add(-int64(time.Hour))
	defer startedAt.Add(int64(time.Hour))
	if got := globalStatus(t, db, "Uptime"); got < up+3600 {
		t.Errorf("Uptime %d an hour later than %d", got, up)
	}
}
