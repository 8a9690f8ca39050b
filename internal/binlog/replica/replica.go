package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// queueGroups bounds the in-memory queue between the IO and SQL threads
// (there is no relay log): the IO thread waits when the SQL thread is this
// many groups behind.
const queueGroups = 1024

// Options configure a Replica.
type Options struct {
	// Dir is the server's state folder (replica-source.json).
	Dir    string
	Target Target
	Logger *slog.Logger
}

// Replica is Miraj's replica of a binary log source: its configuration,
// its IO and SQL threads, and their status.
type Replica struct {
	dir    string
	target Target
	log    *slog.Logger
	// libLog rate-limits what the protocol library logs, across
	// connections.
	libLog logLimit

	mu struct {
		sync.Mutex
		base       context.Context // Open's: the threads end with it
		cfg        Config
		configured bool
		io, sql    *thread
		ioState    string
		sqlState   string
		ioErr      lastError
		sqlErr     lastError
		// applied is gtid_slave_pos: the groups committed.
		// Invariant: applied only moves forward, under mu, after the
		// group's commit.
		applied     position
		appliedFile string
		appliedPos  uint64
		counter     uint64 // of the last record committed
		// received is the position after the last whole group queued;
		// readFile / readPos the source's position of the last event.
		received position
		readFile string
		readPos  uint64
		// recvFile / recvPos are the source's position after the last
		// whole group queued: where a new connection starts in
		// position mode (a group cut by the lost connection is dropped
		// and read again).
		recvFile string
		recvPos  uint64
		// heartbeats counts the source's heartbeat events.
		heartbeats uint64
		// queue carries whole groups from the IO to the SQL thread. It
		// is made anew when both threads start from stopped.
		queue chan *group
		// pending is the group the SQL thread stopped at (an error):
		// applied again, or skipped, at its next start.
		pending *group
		// done are the databases that already hold the next group's
		// part (a group cut by a crash; record.go).
		done        map[string]bool
		skipCounter uint64
		skipErrors  map[uint16]bool
		skipAll     bool
		sourceID    uint32
		lastEventTS uint32        // the source's timestamp of the group being applied
		changed     chan struct{} // closed and remade when applied moves
		runningIO   bool          // connected and streaming
	}
}

// lastError is a thread's last error, as SHOW SLAVE STATUS shows it.
type lastError struct {
	code uint16
	msg  string
	at   time.Time
}

// thread is one running IO or SQL thread.
type thread struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New makes a replica; it starts nothing (Open does).
func New(o Options) *Replica {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	r := &Replica{dir: o.Dir, target: o.Target, log: o.Logger}
	r.mu.cfg = defaultConfig()
	r.mu.applied = position{}
	r.mu.changed = make(chan struct{})
	r.mu.ioState, r.mu.sqlState = "", ""
	return r
}

// Open loads the configuration and the position and starts the threads
// that ran when the server stopped; they run until ctx ends (Wait). It
// returns at once: statements may use the replica from then on.
func (r *Replica) Open(ctx context.Context) error {
	cfg, ok, err := loadConfig(r.dir)
	if err != nil {
		return err
	}
	rp, err := resume(r.target.Records(), r.target.HasDatabase)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.base = ctx
	r.mu.cfg, r.mu.configured = cfg, ok
	r.mu.applied, r.mu.counter, r.mu.done = rp.pos, rp.counter, rp.done
	r.mu.appliedFile, r.mu.appliedPos = rp.file, rp.filePos
	if ok && (cfg.IORunning || cfg.SQLRunning) {
		r.log.Info("replica: resuming", "source", cfg.Host+":"+strconv.Itoa(cfg.Port), "gtid_slave_pos", rp.pos.String())
		r.startLocked(cfg.IORunning, cfg.SQLRunning)
	}
	return nil
}

