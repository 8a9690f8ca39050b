package sqlserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/sirupsen/logrus"
)

// processList is the server's list of connections and of the statement
// each one runs: SHOW PROCESSLIST and information_schema.PROCESSLIST read
// it, KILL cancels what it names. go-mysql-server's list keeps every
// connection under one server-wide lock, which each statement took twice
// (to begin and to end) with a progress map and a read of long_query_time.
// Here each connection's entry has a lock of its own: a statement takes the
// list's lock only to read, to find its connection; adding or removing a
// connection, and a planner statement's process id (its tables' progress
// is reported by that id), take it to write.
type processList struct {
	mu    sync.RWMutex
	procs map[uint32]*process
	byPid map[uint64]statement // planner statements running
	// onKill is told of each KILL QUERY first: a statement waiting for
	// the global read lock is not in the list yet (readlock.go).
	onKill func(connID uint32)
	// waits holds the state of the connections whose statement waits for
	// a table lock or the global read lock before it begins (waitFor).
	waits map[uint32]string
}

// process is one connection's entry.
type process struct {
	mu sync.Mutex
	p  sql.Process
}

var _ sql.ProcessList = (*processList)(nil)

func newProcessList() *processList {
	return &processList{procs: make(map[uint32]*process), byPid: make(map[uint64]statement), waits: make(map[uint32]string)}
}

// waitFor shows connection connID's statement query as waiting, in state
// (MySQL's words), until the returned func is called: a statement that a
// table lock or the global read lock holds back has not begun yet.
func (pl *processList) waitFor(connID uint32, query, state string) func() {
	return pl.showAs(connID, sql.ProcessCommandQuery, query, state)
}

// showAs shows connection connID running command (query, in state) until
// the returned func is called: waitFor's, and a replica's Binlog Dump
// (binlog_dump.go).
func (pl *processList) showAs(connID uint32, command sql.ProcessCommand, query, state string) func() {
	e := pl.entry(connID)
	if e == nil {
		return func() {}
	}
	pl.mu.Lock()
	pl.waits[connID] = state
	pl.mu.Unlock()
	e.mu.Lock()
	before := e.p
	e.p.Command = command
	e.p.Query = query
	e.p.StartedAt = time.Now()
	e.mu.Unlock()
	return func() {
		pl.mu.Lock()
		delete(pl.waits, connID)
		pl.mu.Unlock()
		e.mu.Lock()
		if e.p.QueryPid == before.QueryPid {
			e.p = before
		}
		e.mu.Unlock()
	}
}

// queryOf returns the statement connection connID runs, "" when none.
func (pl *processList) queryOf(connID uint32) string {
	e := pl.entry(connID)
	if e == nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.p.Query
}

// waitState returns the state of connection connID's waiting statement,
// "" when it has none.
func (pl *processList) waitState(connID uint32) string {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	return pl.waits[connID]
}

func (pl *processList) entry(connID uint32) *process {
	pl.mu.RLock()
	e := pl.procs[connID]
	pl.mu.RUnlock()
	return e
}

// Processes returns a copy of every entry.
func (pl *processList) Processes() []sql.Process {
	pl.mu.RLock()
	entries := make([]*process, 0, len(pl.procs))
	for _, e := range pl.procs {
		entries = append(entries, e)
	}
	pl.mu.RUnlock()
	out := make([]sql.Process, 0, len(entries))
	for _, e := range entries {
		e.mu.Lock()
		p := e.p
		p.Progress = copyProgress(e.p.Progress)
		e.mu.Unlock()
		out = append(out, p)
	}
	return out
}

func copyProgress(m map[string]sql.TableProgress) map[string]sql.TableProgress {
	out := make(map[string]sql.TableProgress, len(m))
	for name, tp := range m {
		parts := make(map[string]sql.PartitionProgress, len(tp.PartitionsProgress))
		for k, v := range tp.PartitionsProgress {
			parts[k] = v
		}
		out[name] = sql.TableProgress{Progress: tp.Progress, PartitionsProgress: parts}
	}
	return out
}

func (pl *processList) AddConnection(connID uint32, addr string) {
	sql.StatusVariables.IncrementGlobal("Threads_connected", 1)
	e := &process{p: sql.Process{Connection: connID, Command: sql.ProcessCommandConnect, Host: addr,
		User: "unauthenticated user", StartedAt: time.Now()}}
	pl.mu.Lock()
	pl.procs[connID] = e
	pl.mu.Unlock()
}

// ConnectionReady marks an authenticated connection idle, under its user.
func (pl *processList) ConnectionReady(sess sql.Session) {
	p := sql.Process{Connection: sess.ID(), Command: sql.ProcessCommandSleep, Host: sess.Client().Address,
		User: sess.Client().User, StartedAt: time.Now(), Database: sess.GetCurrentDatabase()}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	e := pl.procs[sess.ID()]
	if e == nil {
		pl.procs[sess.ID()] = &process{p: p}
		return
	}
	e.mu.Lock()
	e.p = p
	e.mu.Unlock()
}

