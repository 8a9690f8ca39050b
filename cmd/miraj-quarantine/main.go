// Command miraj-quarantine lists the transactions kept in a quarantine
// folder (DIR/miraj/quarantaine/<time>/<database>/): a database's journal
// moved aside, or the fragment of an unterminated transaction cut at a
// promotion. It only reads.
//
//	miraj-quarantine data/miraj/quarantaine/20261203T001500Z/shop
//	miraj-quarantine --from 4471 data/miraj/quarantaine/20261203T001500Z/shop
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	// The codecs of the SQL layer's value types (TIME, JSON, spatial),
	// without the SQL layer.
	_ "github.com/miraj-db/miraj/internal/storage/sqlvalues"
)

func main() {
	from := flag.Uint64("from", 0, "list from this LSN (the report names where the journal left the primary's history)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: miraj-quarantine [--from LSN] FOLDER")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := list(os.Stdout, flag.Arg(0), journal.LSN(*from)); err != nil {
		fmt.Fprintln(os.Stderr, "miraj-quarantine:", err)
		os.Exit(1)
	}
}

// list writes the transactions of the journal in dir from LSN from as
// statements. When the journal starts after from and the folder has
// checkpoints, it says that what came before is only in them.
func list(w io.Writer, dir string, from journal.LSN) error {
	d := &storage.Describe{}
	first, seen := journal.LSN(0), false
	frame := func(lsn journal.LSN, typ journal.FrameType, payload []byte) error {
		if !seen {
			first, seen = lsn, true
		}
		return d.Frame(lsn, typ, payload)
	}
	if err := journal.Scan(dir, from, frame); err != nil {
		return err
	}
	if ckpts, _ := storage.Checkpoints(dir); seen && first > from && len(ckpts) > 0 {
		fmt.Fprintf(w, "-- the journal starts at LSN %d: the transactions from LSN %d to there are only in the folder's checkpoints, folded into the rows\n", first, from)
	}
	rows := 0
	for _, t := range d.Txns {
		rows += t.Rows
		when := ""
		if !t.At.IsZero() {
			when = " at " + t.At.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(w, "-- transaction %d, LSN %d, %s%s\n", t.Txn, t.LSN, t.Ended, when)
		for _, op := range t.Ops {
			fmt.Fprintln(w, op+";")
		}
	}
	fmt.Fprintf(w, "-- %d transaction(s), %d row change(s)\n", len(d.Txns), rows)
	return nil
}