// Wait returns once Open's context has ended and the threads have
// stopped (their running state is kept for the next start).
func (r *Replica) Wait() {
	r.mu.Lock()
	base := r.mu.base
	r.mu.Unlock()
	if base == nil {
		return
	}
	<-base.Done()
	r.mu.Lock()
	io, sq := r.mu.io, r.mu.sql
	r.mu.Unlock()
	for _, t := range []*thread{io, sq} {
		if t != nil {
			t.cancel()
			<-t.done
		}
	}
}

// Change is CHANGE MASTER TO: 1198 while a thread runs. It returns the
// warnings of options kept with no effect.
func (r *Replica) Change(st Statement) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.io != nil || r.mu.sql != nil {
		return nil, errRunning()
	}
	cfg, warnings, err := applyOptions(r.mu.cfg, st.options)
	if err != nil {
		return nil, err
	}
	if !cfg.configured() {
		return nil, errNotConfigured()
	}
	cfg.IORunning, cfg.SQLRunning = false, false
	if err := saveConfig(r.dir, cfg); err != nil {
		return nil, err
	}
	if cfg.UseGTID == useNo && (cfg.LogFile != r.mu.cfg.LogFile || cfg.LogPos != r.mu.cfg.LogPos) {
		r.mu.appliedFile, r.mu.appliedPos = cfg.LogFile, cfg.LogPos
	}
	r.mu.cfg, r.mu.configured = cfg, true
	r.mu.pending = nil
	r.mu.queue = nil
	return warnings, nil
}

// Start is START SLAVE [IO_THREAD | SQL_THREAD]: 1200 without CHANGE
// MASTER. A thread already running is left as it is (a note, as MariaDB's).
func (r *Replica) Start(st Statement) (note string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.mu.configured {
		return "", errNotConfigured()
	}
	if r.mu.base == nil {
		return "", errorf(codeUnknownError, "HY000", "The replica is not running yet")
	}
	if (!st.IO || r.mu.io != nil) && (!st.SQL || r.mu.sql != nil) {
		return "Slave is already running", nil
	}
	r.startLocked(st.IO, st.SQL)
	return "", r.saveRunningLocked()
}

// startLocked starts the threads named that are not running.
func (r *Replica) startLocked(io, sql bool) {
	if r.mu.io == nil && r.mu.sql == nil {
		// From stopped: the queue restarts at what is applied.
		r.mu.queue = make(chan *group, queueGroups)
		r.mu.received = r.mu.applied.clone()
		r.mu.readFile, r.mu.readPos = r.mu.appliedFile, r.mu.appliedPos
		r.mu.recvFile, r.mu.recvPos = r.mu.appliedFile, r.mu.appliedPos
		r.mu.pending = nil
	}
	if r.mu.queue == nil {
		r.mu.queue = make(chan *group, queueGroups)
	}
	if io && r.mu.io == nil {
		r.mu.ioErr = lastError{}
		r.mu.io = r.spawn(true, r.runIO)
	}
	if sql && r.mu.sql == nil {
		r.mu.sqlErr = lastError{}
		r.mu.sql = r.spawn(false, r.runSQL)
	}
}

// spawn runs fn, the IO thread or the SQL thread, in a goroutine the
// returned thread tracks.
func (r *Replica) spawn(io bool, fn func(ctx context.Context, self *thread)) *thread {
	ctx, cancel := context.WithCancel(r.mu.base)
	t := &thread{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		defer func() {
			if p := recover(); p != nil {
				// A bug: the thread stops with the panic in its error
				// and the log, the server goes on.
				e := errorf(codeUnknownError, "HY000", "internal error in the replica: %v", p)
				r.log.Error("replica: thread panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				r.mu.Lock()
				if io {
					r.mu.ioErr = lastError{code: e.Code, msg: e.Message, at: time.Now()}
				} else {
					r.mu.sqlErr = lastError{code: e.Code, msg: e.Message, at: time.Now()}
				}
				r.mu.Unlock()
				r.exited(t)
			}
		}()
		fn(ctx, t)
	}()
	return t
}

// exited clears the thread when it ends on its own (an error): its
// running state is saved as off.
func (r *Replica) exited(t *thread) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch t {
	case r.mu.io:
		r.mu.io = nil
		r.mu.ioState = ""
	case r.mu.sql:
		r.mu.sql = nil
		r.mu.sqlState = ""
	default:
		return
	}
	if r.mu.base.Err() == nil {
		if err := r.saveRunningLocked(); err != nil {
			r.log.Error("replica: save configuration", "err", err)
		}
	}
}

