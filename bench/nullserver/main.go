// Command nullserver is the bound bench/ceiling.sh measures Miraj and
// MariaDB against: a MySQL-protocol server that does no SQL work. It takes
// every statement and answers at once: a SELECT with an empty result, any
// other statement with one row affected, and a COMMIT, once it has appended
// a commit frame to a journal of Miraj's (internal/journal) and, with
// --durable, once the journal's group commit has made it durable, as
// Miraj's commits are. Its protocol layer is the one Miraj uses (vitess's).
//
// What a client gets from it is meaningless; how fast a client gets it is
// what this machine allows any server that speaks the protocol over
// loopback and makes each COMMIT durable (or not).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/journal"
)

// handler answers every command; only COMMIT touches the journal.
type handler struct {
	jrnl    *journal.Log
	durable bool
	frame   []byte // what a COMMIT appends
}

// answer is the reply to one statement.
func (h *handler) answer(query string) (*sqltypes.Result, error) {
	switch firstWord(query) {
	case "COMMIT":
		_, end, err := h.jrnl.Append(h.frame)
		if err == nil && h.durable {
			err = h.jrnl.SyncTo(context.Background(), end)
		}
		if err != nil {
			return nil, err
		}
		return &sqltypes.Result{}, nil
	case "SELECT", "SHOW":
		return &sqltypes.Result{Fields: []*querypb.Field{{Name: "c", Type: sqltypes.VarChar}}}, nil
	default:
		return &sqltypes.Result{RowsAffected: 1}, nil
	}
}

// firstWord is query's first word, in upper case.
func firstWord(query string) string {
	query = strings.TrimSpace(query)
	if i := strings.IndexAny(query, " \t\r\n;"); i >= 0 {
		query = query[:i]
	}
	return strings.ToUpper(query)
}

func (h *handler) ComQuery(_ context.Context, _ *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	res, err := h.answer(query)
	if err != nil {
		return err
	}
	return callback(res, false)
}

func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	return "", h.ComQuery(ctx, c, query, callback)
}

func (h *handler) ComPrepare(context.Context, *mysql.Conn, string, *mysql.PrepareData) ([]*querypb.Field, error) {
	return nil, nil
}

func (h *handler) ComStmtExecute(_ context.Context, _ *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	res, err := h.answer(prepare.PrepareStmt)
	if err != nil {
		return err
	}
	return callback(res)
}

func (h *handler) NewConnection(*mysql.Conn)                   {}
func (h *handler) ConnectionClosed(*mysql.Conn)                {}
func (h *handler) ConnectionAborted(*mysql.Conn, string) error { return nil }
func (h *handler) ComInitDB(*mysql.Conn, string) error         { return nil }
func (h *handler) WarningCount(*mysql.Conn) uint16             { return 0 }
func (h *handler) ComResetConnection(*mysql.Conn) error        { return nil }
func (h *handler) ParserOptionsForConnection(*mysql.Conn) (sqlparser.ParserOptions, error) {
	return sqlparser.ParserOptions{}, nil
}

// serve answers the clients of ln until ln is closed.
func serve(ln net.Listener, h *handler) error {
	l, err := mysql.NewListenerWithConfig(mysql.ListenerConfig{Listener: ln, AuthServer: mysql.NewAuthServerNone(), Handler: h})
	if err != nil {
		return err
	}
	l.Accept()
	return nil
}

func newHandler(dir string, durable bool, frameBytes int) (*handler, error) {
	j, err := journal.Open(journal.Options{Dir: dir, Logger: slog.Default()})
	if err != nil {
		return nil, err
	}
	return &handler{jrnl: j, durable: durable, frame: journal.AppendFrame(nil, journal.FrameCommit, make([]byte, frameBytes))}, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	dir := flag.String("journal", "", "directory of the journal COMMIT appends to (required)")
	durable := flag.Bool("durable", true, "COMMIT waits until its frame is durable (group commit)")
	frameBytes := flag.Int("frame-bytes", 640, "payload bytes a COMMIT appends")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "nullserver: --journal is required")
		os.Exit(2)
	}
	h, err := newHandler(*dir, *durable, *frameBytes)
	if err == nil {
		var ln net.Listener
		if ln, err = net.Listen("tcp", *addr); err == nil {
			fmt.Println("listening on", ln.Addr())
			err = serve(ln, h)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nullserver:", err)
		os.Exit(1)
	}
}
