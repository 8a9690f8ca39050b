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
	"os"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
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
	d := &storage.Describe{}
	if err := journal.Scan(flag.Arg(0), journal.LSN(*from), d.Frame); err != nil {
		fmt.Fprintln(os.Stderr, "miraj-quarantine:", err)
		os.Exit(1)
	}
	rows := 0
	for _, t := range d.Txns {
		rows += t.Rows
		when := ""
		if !t.At.IsZero() {
			when = " at " + t.At.Format(time.RFC3339Nano)
		}
		fmt.Printf("-- transaction %d, LSN %d, %s%s\n", t.Txn, t.LSN, t.Ended, when)
		for _, op := range t.Ops {
			fmt.Println(op + ";")
		}
	}
	fmt.Printf("-- %d transaction(s), %d row change(s)\n", len(d.Txns), rows)
}