func (pl *processList) RemoveConnection(connID uint32) {
	pl.mu.Lock()
	e := pl.procs[connID]
	if e == nil {
		pl.mu.Unlock()
		return
	}
	delete(pl.procs, connID)
	e.mu.Lock()
	if st, ok := pl.byPid[e.p.QueryPid]; ok && st.e == e {
		delete(pl.byPid, e.p.QueryPid)
	}
	if e.p.Kill != nil {
		e.p.Kill()
	}
	e.mu.Unlock()
	pl.mu.Unlock()
	sql.StatusVariables.IncrementGlobal("Threads_connected", -1)
}

// BeginQuery enters a statement the planner runs and returns its context,
// cancelled by KILL or when the statement ends.
func (pl *processList) BeginQuery(ctx *sql.Context, query string) (*sql.Context, error) {
	if ctx.IsInterpreted() {
		return ctx, nil
	}
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return nil, errors.New("internal error: connection not registered with process list")
	}
	pid := ctx.Pid()
	cctx, cancel := context.WithCancel(ctx)
	pl.mu.Lock()
	if _, used := pl.byPid[pid]; used {
		pl.mu.Unlock()
		cancel()
		return nil, sql.ErrPidAlreadyUsed.New(pid)
	}
	st := pl.begin(e, ctx.Session, pid, query, cancel)
	pl.byPid[pid] = st
	pl.mu.Unlock()
	return ctx.WithContext(cctx), nil
}

// EndQuery ends what BeginQuery began.
func (pl *processList) EndQuery(ctx *sql.Context) {
	if ctx.IsInterpreted() {
		return
	}
	pid := ctx.Pid()
	pl.mu.Lock()
	st, ok := pl.byPid[pid]
	delete(pl.byPid, pid)
	pl.mu.Unlock()
	if ok {
		pl.end(st, true)
	}
}

// statement is a statement entered in the list, what its end needs.
type statement struct {
	e     *process
	sess  sql.Session
	pid   uint64
	kill  context.CancelFunc // nil: the statement cannot be interrupted
	start time.Time
	// outer is the connection's entry as it was when the statement began
	// inside another (a compiled statement that runs the planner once to
	// learn its result columns), restored at its end; nil otherwise.
	outer *sql.Process
}

// begin marks e's connection running query as statement pid; kill, if
// not nil, cancels the statement's context. A statement that begins
// inside another of its connection is not counted again in
// Threads_running or Slow_queries.
func (pl *processList) begin(e *process, sess sql.Session, pid uint64, query string, kill context.CancelFunc) statement {
	st := statement{e: e, sess: sess, pid: pid, kill: kill, start: time.Now()}
	e.mu.Lock()
	if e.p.QueryPid != 0 {
		outer := e.p
		st.outer = &outer
	}
	e.p.Command = sql.ProcessCommandQuery
	e.p.Query = query
	e.p.QueryPid = pid
	e.p.StartedAt = st.start
	e.p.Kill = kill
	e.p.Progress = nil
	e.mu.Unlock()
	if st.outer == nil {
		sql.StatusVariables.IncrementGlobal("Threads_running", 1)
	}
	return st
}

// end marks the statement's connection idle again (or back to the
// statement it ran inside) and cancels its context. A statement that ran
// is counted in Slow_queries if it took longer than long_query_time
// (every statement when that is 0, as in MySQL); one that did not (a
// compiled statement handed to the planner, which counts its own) is not.
func (pl *processList) end(st statement, ran bool) {
	now := time.Now()
	e := st.e
	e.mu.Lock()
	if e.p.QueryPid == st.pid {
		if st.outer != nil {
			e.p = *st.outer
		} else {
			e.p.Command = sql.ProcessCommandSleep
			e.p.Query = ""
			e.p.StartedAt = now
			e.p.Kill = nil
			e.p.QueryPid = 0
			e.p.Progress = nil
		}
	}
	e.mu.Unlock()
	if st.kill != nil {
		st.kill()
	}
	if st.outer != nil {
		return
	}
	sql.StatusVariables.IncrementGlobal("Threads_running", -1)
	if ran {
		countSlow(st.sess, now.Sub(st.start))
	}
}

// countSlow counts a statement of sess that ran for took in Slow_queries
// if that is longer than long_query_time.
func countSlow(sess sql.Session, took time.Duration) {
	if took.Seconds() > longQueryTime() {
		sql.IncrementStatusVariable(sql.NewContext(context.Background(), sql.WithSession(sess)), "Slow_queries", 1)
	}
}