func (r *Replica) saveRunningLocked() error {
	r.mu.cfg.IORunning, r.mu.cfg.SQLRunning = r.mu.io != nil, r.mu.sql != nil
	return saveConfig(r.dir, r.mu.cfg)
}

// Stop is STOP SLAVE [IO_THREAD | SQL_THREAD]: the SQL thread finishes or
// abandons (rolls back) the group it applies, never half of one.
func (r *Replica) Stop(st Statement) (note string, err error) {
	r.mu.Lock()
	var stopping []*thread
	if st.IO && r.mu.io != nil {
		stopping = append(stopping, r.mu.io)
		r.mu.io = nil
	}
	if st.SQL && r.mu.sql != nil {
		stopping = append(stopping, r.mu.sql)
		r.mu.sql = nil
	}
	if len(stopping) == 0 {
		r.mu.Unlock()
		return "Slave is already stopped", nil
	}
	err = r.saveRunningLocked()
	r.mu.Unlock()
	for _, t := range stopping {
		t.cancel()
		<-t.done
	}
	r.mu.Lock()
	if st.IO {
		r.mu.ioState = ""
		r.mu.runningIO = false
	}
	if st.SQL {
		r.mu.sqlState = ""
	}
	r.mu.Unlock()
	return "", err
}

// Reset is RESET SLAVE [ALL]: the threads must be stopped (1198); the
// queue and the source's file position are forgotten (gtid_slave_pos is
// kept, as MariaDB's); ALL erases the configuration.
func (r *Replica) Reset(st Statement) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.io != nil || r.mu.sql != nil {
		return errRunning()
	}
	r.mu.queue, r.mu.pending = nil, nil
	r.mu.ioErr, r.mu.sqlErr = lastError{}, lastError{}
	r.mu.readFile, r.mu.readPos = "", 0
	r.mu.appliedFile, r.mu.appliedPos = "", 0
	if st.All {
		r.mu.cfg, r.mu.configured = defaultConfig(), false
		return removeConfig(r.dir)
	}
	if r.mu.configured {
		r.mu.cfg.LogFile, r.mu.cfg.LogPos = "", 0
		return saveConfig(r.dir, r.mu.cfg)
	}
	return nil
}

// GTIDSlavePos is @@gtid_slave_pos.
func (r *Replica) GTIDSlavePos() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.applied.String()
}

