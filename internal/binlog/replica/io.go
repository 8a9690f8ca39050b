package replica

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// group is one transaction of the source as the IO thread received it
// whole: its GTID event, then its table maps, row and query events, up to
// its XID or COMMIT (a standalone group is its one QUERY).
type group struct {
	gtid       gtid
	standalone bool
	ddl        bool
	events     []*replication.BinlogEvent
	file       string // the source's binary log after the group
	endPos     uint64
	timestamp  uint32
}

// tapEvents bounds the events between the protocol library's reader and
// the IO thread's grouping.
const tapEvents = 1024

// eventTap receives the events from the protocol library's reader
// goroutine. A GTID event is copied there: the library keeps a pointer to
// the first GTID event of each domain and server in its GTID set and
// moves it forward with the groups that follow, so the event read later
// could show a later group's GTID.
type eventTap struct {
	ctx context.Context
	ch  chan *replication.BinlogEvent
}

func (t eventTap) HandleEvent(e *replication.BinlogEvent) error {
	if g, ok := e.Event.(*replication.MariadbGTIDEvent); ok {
		cp := *g
		e = &replication.BinlogEvent{RawData: e.RawData, Header: e.Header, Event: &cp}
	}
	select {
	case t.ch <- e:
		return nil
	case <-t.ctx.Done():
		return t.ctx.Err()
	}
}

// connectTimeout bounds a connection attempt to the source.
const connectTimeout = 30 * time.Second

