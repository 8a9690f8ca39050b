package sim

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// Log-store nodes in the simulated cluster (Options.LogStore): one node
// runs the server's repl.LogStore (journals only) under the same core. Its
// engine stays empty; the core reads and writes the log store. Checkers:
//
//   - "log store": it never applies (its engine holds no database, its
//     acknowledgements claim nothing applied) and never writes (never
//     primary nor promoting, never writable);
//   - "ledger" and "vanished" over its journals: every transaction it holds
//     is byte for byte what a primary of that epoch wrote at that LSN (so
//     a follower it relays to, whose journal the same checker reads, holds
//     a prefix of the primary's history), and none it held durably goes
//     unless it is on the history below its start or in quarantine;
//   - through it, the semi-sync and promotion checkers: a promotion that
//     catches up from it keeps every confirmed write.

// logStoreNode is the node that is a log-store node in a run with
// Options.LogStore: n2 when n3 cascades from it (primary → log store → far
// secondary), else the last node.
func (w *world) logStoreNode() string {
	if !w.opts.LogStore {
		return ""
	}
	if w.opts.Cascade {
		return "n2"
	}
	return fmt.Sprintf("n%d", w.opts.Nodes)
}

func (n *node) isLogStore() bool { return n.id == n.w.logStoreNode() }

// openLogStore opens the node's log store (a start or a restart).
func (n *node) openLogStore() error {
	ls, err := repl.OpenLogStore(repl.LogStoreOptions{FS: n.fs, Dir: filepath.Join(n.stateDir(), repl.LogStoreDir),
		Quarantine: n.quar, Keeper: n.keeper, Logger: n.w.log,
		Journal: journal.Options{SegmentBytes: n.w.opts.SegmentBytes, Faults: n.w.diskFault, Writes: n.journalWrites()}}, repl.Accounts{})
	if err != nil {
		return err
	}
	n.ls = ls
	return nil
}

// logStoreOp carries out an operation of the follow link on the log store.
func (n *node) logStoreOp(op repl.Op) {
	w := n.w
	switch op.Kind {
	case repl.OpAppend:
		if !n.ls.Has(op.DB) {
			w.violate("stream", fmt.Sprintf("%s: frames for missing database %s", n.id, op.DB))
			n.core.Appended(op.Link, op.DB, 0, storage.ErrNoDatabase)
			return
		}
		end, err := n.replica.Write(bg, op.DB, op.At, op.Data, op.Durable)
		if err != nil {
			if n.diskFailed(err) {
				return
			}
			w.violate("stream", fmt.Sprintf("%s: append to %s at %d: %v", n.id, op.DB, op.At, err))
		}
		if err == nil && n.followLinks[op.Link] {
			for _, info := range n.ls.Databases() {
				if strings.EqualFold(info.Name, op.DB) {
					n.streamed[info.Name] = streamedFrom{epoch: n.st.Epoch, primary: n.st.Primary, base: info.BaseID}
				}
			}
		}
		n.core.Appended(op.Link, op.DB, end, err)
		if err == nil {
			n.unapplied = append(n.unapplied, op) // Apply does nothing; the core hears Applied
		}
	case repl.OpLogBegin:
		if op.Quarantine && n.ls.Has(op.DB) && !n.setAside(op.DB, op.Common, "the upstream begins it again: "+op.Reason) {
			return
		}
		err := n.ls.Begin(op.DB, op.BaseID, op.Hist, op.At, false, 0, op.Reason)
		if err != nil && n.diskFailed(err) {
			return
		}
		if err != nil {
			w.violate("log store", fmt.Sprintf("%s: beginning %s: %v", n.id, op.DB, err))
		}
		n.core.LogBegun(op.Link, op.DB, err)
	default:
		w.violate("log store", fmt.Sprintf("%s: a log-store node was asked for storage operation %d on %s", n.id, op.Kind, op.DB))
		switch op.Kind {
		case repl.OpSeedBegin, repl.OpSeedChunk:
			n.core.OpDone(op.Link, op.DB, repl.ErrLogStore)
		case repl.OpSeedInstall:
			n.core.SeedInstalled(op.Link, op.DB, 0, op.At, repl.ErrLogStore)
		}
	}
}

// setAside sets the node's database name aside in quarantine (what
// diverges begins at from); false if the node crashed doing it.
func (n *node) setAside(name string, from journal.LSN, reason string) bool {
	if n.ls != nil {
		return n.logStoreAside(name, from, reason)
	}
	db, _ := n.eng.Database(name)
	return n.quarantine(db, from, reason)
}

// logStoreAside sets db aside, noting the transactions it holds as in
// quarantine (checker "vanished"); false if the node crashed.
func (n *node) logStoreAside(db string, from journal.LSN, reason string) bool {
	if n.quarantined == nil {
		n.quarantined = map[txKey]string{}
	}
	var listed []txKey
	for _, info := range n.ls.Databases() {
		if strings.EqualFold(info.Name, db) {
			n.eachLogTx(info, func(k txKey, _ journal.LSN) { listed = append(listed, k) })
		}
	}
	dest, err := n.ls.SetAside(db, from, reason)
	n.tracef("log store: %s set aside in %s (%d transaction(s)): %v", db, dest, len(listed), err)
	for _, k := range listed {
		if dest != "" {
			n.quarantined[k] = dest
		}
	}
	if err != nil {
		if n.diskFailed(err) {
			return false
		}
		n.w.violate("quarantine", fmt.Sprintf("%s: log store: %v", n.id, err))
	}
	return true
}