// SetGTIDSlavePos is SET GLOBAL gtid_slave_pos: only while both threads
// are stopped (1198). The position is committed in PositionDatabase.
func (r *Replica) SetGTIDSlavePos(ctx context.Context, s string) error {
	p, err := parsePosition(s)
	if err != nil {
		return errorf(codeIncorrectGTIDState, "HY000", "Could not parse GTID list: %s", err.Error())
	}
	r.mu.Lock()
	running := r.mu.io != nil || r.mu.sql != nil
	counter, prev := r.mu.counter, r.mu.applied.String()
	r.mu.Unlock()
	if running {
		return errRunning()
	}
	// Not under mu: Begin may wait for a global read lock, and SHOW SLAVE
	// STATUS must answer meanwhile. A START SLAVE in between is refused
	// below, before anything moves.
	txn, err := r.target.Begin(ctx, nil)
	if err != nil {
		return err
	}
	rec := record{Counter: counter + 1, Pos: p.String(), Prev: prev, DBs: []string{PositionDatabase}}
	if err := r.writePositionRows(ctx, txn, nil, p); err != nil {
		txn.Rollback()
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.io != nil || r.mu.sql != nil || r.mu.counter != counter {
		txn.Rollback()
		return errRunning()
	}
	if err := txn.Commit(ctx, rec.DBs, rec.encode()); err != nil {
		return err
	}
	r.mu.counter = rec.Counter
	r.advanceLocked(p, r.mu.appliedFile, r.mu.appliedPos)
	r.mu.queue, r.mu.pending, r.mu.done = nil, nil, nil
	return nil
}

// writePositionRows writes p into miraj.gtid_slave_pos, one row per
// domain (MariaDB's columns). prev, when known, is the position the table
// holds: through a RowWriter, only the rows of the domains that moved are
// replaced; otherwise, or when a row of prev is not there, the table is
// emptied and written again by statements.
func (r *Replica) writePositionRows(ctx context.Context, txn Txn, prev, p position) error {
	if w, ok := txn.(RowWriter); ok && len(prev) > 0 {
		var gone, added [][]any
		for d, g := range p {
			if old, ok := prev[d]; ok && old == g {
				continue
			} else if ok {
				gone = append(gone, positionRow(old))
			}
			added = append(added, positionRow(g))
		}
		for d, old := range prev {
			if _, ok := p[d]; !ok {
				gone = append(gone, positionRow(old))
			}
		}
		handled, missing, err := true, -1, error(nil)
		if len(gone) > 0 {
			handled, missing, err = w.WriteRows(ctx, PositionDatabase, "gtid_slave_pos", RowsDelete, gone)
		}
		if err == nil && handled && missing < 0 && len(added) > 0 {
			handled, missing, err = w.WriteRows(ctx, PositionDatabase, "gtid_slave_pos", RowsInsert, added)
		}
		if err == nil && handled && missing < 0 {
			return nil
		}
		// A row was not as prev says (the rows deleted stay deleted:
		// the statements below write the whole table again).
	}
	if _, err := txn.Exec(ctx, PositionDatabase, "", "DELETE FROM `"+PositionDatabase+"`.`gtid_slave_pos`"); err != nil {
		return err
	}
	doms := make([]uint32, 0, len(p))
	for d := range p {
		doms = append(doms, d)
	}
	sort.Slice(doms, func(i, j int) bool { return doms[i] < doms[j] })
	if len(doms) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO `" + PositionDatabase + "`.`gtid_slave_pos` (domain_id, sub_id, server_id, seq_no) VALUES ")
	for i, d := range doms {
		if i > 0 {
			b.WriteByte(',')
		}
		g := p[d]
		fmt.Fprintf(&b, "(%d,%d,%d,%d)", g.Domain, g.Seq, g.Server, g.Seq)
	}
	_, err := txn.Exec(ctx, PositionDatabase, "", b.String())
	return err
}

// positionRow is g's row in miraj.gtid_slave_pos.
func positionRow(g gtid) []any {
	return []any{uint64(g.Domain), g.Seq, uint64(g.Server), g.Seq}
}

// PositionTableDDL creates miraj.gtid_slave_pos (MariaDB's
// mysql.gtid_slave_pos), which the SQL layer runs before the replica's
// first group.
var PositionTableDDL = []string{
	"CREATE DATABASE IF NOT EXISTS `" + PositionDatabase + "`",
	"CREATE TABLE IF NOT EXISTS `" + PositionDatabase + "`.`gtid_slave_pos` (domain_id INT UNSIGNED NOT NULL, sub_id BIGINT UNSIGNED NOT NULL, server_id INT UNSIGNED NOT NULL, seq_no BIGINT UNSIGNED NOT NULL, PRIMARY KEY (domain_id, sub_id))",
}

// advanceLocked moves the applied position and wakes the waiters.
func (r *Replica) advanceLocked(p position, file string, pos uint64) {
	r.mu.applied, r.mu.appliedFile, r.mu.appliedPos = p, file, pos
	close(r.mu.changed)
	r.mu.changed = make(chan struct{})
}

// SetSkipCounter is SET GLOBAL sql_slave_skip_counter: the next n groups
// the SQL thread meets are skipped (their position recorded).
func (r *Replica) SetSkipCounter(n uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.skipCounter = n
}

// SkipCounter is @@sql_slave_skip_counter.
func (r *Replica) SkipCounter() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.skipCounter
}

