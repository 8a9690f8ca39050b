// Package liblog sends what the libraries the server links print — the
// MySQL protocol listener (vitess' log package), go-mysql-server (logrus)
// and Go's standard log — to the server's own logger, so that they reach
// server.log as well as stderr, in the server's format, and at a bounded
// rate: one line per cause per interval, with the count of the lines held
// back since the last one. A panic the listener caught (its "mysql_server
// caught panic" line, a stack trace of a hundred lines) becomes one line:
// the panic's value and the innermost frames outside the runtime.
//
// Install changes the libraries' process-wide loggers; the server calls it
// once, at start. A Limiter's methods are safe for concurrent use; Run
// reports, every interval, the counts of causes that went quiet.
//
//	lim := liblog.Install(logger, 10*time.Second)
//	go lim.Run(ctx)
package liblog

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	vtlog "github.com/dolthub/vitess/go/vt/log"
	"github.com/sirupsen/logrus"
)

// maxCauses bounds the causes a Limiter tracks: past it, new causes
// share one entry ("other"), so a flood of distinct lines cannot grow
// memory or the log without bound.
const maxCauses = 1024

// maxLineBytes bounds one library line as logged (a client's query or
// packet may be quoted in it).
const maxLineBytes = 2048

// Limiter logs library lines at most once per cause per interval.
type Limiter struct {
	log      *slog.Logger
	interval time.Duration
	now      func() time.Time
	mu       struct {
		sync.Mutex
		causes map[string]*cause
	}
}

// cause is one kind of line: its last logged time and the lines held
// back since.
type cause struct {
	level  slog.Level
	source string
	msg    string // the last line held back, reported with the count
	attrs  []any  // its attributes
	last   time.Time
	held   int
}

// New makes a Limiter writing to logger, one line per cause per interval.
func New(logger *slog.Logger, interval time.Duration) *Limiter {
	l := &Limiter{log: logger, interval: interval, now: time.Now}
	l.mu.causes = map[string]*cause{}
	return l
}

// Install makes the libraries' loggers write through a new Limiter and
// returns it: vitess' log functions, logrus (its own output is discarded:
// every entry at its enabled levels goes through a hook) and Go's standard
// log.
func Install(logger *slog.Logger, interval time.Duration) *Limiter {
	l := New(logger, interval)
	vtlog.Info = func(a ...any) { l.Line(slog.LevelInfo, "vitess", fmt.Sprint(a...)) }
	vtlog.Infof = func(f string, a ...any) { l.Line(slog.LevelInfo, "vitess", fmt.Sprintf(f, a...)) }
	vtlog.Warning = func(a ...any) { l.Line(slog.LevelWarn, "vitess", fmt.Sprint(a...)) }
	vtlog.Warningf = func(f string, a ...any) { l.Line(slog.LevelWarn, "vitess", fmt.Sprintf(f, a...)) }
	vtlog.Error = func(a ...any) { l.Line(slog.LevelError, "vitess", fmt.Sprint(a...)) }
	vtlog.Errorf = func(f string, a ...any) { l.Line(slog.LevelError, "vitess", fmt.Sprintf(f, a...)) }
	logrus.SetOutput(io.Discard)
	logrus.AddHook(hook{l})
	log.SetFlags(0)
	log.SetPrefix("")
	log.SetOutput(writer{l})
	return l
}

// hook forwards logrus entries.
type hook struct{ l *Limiter }

func (hook) Levels() []logrus.Level { return logrus.AllLevels }

