package repl

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/miraj-db/miraj/internal/atomicfile"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/vfs"
)

// Quarantine (§17.4.2): what a node held that is not on the primary's
// history is never deleted. It goes to DIR/miraj/quarantaine/<UTC time>/
// <database>/ with a report.txt saying what it is and how to read it.
const quarantineDir = "quarantaine"

// Quarantine writes a node's quarantine folders. The server's driver and
// the simulator both keep aside through it, each on its own file system.
type Quarantine struct {
	FS  vfs.FS
	Dir string // DIR/miraj
	// Node and Cluster name the node in the reports.
	Node, Cluster string
	Now           func() time.Time
	Log           *slog.Logger
}

// Keeper is the node's place when something is kept aside, for the
// report: its epoch and the primary it knows.
type Keeper struct {
	Epoch   Epoch
	Primary string
}

// folder returns a new, unused folder for db.
func (q *Quarantine) folder(db string) (string, error) {
	stamp := q.Now().UTC().Format("20060102T150405Z")
	base := filepath.Join(q.Dir, quarantineDir, stamp, storage.DirName(db))
	dir := base
	for i := 2; ; i++ {
		if _, err := q.FS.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return dir, nil
		} else if err != nil {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// report describes what is kept; h is the journal's epoch history (passed
// in: the tail's caller holds the database's commit lock).
func (q *Quarantine) report(k Keeper, db *storage.DB, h history.History, what, reason string, first, end journal.LSN) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Miraj quarantine report\n\n")
	fmt.Fprintf(&b, "node:      %s (cluster %s)\n", q.Node, q.Cluster)
	fmt.Fprintf(&b, "time:      %s\n", q.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "database:  %s\n", db.Name())
	fmt.Fprintf(&b, "base id:   %x\n", db.Latest().BaseID())
	fmt.Fprintf(&b, "epoch:     %d (this node's, primary %s)\n", k.Epoch, k.Primary)
	fmt.Fprintf(&b, "LSN range: %d to %d (%d bytes)\n", first, end, end-first)
	fmt.Fprintf(&b, "epoch marks of its journal:")
	if len(h) == 0 {
		fmt.Fprintf(&b, " none")
	}
	for _, m := range h {
		fmt.Fprintf(&b, " %d by %s at %d;", m.Epoch, m.Node, m.LSN)
	}
	fmt.Fprintf(&b, "\nwhat:      %s\nwhy:       %s\n\n", what, reason)
	return b.String()
}

// maxReportTxns bounds the transactions listed in a report.txt; the
// miraj-quarantine command lists them all.
const maxReportTxns = 100

// describe summarises transactions for a report: counts, first and last
// commit time, then the transactions themselves.
func describe(d *storage.Describe) string {
	var b strings.Builder
	rows, committed := 0, 0
	var first, last time.Time
	for _, t := range d.Txns {
		rows += t.Rows
		if t.Ended == "commit" {
			committed++
			if first.IsZero() || t.At.Before(first) {
				first = t.At
			}
			if t.At.After(last) {
				last = t.At
			}
		}
	}
	fmt.Fprintf(&b, "transactions: %d (%d committed), rows changed: %d\n", len(d.Txns), committed, rows)
	if !first.IsZero() {
		fmt.Fprintf(&b, "commit times: %s to %s\n", first.Format(time.RFC3339Nano), last.Format(time.RFC3339Nano))
	}
	b.WriteString("\n")
	for i, t := range d.Txns {
		if i == maxReportTxns {
			fmt.Fprintf(&b, "… %d more: miraj-quarantine <this folder> lists them all\n", len(d.Txns)-i)
			break
		}
		when := ""
		if !t.At.IsZero() {
			when = " at " + t.At.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(&b, "transaction %d (LSN %d, %s%s):\n", t.Txn, t.LSN, t.Ended, when)
		for _, op := range t.Ops {
			fmt.Fprintf(&b, "  %s\n", op)
		}
	}
	return b.String()
}

// Database moves db's folder (journal and checkpoints as they are) out of
// eng into quarantine, with a report of what follows LSN from (what is not
// on the primary's history), and takes the database out of service. It
// returns the folder.
func (q *Quarantine) Database(k Keeper, eng *storage.Engine, db *storage.DB, from journal.LSN, reason string) (string, error) {
	dir, err := q.folder(db.Name())
	if err != nil {
		return "", err
	}
	h, end := db.ReceivedHistory()
	// A checkpoint written before the divergence was known may have let
	// the journal go from before from: those transactions are in the
	// folder's checkpoints alone, folded into the rows.
	listed := max(from, db.Journal().Start())
	rep := q.report(k, db, h, "the whole database folder (journal segments and checkpoints)", reason, from, end)
	if err := eng.MoveAside(db.Name(), dir); err != nil {
		return "", err
	}
	if listed > from {
		rep += foldedNote(dir, from, listed)
	}
	d := &storage.Describe{}
	if err := journal.Scan(dir, listed, d.Frame); err != nil {
		rep += fmt.Sprintf("(the journal could not be read from LSN %d: %v)\n", listed, err)
	} else {
		rep += fmt.Sprintf("Not on the primary's history, in the journal (LSN %d to %d):\n", listed, end) + describe(d)
	}
	rep += "\nHow to read it: miraj-quarantine " + dir + " lists every transaction of its journal;\n" +
		"to query it, copy this folder into an empty data directory as the folder of the\n" +
		"database and start a standalone miraj-server on that directory (without --cluster-config).\n"
	if err := atomicfile.WriteFS(q.FS, filepath.Join(dir, "report.txt"), []byte(rep), 0o644); err != nil {
		return dir, err
	}
	q.Log.Warn(fmt.Sprintf("Cluster: database %s moved to quarantine in %s: %s", db.Name(), dir, reason), "database", db.Name())
	if listed > from {
		q.Log.Warn(fmt.Sprintf("Cluster: database %s: its quarantined transactions from LSN %d to %d are only in the checkpoints of %s (a checkpoint let that part of the journal go)", db.Name(), from, listed, dir), "database", db.Name())
	}
	return dir, nil
}

// foldedNote says that the transactions from LSN from to listed are no
// longer in the quarantined journal: only the folder's checkpoints hold
// them, folded into the rows with the rest of the database.
func foldedNote(dir string, from, listed journal.LSN) string {
	ckpts, _ := storage.Checkpoints(dir)
	names := make([]string, len(ckpts))
	for i, c := range ckpts {
		names[len(ckpts)-1-i] = filepath.Base(c.Path) // oldest first
	}
	held := "no checkpoint file was found in this folder"
	if len(names) > 0 {
		held = "its checkpoints (" + strings.Join(names, ", ") + ") hold their rows, folded in with the rest of the database"
	}
	return fmt.Sprintf("The transactions from LSN %d to %d are no longer in the journal: a checkpoint written before the\n"+
		"divergence was known let that part of the journal go, and %s.\n"+
		"They cannot be listed one by one; query the folder (below) to see the rows.\n\n", from, listed, held)
}

// Tail keeps the bytes of an unterminated transaction (cut at promotion)
// in quarantine: a journal fragment starting at LSN from. It returns the
// folder.
func (q *Quarantine) Tail(k Keeper, db *storage.DB, from journal.LSN, tail []byte) (string, error) {
	dir, err := q.folder(db.Name())
	if err != nil {
		return "", err
	}
	if err := vfs.MkdirAllSync(q.FS, dir, 0o755); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%020d.journal", uint64(from))
	if err := atomicfile.WriteFS(q.FS, filepath.Join(dir, name), tail, 0o644); err != nil {
		return "", err
	}
	rep := q.report(k, db, db.History(), "the frames of a transaction whose commit frame never arrived, in "+name, "cut at promotion: the former primary's transaction was incomplete here", from, from+journal.LSN(len(tail)))
	d := &storage.Describe{}
	journal.ScanFrames(tail, from, d.Frame)
	rep += describe(d) + "\nHow to read it: miraj-quarantine " + dir + " lists the transaction's changes.\n"
	if err := atomicfile.WriteFS(q.FS, filepath.Join(dir, "report.txt"), []byte(rep), 0o644); err != nil {
		return dir, err
	}
	q.Log.Warn(fmt.Sprintf("Cluster: database %s: unterminated transaction at LSN %d kept in quarantine in %s", db.Name(), from, dir), "database", db.Name())
	return dir, nil
}
