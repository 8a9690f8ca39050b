package liblog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// clock is a settable time for a Limiter.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestLimiter(interval time.Duration) (*Limiter, *bytes.Buffer, *clock) {
	var buf bytes.Buffer
	l := New(slog.New(slog.NewTextHandler(&buf, nil)), interval)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l.now = c.now
	return l, &buf, c
}

func lines(b *bytes.Buffer) []string {
	s := strings.TrimSpace(b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// One line per cause per interval; the lines held back are counted on the
// next line of that cause, or by Flush once the cause is quiet.
func TestLimiterOneLinePerCausePerInterval(t *testing.T) {
	l, buf, c := newTestLimiter(10 * time.Second)
	for i := 0; i < 150; i++ {
		l.Line(slog.LevelError, "vitess", "Got unhandled packet (default) from client "+strings.Repeat("7", i%5+1)+" (127.0.0.1:5000), returning error: [1 2 3]")
		l.Line(slog.LevelError, "vitess", "Conn 12: Flush() failed")
		c.t = c.t.Add(time.Second / 10)
	}
	got := lines(buf)
	if len(got) != 4 {
		t.Fatalf("150 lines of 2 causes over 15 s: %d logged, want 4 (2 causes × 2 intervals):\n%s", len(got), buf)
	}
	if !strings.Contains(got[2], "held_back=99") && !strings.Contains(got[3], "held_back=99") {
		t.Errorf("no count of the 99 lines held back:\n%s", buf)
	}
	// Quiet for an interval: Flush reports what was held back since.
	buf.Reset()
	c.t = c.t.Add(11 * time.Second)
	l.Flush()
	if got := lines(buf); len(got) != 2 || !strings.Contains(got[0], "held_back=49") || !strings.Contains(got[1], "held_back=49") {
		t.Errorf("Flush after a quiet interval: want the 49 lines of each cause held back since the last:\n%s", buf)
	}
	buf.Reset()
	c.t = c.t.Add(11 * time.Second)
	l.Flush()
	l.Line(slog.LevelError, "vitess", "Conn 14: Flush() failed")
	l.Line(slog.LevelError, "vitess", "Conn 15: Flush() failed")
	l.Line(slog.LevelError, "vitess", "Conn 16: Flush() failed")
	l.Flush() // not quiet yet
	if got := lines(buf); len(got) != 1 || strings.Contains(got[0], "held_back") {
		t.Fatalf("a cause quiet for long logs its next line at once, and holds the next two:\n%s", buf)
	}
	c.t = c.t.Add(10 * time.Second)
	l.Flush()
	if got := lines(buf); len(got) != 2 || !strings.Contains(got[1], "held_back=2") || !strings.Contains(got[1], "Conn 16") {
		t.Errorf("Flush after the interval should report the last line held back with held_back=2:\n%s", buf)
	}
}

// A panic vitess' listener caught becomes one line: its value and the
// innermost frames outside the runtime.
func TestLimiterCondensesCaughtPanic(t *testing.T) {
	l, buf, c := newTestLimiter(10 * time.Second)
	stack := "mysql_server caught panic:\nruntime error: slice bounds out of range [32:17]\n" +
		"/usr/local/go/src/runtime/panic.go:236 (0x44fb56)\n\tpanicBounds64: panic(e)\n" +
		"/root/go/pkg/mod/github.com/dolthub/vitess@v0/go/mysql/encoding.go:180 (0x9e7bc4)\n\tcom/dolthub/vitess/go/mysql.readNullString: end := bytes.IndexByte(data[pos:], 0)\n" +
		"/root/go/pkg/mod/github.com/dolthub/vitess@v0/go/mysql/server.go:811 (0x9f4864)\n\tcom/dolthub/vitess/go/mysql.(*Listener).parseClientHandshakePacket: username, pos, ok := readNullString(data, pos)\n"
	l.Line(slog.LevelError, "vitess", stack)
	c.t = c.t.Add(time.Second)
	l.Line(slog.LevelError, "vitess", strings.Replace(stack, "[32:17]", "[32:20]", 1))
	got := lines(buf)
	if len(got) != 1 {
		t.Fatalf("two panics of one cause within the interval: %d lines:\n%s", len(got), buf)
	}
	for _, want := range []string{"caught panic in a client connection", "slice bounds out of range [32:17]", "readNullString encoding.go:180 < parseClientHandshakePacket server.go:811"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("line lacks %q:\n%s", want, got[0])
		}
	}
	if strings.Contains(got[0], "panicBounds64") {
		t.Errorf("runtime frames kept:\n%s", got[0])
	}
}

// Past maxCauses distinct causes, new ones share one entry: the log stays bounded.
func TestLimiterBoundsCauses(t *testing.T) {
	l, buf, _ := newTestLimiter(10 * time.Second)
	for i := 0; i < 3*maxCauses; i++ {
		l.Line(slog.LevelWarn, "log", "cause "+strings.Repeat("x", i%200)+strings.Repeat("y", i/200))
	}
	if n := len(lines(buf)); n > maxCauses+1 {
		t.Errorf("%d lines for %d distinct causes, want at most %d", n, 3*maxCauses, maxCauses+1)
	}
}