// BeginOperation gives a handler callback that is not a statement (a
// prepare, a field list) a context KILL cancels.
func (pl *processList) BeginOperation(ctx *sql.Context) (*sql.Context, error) {
	if ctx.IsInterpreted() {
		return ctx, nil
	}
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return nil, errors.New("internal error: connection not registered with process list")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.Kill != nil {
		return nil, errors.New("internal error: attempt to begin operation on connection which was already running one")
	}
	cctx, cancel := ctx.NewSubContext()
	e.p.Kill = cancel
	return cctx, nil
}

func (pl *processList) EndOperation(ctx *sql.Context) {
	if ctx.IsInterpreted() {
		return
	}
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return
	}
	e.mu.Lock()
	kill := e.p.Kill
	e.p.Kill = nil
	e.mu.Unlock()
	if kill != nil {
		kill()
	}
}

// Kill cancels what the connection runs.
func (pl *processList) Kill(connID uint32) {
	if pl.onKill != nil {
		pl.onKill(connID)
	}
	e := pl.entry(connID)
	if e == nil {
		return
	}
	e.mu.Lock()
	kill, pid := e.p.Kill, e.p.QueryPid
	e.mu.Unlock()
	if kill == nil {
		return
	}
	if pid != 0 {
		logrus.Infof("kill query: pid %d", pid)
	} else {
		logrus.Infof("canceling context: connID %d", connID)
	}
	kill()
}

// progress runs fn on the progress map of planner statement pid.
func (pl *processList) progress(pid uint64, fn func(m map[string]sql.TableProgress)) {
	pl.mu.RLock()
	st, ok := pl.byPid[pid]
	pl.mu.RUnlock()
	if !ok {
		return
	}
	e := st.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.QueryPid != pid {
		return
	}
	if e.p.Progress == nil {
		e.p.Progress = make(map[string]sql.TableProgress)
	}
	fn(e.p.Progress)
}

func (pl *processList) UpdateTableProgress(pid uint64, name string, delta int64) {
	pl.progress(pid, func(m map[string]sql.TableProgress) {
		tp, ok := m[name]
		if !ok {
			tp = sql.NewTableProgress(name, -1)
		}
		tp.Done += delta
		m[name] = tp
	})
}

func (pl *processList) UpdatePartitionProgress(pid uint64, tableName, partitionName string, delta int64) {
	pl.progress(pid, func(m map[string]sql.TableProgress) {
		tp, ok := m[tableName]
		if !ok {
			return
		}
		pp, ok := tp.PartitionsProgress[partitionName]
		if !ok {
			pp = sql.PartitionProgress{Progress: sql.Progress{Name: partitionName, Total: -1}}
		}
		pp.Done += delta
		tp.PartitionsProgress[partitionName] = pp
	})
}

func (pl *processList) AddTableProgress(pid uint64, name string, total int64) {
	pl.progress(pid, func(m map[string]sql.TableProgress) {
		if tp, ok := m[name]; ok {
			tp.Total = total
			m[name] = tp
			return
		}
		m[name] = sql.NewTableProgress(name, total)
	})
}

func (pl *processList) AddPartitionProgress(pid uint64, tableName, partitionName string, total int64) {
	pl.progress(pid, func(m map[string]sql.TableProgress) {
		tp, ok := m[tableName]
		if !ok {
			return
		}
		if pp, ok := tp.PartitionsProgress[partitionName]; ok {
			pp.Total = total
			tp.PartitionsProgress[partitionName] = pp
			return
		}
		tp.PartitionsProgress[partitionName] = sql.PartitionProgress{Progress: sql.Progress{Name: partitionName, Total: total}}
	})
}

func (pl *processList) RemoveTableProgress(pid uint64, name string) {
	pl.progress(pid, func(m map[string]sql.TableProgress) { delete(m, name) })
}

func (pl *processList) RemovePartitionProgress(pid uint64, tableName, partitionName string) {
	pl.progress(pid, func(m map[string]sql.TableProgress) {
		if tp, ok := m[tableName]; ok {
			delete(tp.PartitionsProgress, partitionName)
		}
	})
}

// longQueryTime is the global long_query_time in seconds. Reading the
// variable takes the registry's lock and a map lookup, more than a point
// statement's work, so its value is kept until the next SET GLOBAL.
func longQueryTime() float64 {
	if _, ours := sql.SystemVariables.(liveRegistry); !ours {
		return readLongQueryTime()
	}
	gen := globalsChanged.Load()
	if c := longQueryCache.Load(); c != nil && c.gen == gen {
		return c.seconds
	}
	v := readLongQueryTime()
	longQueryCache.Store(&cachedSeconds{gen: gen, seconds: v})
	return v
}

func readLongQueryTime() float64 {
	if _, v, ok := sql.SystemVariables.GetGlobal("long_query_time"); ok {
		if f, ok := v.(float64); ok {
			return f
		}
	}
	return 0
}

type cachedSeconds struct {
	gen     uint64
	seconds float64
}

var (
	// globalsChanged counts the changes of global variables made through
	// liveRegistry.
	globalsChanged atomic.Uint64
	longQueryCache atomic.Pointer[cachedSeconds]
)