func (h hook) Fire(e *logrus.Entry) error {
	lvl := slog.LevelInfo
	switch {
	case e.Level <= logrus.ErrorLevel:
		lvl = slog.LevelError
	case e.Level == logrus.WarnLevel:
		lvl = slog.LevelWarn
	case e.Level >= logrus.DebugLevel:
		lvl = slog.LevelDebug
	}
	msg := e.Message
	if len(e.Data) > 0 {
		var b strings.Builder
		b.WriteString(msg)
		for k, v := range e.Data {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		msg = b.String()
	}
	h.l.Line(lvl, "go-mysql-server", msg)
	return nil
}

// writer takes Go's standard log lines.
type writer struct{ l *Limiter }

func (w writer) Write(p []byte) (int, error) {
	w.l.Line(slog.LevelWarn, "log", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Line logs msg, printed by source at level, unless a line of the same
// cause was logged less than an interval ago: then it is counted, and
// the count goes with the next line of that cause (or Flush).
func (l *Limiter) Line(level slog.Level, source, msg string) {
	if !l.log.Enabled(context.Background(), level) {
		return
	}
	msg, attrs := condense(msg)
	if len(msg) > maxLineBytes {
		msg = msg[:maxLineBytes] + "…"
	}
	key := source + "\x00" + causeOf(msg)
	now := l.now()
	l.mu.Lock()
	c, ok := l.mu.causes[key]
	if !ok {
		if len(l.mu.causes) >= maxCauses {
			key = "\x00other"
			c, ok = l.mu.causes[key]
		}
		if !ok {
			c = &cause{level: level, source: source}
			l.mu.causes[key] = c
		}
	}
	if !c.last.IsZero() && now.Sub(c.last) < l.interval {
		c.held++
		c.msg, c.attrs, c.level = msg, attrs, max(c.level, level)
		l.mu.Unlock()
		return
	}
	held := c.held
	c.last, c.held, c.msg, c.attrs = now, 0, "", nil
	l.mu.Unlock()
	args := []any{"source", source}
	args = append(args, attrs...)
	if held > 0 {
		args = append(args, "held_back", held, "over", l.interval.String())
	}
	l.log.Log(context.Background(), level, msg, args...)
}

// Flush logs, for each cause with lines held back and quiet for an
// interval, the last of them with their count.
func (l *Limiter) Flush() {
	now := l.now()
	type report struct {
		level       slog.Level
		source, msg string
		attrs       []any
		held        int
	}
	var out []report
	l.mu.Lock()
	for key, c := range l.mu.causes {
		if now.Sub(c.last) < l.interval {
			continue
		}
		if c.held > 0 {
			out = append(out, report{c.level, c.source, c.msg, c.attrs, c.held})
			c.held, c.msg, c.attrs, c.last = 0, "", nil, now
			continue
		}
		delete(l.mu.causes, key) // quiet for an interval: forgotten
	}
	l.mu.Unlock()
	for _, r := range out {
		args := append([]any{"source", r.source}, r.attrs...)
		args = append(args, "held_back", r.held, "over", l.interval.String(), "last_of_them", true)
		l.log.Log(context.Background(), r.level, r.msg, args...)
	}
}

// Run calls Flush every interval until ctx ends.
func (l *Limiter) Run(ctx context.Context) {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.Flush()
			return
		case <-t.C:
			l.Flush()
		}
	}
}

// numbers are what varies between lines of one cause: connection ids,
// ports, offsets, addresses.
var numbers = regexp.MustCompile(`[0-9]+`)

// maxCauseBytes bounds the text that names a cause.
const maxCauseBytes = 80

// causeOf is a line's cause: its text up to what it quotes (a client's
// query or bytes, after a quote or a bracket), at most maxCauseBytes, with
// numbers left out.
func causeOf(msg string) string {
	if i := strings.IndexAny(msg, "'\"[`"); i >= 0 {
		msg = msg[:i]
	}
	msg = numbers.ReplaceAllString(msg, "#")
	if len(msg) > maxCauseBytes {
		msg = msg[:maxCauseBytes]
	}
	return msg
}

// panicPrefix starts the line of a panic vitess' listener caught:
// "mysql_server caught panic:\n<value>\n<stack>".
const panicPrefix = "mysql_server caught panic:"

// maxFrames is how many frames of a caught panic's stack its line keeps.
const maxFrames = 4

// condense makes a multi-line message one line: a caught panic becomes
// its value and its innermost frames outside the runtime (as attributes);
// other messages have their line breaks replaced.
func condense(msg string) (string, []any) {
	if !strings.HasPrefix(msg, panicPrefix) {
		return strings.ReplaceAll(strings.TrimSpace(msg), "\n", " | "), nil
	}
	lines := strings.Split(strings.TrimPrefix(msg, panicPrefix), "\n")
	var value string
	var frames []string
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" {
			continue
		}
		if value == "" {
			value = line
			continue
		}
		// Stack lines come in pairs: "file:line (pc)" then "\tfunc: source".
		if !strings.Contains(line, ".go:") || i+1 >= len(lines) {
			continue
		}
		file := line
		if j := strings.Index(file, " ("); j > 0 {
			file = file[:j]
		}
		fn, _, _ := strings.Cut(strings.TrimSpace(lines[i+1]), ":")
		i++
		if strings.Contains(file, "/src/runtime/") {
			continue
		}
		if k := strings.LastIndex(file, "/"); k >= 0 {
			file = file[k+1:]
		}
		if k := strings.LastIndex(fn, "."); k >= 0 {
			fn = fn[k+1:]
		}
		frames = append(frames, fn+" "+file)
		if len(frames) == maxFrames {
			break
		}
	}
	return "caught panic in a client connection (closed): " + value, []any{"at", strings.Join(frames, " < ")}
}