// eachLogTx calls fn for each complete transaction of one of the log
// store's databases (one its journal starts inside of excluded), with the
// end of its commit frame.
func (n *node) eachLogTx(info repl.DBInfo, fn func(k txKey, end journal.LSN)) error {
	if info.Applied <= info.Retained {
		return nil
	}
	data, err := n.ls.ReadRange(info.Name, info.Retained, info.Applied, int(info.Applied-info.Retained)+1)
	if err != nil {
		return err
	}
	base := fmt.Sprintf("%x", info.BaseID)
	return eachTxIn(data, info.Retained, info.Retained > 0, func(lsn, end journal.LSN, sum string) {
		fn(txKey{base: base, lsn: lsn, end: end, epoch: endBallot(info.Hist, end), sum: sum}, end)
	})
}

// checkLogStore runs the checkers of a log-store node (full: those that
// read its journals).
func (n *node) checkLogStore(full bool) {
	w := n.w
	if dbs := n.eng.Databases(); len(dbs) > 0 {
		w.violate("log store", fmt.Sprintf("%s: a log-store node's engine holds database %s: it applied what it keeps", n.id, dbs[0].Name()))
	}
	if role := n.core.Role(); role == repl.RolePrimary || role == repl.RolePromoting || !n.eng.ReadOnly() {
		w.violate("log store", fmt.Sprintf("%s: a log-store node is %s (writable %v)", n.id, role, !n.eng.ReadOnly()))
	}
	if !full {
		return
	}
	now := map[txKey]bool{}
	infos := n.ls.Databases()
	for _, info := range infos {
		durable := min(info.Applied, info.Durable)
		err := n.eachLogTx(info, func(k txKey, end journal.LSN) {
			want, ok := w.ledger[ledgerKey{base: k.base, lsn: k.lsn, epoch: k.epoch}]
			switch {
			case !ok:
				w.violate("ledger", fmt.Sprintf("%s (log store): database %s holds at LSN %d, under epoch %s, a transaction no primary of that epoch wrote there (journals spliced)", n.id, info.Name, k.lsn, k.epoch))
			case want != k.sum:
				w.violate("ledger", fmt.Sprintf("%s (log store): database %s at LSN %d (epoch %s) differs from what its primary wrote", n.id, info.Name, k.lsn, k.epoch))
			}
			if end <= durable {
				now[k] = true
			}
		})
		if err != nil {
			w.violate("ledger", fmt.Sprintf("%s (log store): database %s: %v", n.id, info.Name, err))
		}
	}
	for k := range n.held {
		if now[k] || n.inQuarantine(k) {
			continue
		}
		below := false
		for _, info := range infos {
			if fmt.Sprintf("%x", info.BaseID) == k.base && k.lsn <= info.Retained && endBallot(info.Hist, k.end) == k.epoch {
				below = true // let go below the log store's start: on the history
			}
		}
		if !below {
			w.violate("vanished", fmt.Sprintf("%s (log store): the transaction at LSN %d of epoch %s (database %s…) is gone, and not in quarantine", n.id, k.lsn, k.epoch, k.base[:8]))
			break
		}
	}
	n.held = now
}

// trimLogStore lets go of the journal the core no longer needs (the
// server's driver does it every 10 s); the checker "kept": none of a
// database not known to be on the primary's history.
func (n *node) trimLogStore() {
	for _, info := range n.ls.Databases() {
		floor, ok := n.core.RetentionFloor(info)
		if !ok || floor <= info.Retained {
			continue
		}
		if !n.onLogStoreHistory(info) {
			n.w.violate("kept", fmt.Sprintf("%s (log store): would let the journal of %s go to LSN %d, not known to be on primary %s's history", n.id, info.Name, floor, n.st.Primary))
		}
		if err := n.ls.RemoveBefore(info.Name, floor); err != nil {
			if n.diskFailed(err) {
				return // crashed
			}
			n.w.violate("checkpoint", fmt.Sprintf("%s (log store): removing %s before %d: %v", n.id, info.Name, floor, err))
		}
		n.tracef("log store: %s kept from %d", info.Name, floor)
	}
}

// onLogStoreHistory: the primary's stream wrote to the log store's
// database in the current epoch (as the checker "kept" knows it).
func (n *node) onLogStoreHistory(info repl.DBInfo) bool {
	s, ok := n.streamed[info.Name]
	return ok && s.epoch == n.st.Epoch && s.primary == n.st.Primary && string(s.base) == string(info.BaseID)
}

// checkLogStoreAck: a log-store node acknowledges only what its journal
// holds (durably with DurableAcks), and never an applied position.
func (n *node) checkLogStoreAck(a repl.AckMsg) {
	for _, info := range n.ls.Databases() {
		if !strings.EqualFold(info.Name, a.DB) {
			continue
		}
		have := info.End
		if n.w.opts.DurableAcks {
			have = info.Durable
		}
		if a.Written > have || a.Applied != 0 {
			n.w.violate("acknowledged only what is written", fmt.Sprintf("%s (log store) acknowledges %s written to %d and applied to %d; its journal holds %d (durable: %v) and it applies nothing",
				n.id, a.DB, a.Written, a.Applied, have, n.w.opts.DurableAcks))
		}
		return
	}
	n.w.violate("acknowledged only what is written", fmt.Sprintf("%s (log store) acknowledges database %s, which it does not have", n.id, a.DB))
}

// dbInfos is the node's databases as its core reads them, by name.
func (n *node) dbInfos() []repl.DBInfo {
	var out []repl.DBInfo
	if n.ls != nil {
		out = n.ls.Databases()
	} else {
		out = repl.EngineLog(n.eng, repl.Accounts{}).Databases()
	}
	slices.SortFunc(out, func(a, b repl.DBInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}