// runIO is the IO thread: connect, check the server ids, stream, queue
// whole groups; reconnect every MASTER_CONNECT_RETRY seconds after a lost
// connection; stop on a fatal error (1236, 1593, a corrupt event).
func (r *Replica) runIO(ctx context.Context, self *thread) {
	defer r.exited(self)
	for {
		r.setState(true, "Connecting to master")
		err := r.stream(ctx)
		r.mu.Lock()
		r.mu.runningIO = false
		retry := time.Duration(r.mu.cfg.ConnectRetry) * time.Second
		r.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		var fatal *fatalError
		if errors.As(err, &fatal) {
			r.setIOError(fatal.e)
			return
		}
		r.setIOError(asError(err))
		r.setState(true, "Waiting to reconnect after a failed master event read")
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}

// fatalError stops the IO thread (no new attempt).
type fatalError struct{ e *Error }

func (f *fatalError) Error() string { return f.e.Error() }

func fatal(code uint16, format string, args ...any) error {
	return &fatalError{errorf(code, "HY000", format, args...)}
}

// stream is one connection to the source, until it is lost or ctx ends.
func (r *Replica) stream(ctx context.Context) error {
	r.mu.Lock()
	cfg := r.mu.cfg
	from := r.mu.received.clone()
	file, pos := r.mu.recvFile, r.mu.recvPos
	r.mu.Unlock()
	if cfg.UseGTID == useNo && file == "" {
		file, pos = cfg.LogFile, cfg.LogPos
	}
	if cfg.UseGTID == useCurrentPos {
		from = mergeOwn(from, r.target.BinlogPos(), r.target.ServerID())
	}
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return &fatalError{asError(err)}
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	connErr := func(err error) error {
		return errorf(codeConnect, "HY000", "error connecting to master '%s@%s' - retry-time: %d  maximum-retries: 0  message: %s", cfg.User, addr, cfg.ConnectRetry, err.Error())
	}
	// The server ids first (1593), on a connection of its own.
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	conn, err := client.ConnectWithContext(dctx, addr, cfg.User, cfg.Password, "", connectTimeout, func(c *client.Conn) error {
		if tlsCfg != nil {
			c.SetTLSConfig(tlsCfg)
		}
		return nil
	})
	cancel()
	if err != nil {
		var me *gomysql.MyError
		if errors.As(err, &me) {
			return errorf(me.Code, me.State, "error connecting to master '%s@%s' - retry-time: %d  maximum-retries: 0  message: %s", cfg.User, addr, cfg.ConnectRetry, me.Message)
		}
		return connErr(err)
	}
	res, err := conn.Execute("SELECT @@server_id")
	if err != nil {
		conn.Close()
		return connErr(err)
	}
	sid, _ := res.GetUint(0, 0)
	conn.Close()
	own := r.target.ServerID()
	if uint32(sid) == own {
		return fatal(codeSameServerID, "Fatal error: The slave I/O thread stops because master and slave have equal MariaDB server ids; these ids must be different for replication to work (or the --replicate-same-server-id option must be used on slave but this does not always make sense; please check the manual before using it).")
	}
	r.mu.Lock()
	r.mu.sourceID = uint32(sid)
	r.mu.Unlock()

	scfg := replication.BinlogSyncerConfig{
		ServerID:                own,
		Flavor:                  gomysql.MariaDBFlavor,
		Host:                    cfg.Host,
		Port:                    uint16(cfg.Port),
		User:                    cfg.User,
		Password:                cfg.Password,
		TLSConfig:               tlsCfg,
		TimestampStringLocation: time.UTC,
		HeartbeatPeriod:         time.Duration(cfg.HeartbeatPeriod * float64(time.Second)),
		DisableRetrySync:        true,
		MaxReconnectAttempts:    1,
		VerifyChecksum:          true,
		Logger:                  slog.New(quietHandler{Handler: r.log.Handler(), limit: &r.libLog}),
		Dialer: func(ctx context.Context, network, address string) (net.Conn, error) {
			d := net.Dialer{Timeout: connectTimeout}
			return d.DialContext(ctx, network, address)
		},
	}
	if cfg.HeartbeatPeriod > 0 {
		// A source silent for two periods is gone.
		scfg.ReadTimeout = 2*scfg.HeartbeatPeriod + 5*time.Second
	}
	sctx, stopTap := context.WithCancel(ctx)
	defer stopTap()
	tap := eventTap{ctx: sctx, ch: make(chan *replication.BinlogEvent, tapEvents)}
	scfg.SynchronousEventHandler = tap
	syncer := replication.NewBinlogSyncer(scfg)
	defer syncer.Close()
	var streamer *replication.BinlogStreamer
	if cfg.UseGTID == useNo {
		streamer, err = syncer.StartSync(gomysql.Position{Name: file, Pos: uint32(pos)})
	} else {
		var set gomysql.GTIDSet
		set, err = gomysql.ParseMariadbGTIDSet(from.String())
		if err == nil {
			streamer, err = syncer.StartSyncGTID(set)
		}
	}
	if err != nil {
		return r.streamError(err, connErr)
	}
	r.mu.Lock()
	r.mu.runningIO = true
	r.mu.ioErr = lastError{}
	r.mu.Unlock()
	r.setState(true, "Waiting for master to send event")
	// With a synchronous handler the streamer carries only the stream's
	// error.
	streamErr := make(chan error, 1)
	go func() {
		_, err := streamer.GetEvent(sctx)
		streamErr <- err
	}()
	var cur *group
	for {
		var ev *replication.BinlogEvent
		select {
		case ev = <-tap.ch:
		case err := <-streamErr:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return r.streamError(err, connErr)
		case <-ctx.Done():
			return ctx.Err()
		}
		h := ev.Header
		if rot, ok := ev.Event.(*replication.RotateEvent); ok {
			r.mu.Lock()
			r.mu.readFile, r.mu.readPos = string(rot.NextLogName), rot.Position
			r.mu.Unlock()
			continue
		}
		if h.LogPos > 0 {
			r.mu.Lock()
			r.mu.readPos = uint64(h.LogPos)
			r.mu.Unlock()
		}
		if h.EventType == replication.HEARTBEAT_EVENT {
			r.mu.Lock()
			r.mu.heartbeats++
			r.mu.Unlock()
			continue
		}
		var end bool
		switch e := ev.Event.(type) {
		case *replication.MariadbGTIDEvent:
			// A group cut by a lost connection is dropped: it comes
			// again whole after the reconnection.
			cur = &group{gtid: gtid{Domain: e.GTID.DomainID, Server: e.GTID.ServerID, Seq: e.GTID.SequenceNumber},
				standalone: e.IsStandalone(), ddl: e.IsDDL(), timestamp: h.Timestamp}
		case *replication.TableMapEvent, *replication.RowsEvent:
			if cur == nil {
				return fatal(codeRelayWrite, "Relay log write failure: could not queue event from master: a %s event outside a transaction at %s:%d", h.EventType, r.readFileName(), h.LogPos)
			}
			cur.events = append(cur.events, ev)
		case *replication.QueryEvent:
			if cur == nil {
				return fatal(codeRelayWrite, "Relay log write failure: could not queue event from master: a QUERY event outside a transaction at %s:%d", r.readFileName(), h.LogPos)
			}
			q := strings.TrimSpace(string(e.Query))
			switch {
			case strings.EqualFold(q, "BEGIN"):
			case strings.EqualFold(q, "COMMIT"):
				end = true
			default:
				cur.events = append(cur.events, ev)
				end = cur.standalone
			}
		case *replication.XIDEvent:
			end = cur != nil
		}
		if end && cur != nil {
			r.mu.Lock()
			cur.file, cur.endPos = r.mu.readFile, uint64(h.LogPos)
			q := r.mu.queue
			r.mu.Unlock()
			select {
			case q <- cur:
			case <-ctx.Done():
				return ctx.Err()
			}
			r.mu.Lock()
			r.mu.received = r.mu.received.with(cur.gtid)
			r.mu.recvFile, r.mu.recvPos = cur.file, cur.endPos
			r.mu.Unlock()
			cur = nil
		}
	}
}

func (r *Replica) readFileName() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.readFile
}