// SetSkipErrors is slave_skip_errors: a comma-separated list of error
// codes, ALL, or OFF. A row or query event failing with one of them is
// ignored and its group goes on.
func (r *Replica) SetSkipErrors(s string) error {
	codes := map[uint16]bool{}
	all := false
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "" || strings.EqualFold(f, "OFF"):
		case strings.EqualFold(f, "ALL"):
			all = true
		default:
			n, err := strconv.ParseUint(f, 10, 16)
			if err != nil {
				return errorf(1231, "42000", "Variable 'slave_skip_errors' can't be set to the value of '%s'", s)
			}
			codes[uint16(n)] = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.skipErrors, r.mu.skipAll = codes, all
	return nil
}

// SkipErrors is @@slave_skip_errors as MariaDB shows it.
func (r *Replica) SkipErrors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.skipAll {
		return "ALL"
	}
	if len(r.mu.skipErrors) == 0 {
		return "OFF"
	}
	var codes []int
	for c := range r.mu.skipErrors {
		codes = append(codes, int(c))
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// WaitGTID is MASTER_GTID_WAIT(pos, timeout): 0 once gtid_slave_pos
// reaches pos, -1 at the timeout (negative: none).
func (r *Replica) WaitGTID(ctx context.Context, s string, timeout time.Duration) (int, error) {
	want, err := parsePosition(s)
	if err != nil {
		return 0, errorf(codeIncorrectGTIDState, "HY000", "Could not parse GTID list: %s", err.Error())
	}
	return r.wait(ctx, timeout, func() bool { return r.mu.applied.reached(want) })
}

// WaitPos is MASTER_POS_WAIT(file, pos, timeout): the number of events
// waited is not counted (0 once reached), -1 at the timeout, NULL (ok
// false) when the replica is not configured.
func (r *Replica) WaitPos(ctx context.Context, file string, pos uint64, timeout time.Duration) (int, bool, error) {
	r.mu.Lock()
	configured := r.mu.configured
	r.mu.Unlock()
	if !configured {
		return 0, false, nil
	}
	n, err := r.wait(ctx, timeout, func() bool {
		f := r.mu.appliedFile
		return f > file || f == file && r.mu.appliedPos >= pos
	})
	return n, true, err
}

func (r *Replica) wait(ctx context.Context, timeout time.Duration, reached func() bool) (int, error) {
	var deadline <-chan time.Time
	if timeout >= 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	for {
		r.mu.Lock()
		ok, ch := reached(), r.mu.changed
		r.mu.Unlock()
		if ok {
			return 0, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return -1, nil
		case <-ctx.Done():
			return 0, errorf(1317, "70100", "Query execution was interrupted")
		}
	}
}

// setIOError records the IO thread's error and logs it.
func (r *Replica) setIOError(e *Error) {
	r.log.Error("replica: IO thread", "errno", e.Code, "err", e.Message)
	r.mu.Lock()
	r.mu.ioErr = lastError{code: e.Code, msg: e.Message, at: time.Now()}
	r.mu.Unlock()
}

func (r *Replica) setSQLError(e *Error) {
	r.log.Error("replica: SQL thread stopped", "errno", e.Code, "err", e.Message)
	r.mu.Lock()
	r.mu.sqlErr = lastError{code: e.Code, msg: e.Message, at: time.Now()}
	r.mu.Unlock()
}

func (r *Replica) setState(io bool, s string) {
	r.mu.Lock()
	if io {
		r.mu.ioState = s
	} else {
		r.mu.sqlState = s
	}
	r.mu.Unlock()
}

// asError gives err a MySQL code: an *Error as it is, anything else 1105.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return errorf(codeUnknownError, "HY000", "%s", err.Error())
}