// streamError classes an error of the stream: the source's 1236, a corrupt
// or truncated event and a refused account are fatal; a lost connection
// is retried.
func (r *Replica) streamError(err error, connErr func(error) error) error {
	var me *gomysql.MyError
	switch {
	case errors.As(err, &me) && me.Code == codeSourceFatal:
		return fatal(codeSourceFatal, "Got fatal error 1236 from master when reading data from binary log: '%s'", me.Message)
	case errors.As(err, &me):
		return errorf(me.Code, me.State, "error reading packet from master: %s", me.Message)
	case errors.Is(err, replication.ErrChecksumMismatch):
		return fatal(codeChecksum, "Replication event checksum verification failed while reading from network.")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), isNetError(err):
		return connErr(err)
	case strings.Contains(err.Error(), "connection") || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "broken pipe"):
		return connErr(err)
	}
	return fatal(codeRelayWrite, "Relay log write failure: could not queue event from master: %s", err.Error())
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// tlsConfig is MASTER_SSL's: the CA verifies the source's certificate
// when MASTER_SSL_VERIFY_SERVER_CERT = 1 (its name checked against
// MASTER_HOST); MASTER_SSL_CERT / KEY are the client's certificate.
func tlsConfig(cfg Config) (*tls.Config, error) {
	if !cfg.SSL {
		return nil, nil
	}
	tc := &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12}
	if cfg.SSLCA != "" {
		pem, err := os.ReadFile(cfg.SSLCA)
		if err != nil {
			return nil, errorf(2026, "HY000", "SSL connection error: cannot read MASTER_SSL_CA %s: %v", cfg.SSLCA, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errorf(2026, "HY000", "SSL connection error: no certificate in MASTER_SSL_CA %s", cfg.SSLCA)
		}
		tc.RootCAs = pool
	}
	if cfg.SSLCert != "" || cfg.SSLKey != "" {
		cert, err := tls.LoadX509KeyPair(cfg.SSLCert, cfg.SSLKey)
		if err != nil {
			return nil, errorf(2026, "HY000", "SSL connection error: MASTER_SSL_CERT / MASTER_SSL_KEY: %v", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if !cfg.SSLVerify {
		// Encrypted, the source's certificate not checked (MariaDB's
		// MASTER_SSL_VERIFY_SERVER_CERT = 0).
		tc.InsecureSkipVerify = true
	} else if cfg.SSLCA == "" {
		return nil, errorf(2026, "HY000", "SSL connection error: MASTER_SSL_VERIFY_SERVER_CERT = 1 needs MASTER_SSL_CA")
	}
	return tc, nil
}

// quietHandler passes the protocol library's warnings and errors to the
// server's log, prefixed and rate-limited, and drops its chatter (Info and
// below).
type quietHandler struct {
	slog.Handler
	limit *logLimit
}

// logBurst messages of the protocol library are logged per logWindow at
// most: a source that refuses every attempt must not fill the log.
const (
	logBurst  = 20
	logWindow = time.Minute
)

// logLimit counts the messages of the current window.
type logLimit struct {
	mu      sync.Mutex
	start   time.Time
	n       int
	dropped int
}

// allow reports whether one more message may be logged now, and how many
// were dropped since the last one logged.
func (l *logLimit) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= logWindow {
		l.start, l.n = now, 0
	}
	if l.n >= logBurst {
		l.dropped++
		return false, 0
	}
	l.n++
	d := l.dropped
	l.dropped = 0
	return true, d
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}

func (q quietHandler) Handle(ctx context.Context, rec slog.Record) error {
	ok, dropped := q.limit.allow(rec.Time)
	if !ok {
		return nil
	}
	rec.Message = fmt.Sprintf("replica: go-mysql: %s", rec.Message)
	if dropped > 0 {
		rec.AddAttrs(slog.Int("dropped_before", dropped))
	}
	return q.Handler.Handle(ctx, rec)
}
