package repl

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/transport"
)

// Scripted interaction tests of the core (etcd-io/raft's
// interaction_test.go, cockroachdb's datadriven): each file of
// testdata/interaction is a sequence of commands, each followed by the
// output it must give; `go test -run TestInteraction -rewrite` writes the
// outputs anew, to be reviewed as a diff.
//
// The cores run over an in-memory network the script moves by hand, on
// journals of fixed 10-byte frames ("shop:0001 ", an epoch mark "M1n1").
// Commands:
//
//	nodes n1 n2 n3               cores of a cluster, all secondaries at epoch 0
//	crash n1                     n1 stops (its links break)
//	restart n1                   a new core in n1's persisted state (its journals kept)
//	raft 10                      every node in raft mode, election timeout 10 ticks
//	db n1 shop aa 3              database shop (base id aa) with 3 transactions
//	write n1 shop 2              the primary commits 2 transactions
//	promote n1 [force]           SET GLOBAL cluster_role = 'primary' / 'force_primary'
//	demote n1                    SET GLOBAL cluster_role = 'secondary'
//	tick n1|all [k]              k ticks
//	ready n1|all                 carry out what the core asks, printed
//	deliver [n1]                 deliver what is in flight (to n1), printed
//	stabilize                    ready and deliver until nothing moves
//	cut n1 n2 / heal             a partition both ways (links break) / none
//	wait n1 shop 40 received     a semi-sync wait, printed when it ends
//	stream n1 shop 3             frames of a transaction streamed before its commit (served, not applied)
//	status n1                    role, epoch, following, journals
//	corrupt-copies n1            n1's copies announce a wrong LSN
var rewrite = flag.Bool("rewrite", false, "write the interaction tests' outputs anew")

func TestInteraction(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "interaction", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

// runScript runs one file; with -rewrite it writes the outputs it got.
func runScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := &ienv{nodes: map[string]*inode{}, cut: map[[2]string]bool{}}
	var out strings.Builder
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		// The command, then its expected output after "----" up to a
		// blank line.
		cmd := line
		j := i + 1
		if j >= len(lines) || lines[j] != "----" {
			t.Fatalf("%s:%d: %q is not followed by ----", path, i+1, cmd)
		}
		j++
		var want []string
		for ; j < len(lines) && lines[j] != ""; j++ {
			want = append(want, lines[j])
		}
		got := env.run(t, cmd)
		if !*rewrite && got != strings.Join(want, "\n") {
			t.Errorf("%s:%d: %s\n--- want\n%s\n--- got\n%s", path, i+1, cmd, strings.Join(want, "\n"), got)
		}
		fmt.Fprintf(&out, "%s\n----\n%s\n", cmd, got)
		i = j - 1
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// frameBytes is the size of every frame of the scripts' journals.
const frameBytes = 10

// memDB is one database of a script's node: whole 10-byte frames.
type memDB struct {
	name   string
	base   []byte
	data   []byte
	hist   history.History
	copyIn *bytes.Buffer
	// open: the bytes at the end of a primary's journal that a
	// transaction streamed before its commit wrote (stream), not applied:
	// served (DBInfo.Streamed) ahead of the applied end.
	open journal.LSN
}

func (d *memDB) end() journal.LSN { return journal.LSN(len(d.data)) }

// appendFrames adds frames at the end, reading the marks among them.
func (d *memDB) appendFrames(b []byte) error {
	if len(b)%frameBytes != 0 {
		return fmt.Errorf("%d bytes are not whole frames", len(b))
	}
	for k := 0; k < len(b); k += frameBytes {
		f := b[k : k+frameBytes]
		if f[0] == 'M' {
			var e uint64
			var node string
			fmt.Sscanf(strings.TrimSpace(string(f[1:])), "%d%s", &e, &node)
			h, err := d.hist.Append(history.Mark{Epoch: Epoch(e), Node: node, LSN: d.end() + journal.LSN(k)})
			if err != nil {
				return err
			}
			d.hist = h
		}
	}
	d.data = append(d.data, b...)
	return nil
}

// memLog is Log over a node's memDBs.
type memLog struct{ n *inode }

func (l memLog) Databases() []DBInfo {
	var out []DBInfo
	for _, name := range slices.Sorted(mapKeys(l.n.dbs)) {
		d := l.n.dbs[name]
		info := DBInfo{Name: d.name, BaseID: d.base, Hist: d.hist, Applied: d.end() - d.open, RecvHist: d.hist, End: d.end(), Durable: d.end()}
		if d.open > 0 {
			info.Streamed = d.end()
		}
		out = append(out, info)
	}
	return out
}

func (l memLog) ReadCommitted(db string, from journal.LSN, limit int) ([]byte, error) {
	d := l.n.dbs[db]
	return l.ReadRange(db, from, d.end(), limit)
}

func (l memLog) ReadRange(db string, from, to journal.LSN, limit int) ([]byte, error) {
	d := l.n.dbs[db]
	if d == nil || to > d.end() || from > to {
		return nil, fmt.Errorf("no %s [%d, %d)", db, from, to)
	}
	n := min(int(to-from), limit/frameBytes*frameBytes)
	n = max(n, min(frameBytes, int(to-from)))
	return d.data[from : from+journal.LSN(n)], nil
}

func (memLog) Accounts() (uint64, func() []byte) { return 0, nil }

// inode is one node of a script.
type inode struct {
	id   string
	down bool // crashed: its journals and state are kept for a restart
	// corruptCopies: the copies it sends announce a wrong LSN.
	corruptCopies bool
	// saveFails: writes of its cluster state fail (a full or broken disk).
	saveFails bool
	core      *Core
	st        State
	dbs       map[string]*memDB
	waits     map[uint64]string
}

// ienv is a script's cluster and network.
type ienv struct {
	ids []string
	// upstream: a node's configured upstream (CoreConfig.Upstream).
	upstream map[string]string
	// raft: the election timeout of raft mode, in ticks (0: manual mode).
	raft     int
	nodes    map[string]*inode
	cut      map[[2]string]bool
	links    []*ilink
	nextWait uint64
	inflight []imsg
}

// ilink joins two cores' link ids (a's is 0 for a one-shot question).
type ilink struct {
	a, b         string
	aLink, bLink LinkID
	oneShot      bool
	addr         string
}

type imsg struct {
	from, to string
	link     *ilink
	typ      transport.Type
	payload  []byte
	close    bool // the sender closed the link after what it sent
}

func (e *ienv) config(id string) CoreConfig {
	cfg := CoreConfig{ID: id, Cluster: "t", Advertise: id, Window: 40, BatchBytes: 20, RoundBytes: 1 << 10,
		HeartbeatTicks: 3, LinkTimeoutTicks: 10, ProbeTicks: 10, RetryTicks: 2, ProbeWaitTicks: 2, TickMillis: 1}
	for _, o := range e.ids {
		if o != id {
			cfg.Members = append(cfg.Members, o)
			cfg.Seeds = append(cfg.Seeds, o)
		}
	}
	cfg.Upstream = e.upstream[id]
	if e.raft > 0 {
		cfg.Raft, cfg.ElectionTicks, cfg.RandSeed = true, e.raft, uint64(len(id))*7+uint64(id[len(id)-1])
	}
	return cfg
}

func (e *ienv) run(t *testing.T, line string) string {
	f := strings.Fields(line)
	var b strings.Builder
	switch f[0] {
	case "nodes":
		e.ids = f[1:]
		for _, id := range e.ids {
			n := &inode{id: id, dbs: map[string]*memDB{}, waits: map[uint64]string{}, st: State{Role: RoleSecondary}}
			n.core = NewCore(e.config(id), n.st, memLog{n})
			e.nodes[id] = n
		}
		return "ok"
	case "raft":
		// raft 10: every node runs raft mode with an election timeout of
		// 10 ticks; their cores are made again.
		e.raft, _ = strconv.Atoi(f[1])
		for _, id := range e.ids {
			n := e.nodes[id]
			n.core = NewCore(e.config(id), n.st, memLog{n})
		}
		return "ok"
	case "upstream":
		// upstream n3 n2: n3 streams from n2 (a cascade); its core is
		// made again with that configuration.
		if e.upstream == nil {
			e.upstream = map[string]string{}
		}
		e.upstream[f[1]] = f[2]
		n := e.nodes[f[1]]
		n.core = NewCore(e.config(n.id), n.st, memLog{n})
		return "ok"
	case "save-fails", "save-works":
		// Writes of a node's cluster state fail from now on, or work
		// again.
		e.nodes[f[1]].saveFails = f[0] == "save-fails"
		return "ok"
	case "corrupt-copies":
		// n1's copies announce an LSN 10 bytes past what they hold, as a
		// copy that lost its end would.
		e.nodes[f[1]].corruptCopies = true
		return "ok"
	case "crash":
		n := e.nodes[f[1]]
		e.breakLinksOf(f[1], &b)
		n.down = true
		fmt.Fprintf(&b, "%s down", n.id)
	case "restart":
		n := e.nodes[f[1]]
		e.breakLinksOf(f[1], &b)
		n.down = false
		n.core = NewCore(e.config(n.id), n.st, memLog{n})
		n.waits = map[uint64]string{}
		fmt.Fprintf(&b, "%s restarted as %s epoch %d", n.id, n.st.Role, n.st.Epoch)
	case "db":
		n := e.nodes[f[1]]
		d := &memDB{name: f[2], base: []byte(f[3])}
		k, _ := strconv.Atoi(f[4])
		for i := 0; i < k; i++ {
			d.appendFrames(frame(d.name, i))
		}
		n.dbs[d.name] = d
		return "ok"
	case "write", "stream":
		// stream: frames of a transaction streamed before its commit,
		// served ahead of the applied end; write: a commit (it ends what
		// was streamed too).
		n := e.nodes[f[1]]
		if !n.core.Writable() {
			return fmt.Sprintf("%s refuses writes (%s)", n.id, n.core.Role())
		}
		d := n.dbs[f[2]]
		k, _ := strconv.Atoi(f[3])
		before := d.end()
		for i := 0; i < k; i++ {
			d.appendFrames(frame(d.name, int(d.end())/frameBytes))
		}
		if f[0] == "write" {
			d.open = 0
			fmt.Fprintf(&b, "%s: %s ends at %d", n.id, d.name, d.end())
			break
		}
		d.open += d.end() - before
		fmt.Fprintf(&b, "%s: %s ends at %d, applied to %d", n.id, d.name, d.end(), d.end()-d.open)
	case "promote":
		n := e.nodes[f[1]]
		if err := n.core.Promote(len(f) > 2 && f[2] == "force"); err != nil {
			return err.Error()
		}
		return "probing"
	case "demote":
		if err := e.nodes[f[1]].core.Demote(); err != nil {
			return err.Error()
		}
		return "ok"
	case "tick":
		k := 1
		if len(f) > 2 {
			k, _ = strconv.Atoi(f[2])
		}
		for _, n := range e.pick(f[1]) {
			for i := 0; i < k; i++ {
				n.core.Tick()
			}
		}
		return "ok"
	case "ready":
		for _, n := range e.pick(f[1]) {
			e.ready(n, &b)
		}
	case "deliver":
		to := ""
		if len(f) > 1 {
			to = f[1]
		}
		e.deliver(to, &b)
	case "stabilize":
		for i := 0; i < 100; i++ {
			before := b.Len()
			for _, n := range e.pick("all") {
				e.ready(n, &b)
			}
			e.deliver("", &b)
			if b.Len() == before {
				break
			}
		}
	case "cut":
		e.cut[[2]string{f[1], f[2]}], e.cut[[2]string{f[2], f[1]}] = true, true
		for _, l := range slices.Clone(e.links) {
			if (l.a == f[1] && l.b == f[2]) || (l.a == f[2] && l.b == f[1]) {
				e.breakLink(l, &b)
			}
		}
		fmt.Fprintf(&b, "%s and %s cut", f[1], f[2])
	case "heal":
		clear(e.cut)
		return "healed"
	case "wait":
		n := e.nodes[f[1]]
		lsn, _ := strconv.Atoi(f[3])
		level, _ := ParseSyncLevel(f[4])
		e.nextWait++
		res, waiting := n.core.WaitSync(e.nextWait, f[2], journal.LSN(lsn), SyncRequest{Level: level, Replicas: 1, Timeout: 5 * time.Millisecond, Action: SyncError})
		if waiting {
			n.waits[e.nextWait] = f[2]
			return fmt.Sprintf("wait %d: waiting", e.nextWait)
		}
		return fmt.Sprintf("wait %d: %s", e.nextWait, syncResult(res))
	case "status":
		n := e.nodes[f[1]]
		peer, welcomed := n.core.Following()
		fmt.Fprintf(&b, "%s: %s epoch %d primary %q writable=%v following=%q welcomed=%v", n.id, n.core.Role(), n.st.Epoch, n.st.Primary, n.core.Writable(), peer, welcomed)
		if n.st.Vote != "" {
			fmt.Fprintf(&b, " vote=%s", n.st.Vote)
		}
		for _, name := range slices.Sorted(mapKeys(n.dbs)) {
			d := n.dbs[name]
			fmt.Fprintf(&b, "\n  %s base=%s end=%d marks=%v", name, d.base, d.end(), d.hist)
		}
	default:
		t.Fatalf("unknown command %q", line)
	}
	return strings.TrimRight(b.String(), "\n")
}

// frame is transaction i of db: 10 bytes.
func frame(db string, i int) []byte { return []byte(fmt.Sprintf("%-4.4s:%04d ", db, i%10000)) }

func (e *ienv) pick(which string) []*inode {
	if which != "all" {
		return []*inode{e.nodes[which]}
	}
	var out []*inode
	for _, id := range e.ids {
		if !e.nodes[id].down {
			out = append(out, e.nodes[id])
		}
	}
	return out
}

func syncResult(r SyncResult) string {
	switch r.Outcome {
	case SyncConfirmed:
		return "confirmed"
	case SyncWarned:
		return "warning: " + r.Message
	}
	return "error: " + r.Message
}

// ready carries out n's Ready as a driver would, printing it.
func (e *ienv) ready(n *inode, b *strings.Builder) {
	for n.core.HasReady() {
		rd := n.core.Ready()
		p := func(format string, args ...any) { fmt.Fprintf(b, "%s: "+format+"\n", append([]any{n.id}, args...)...) }
		for _, ev := range rd.Events {
			p("log %s", ev.Msg)
		}
		if rd.CloseWrites {
			p("close writes")
		}
		saved := true
		if rd.State != nil {
			if n.saveFails {
				p("persist %s epoch %d primary %s: failed", rd.State.Role, rd.State.Epoch, rd.State.Primary)
				n.core.SaveFailed(errors.New("disk full"))
				saved = false
			} else {
				n.st = *rd.State
				if rd.State.Vote != "" {
					p("persist %s epoch %d primary %s vote %s", rd.State.Role, rd.State.Epoch, rd.State.Primary, rd.State.Vote)
				} else {
					p("persist %s epoch %d primary %s", rd.State.Role, rd.State.Epoch, rd.State.Primary)
				}
			}
		}
		if rd.OpenWrites && saved {
			p("open writes")
		}
		for _, a := range rd.Answers {
			if a.Err != nil {
				p("promotion refused: %v", a.Err)
			} else {
				p("promotion accepted")
			}
		}
		for _, op := range rd.Ops {
			if op.Kind == OpMarkEpochs && !saved {
				continue
			}
			e.op(n, op, p)
		}
		for _, d := range rd.Dials {
			e.dial(n, d, p)
		}
		for _, m := range rd.Msgs {
			e.send(n, m, p)
		}
		for _, id := range rd.Closes {
			p("close link %d", id)
			if l := e.linkOf(n.id, id); l != nil {
				e.inflight = append(e.inflight, imsg{from: n.id, link: l, close: true})
			}
		}
		for _, r := range rd.Releases {
			p("wait %d: %s", r.ID, syncResult(r.Result))
			delete(n.waits, r.ID)
		}
		n.core.Advance()
	}
}

// op carries out a storage operation on the node's memDBs.
func (e *ienv) op(n *inode, op Op, p func(string, ...any)) {
	switch op.Kind {
	case OpAppend:
		d := n.dbs[op.DB]
		var err error
		switch {
		case d == nil:
			err = fmt.Errorf("no database %s", op.DB)
		case op.At != d.end():
			err = fmt.Errorf("frames at %d, journal ends at %d", op.At, d.end())
		default:
			err = d.appendFrames(op.Data)
		}
		end := journal.LSN(0)
		if d != nil {
			end = d.end()
		}
		p("append %s at %d: %d bytes durable=%v -> %v", op.DB, op.At, len(op.Data), op.Durable, errOr(err, fmt.Sprint(end)))
		n.core.Appended(op.Link, op.DB, end, err)
		if err == nil {
			n.core.Applied(op.Link, op.DB, nil)
		}
	case OpSeedBegin:
		p("copy of %s begins (quarantine=%v common=%d: %s)", op.DB, op.Quarantine, op.Common, op.Reason)
		if op.Quarantine {
			delete(n.dbs, op.DB)
		}
		n.dbs["~"+op.DB] = &memDB{copyIn: &bytes.Buffer{}}
		n.core.OpDone(op.Link, op.DB, nil)
	case OpSeedChunk:
		n.dbs["~"+op.DB].copyIn.Write(op.Data)
		n.core.OpDone(op.Link, op.DB, nil)
	case OpSeedInstall:
		c := n.dbs["~"+op.DB].copyIn.Bytes()
		delete(n.dbs, "~"+op.DB)
		base, data, _ := bytes.Cut(c, []byte{'|'})
		d := &memDB{name: op.DB, base: base}
		err := d.appendFrames(data)
		n.dbs[op.DB] = d
		p("install %s at %d (announced %d)", op.DB, d.end(), op.At)
		n.core.SeedInstalled(op.Link, op.DB, d.end(), op.At, err)
	case OpSeedAbort:
		delete(n.dbs, "~"+op.DB)
		p("copy of %s abandoned", op.DB)
	case OpDrop:
		delete(n.dbs, op.DB)
		p("drop %s (quarantine=%v)", op.DB, op.Quarantine)
		n.core.OpDone(op.Link, op.DB, nil)
	case OpAccounts:
		n.core.OpDone(op.Link, "", nil)
	case OpSnapshot:
		d := n.dbs[op.DB]
		c := append(append(append([]byte(nil), d.base...), '|'), d.data...)
		p("snapshot %s at %d: %d bytes", op.DB, d.end(), len(c))
		for k := 0; k < len(c); k += 16 {
			n.core.SnapshotChunk(op.Link, op.DB, c[k:min(k+16, len(c))])
		}
		announce := d.end()
		if n.corruptCopies {
			announce += frameBytes
		}
		n.core.SnapshotDone(op.Link, op.DB, announce, int64(len(c)), nil)
	case OpCutTails:
		p("cut tails")
		n.core.TailsCut(nil)
	case OpMarkEpochs:
		for _, name := range slices.Sorted(mapKeys(n.dbs)) {
			d := n.dbs[name]
			d.appendFrames([]byte(fmt.Sprintf("M%-9s", fmt.Sprintf("%d%s", n.st.Epoch, n.id))))
			p("mark %s epoch %d at %d", name, n.st.Epoch, d.end()-frameBytes)
		}
	}
}

func errOr(err error, s string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}

// dial connects a link at once when the peer is there to take it.
func (e *ienv) dial(n *inode, d Dial, p func(string, ...any)) {
	to := e.nodes[d.Addr]
	if to == nil || to.down || e.cut[[2]string{n.id, d.Addr}] {
		p("dial %s (%s) link %d: unreachable", d.Addr, d.Kind, d.Link)
		n.core.LinkDown(d.Link, fmt.Errorf("unreachable"))
		return
	}
	l := &ilink{a: n.id, b: d.Addr, aLink: d.Link, addr: d.Addr}
	l.bLink = to.core.Accept(n.id, n.id)
	e.links = append(e.links, l)
	p("dial %s (%s) link %d: connected (its link %d)", d.Addr, d.Kind, d.Link, l.bLink)
	n.core.Connected(d.Link, d.Addr)
}

// send puts a message in flight, decoded for the output.
func (e *ienv) send(n *inode, m Envelope, p func(string, ...any)) {
	dm, err := DecodeMsg(m.Type, m.Payload)
	desc := describeMsg(dm, err)
	if m.Link == 0 {
		to := e.nodes[m.Addr]
		if to == nil || to.down || e.cut[[2]string{n.id, m.Addr}] {
			p("ask %s %s: unreachable", m.Addr, desc)
			n.core.Unreachable(m.Addr)
			return
		}
		l := &ilink{a: n.id, b: m.Addr, oneShot: true, addr: m.Addr}
		l.bLink = to.core.Accept(n.id, n.id)
		e.links = append(e.links, l)
		p("ask %s %s", m.Addr, desc)
		e.inflight = append(e.inflight, imsg{from: n.id, to: m.Addr, link: l, typ: m.Type, payload: m.Payload})
		return
	}
	l := e.linkOf(n.id, m.Link)
	if l == nil {
		return
	}
	to := l.b
	if n.id == l.b {
		to = l.a
	}
	p("send %s link %d: %s", to, m.Link, desc)
	e.inflight = append(e.inflight, imsg{from: n.id, to: to, link: l, typ: m.Type, payload: m.Payload})
}

func (e *ienv) linkOf(id string, lid LinkID) *ilink {
	for _, l := range e.links {
		if (l.a == id && l.aLink == lid && lid != 0) || (l.b == id && l.bLink == lid) {
			return l
		}
	}
	return nil
}

// deliver hands every message in flight (to one node, or all) over.
func (e *ienv) deliver(only string, b *strings.Builder) {
	var kept []imsg
	msgs := e.inflight
	e.inflight = nil
	for _, m := range msgs {
		if m.close {
			if only != "" && m.link.a != only && m.link.b != only {
				kept = append(kept, m)
				continue
			}
			e.breakLink(m.link, b)
			continue
		}
		if only != "" && m.to != only {
			kept = append(kept, m)
			continue
		}
		if !slices.Contains(e.links, m.link) {
			continue // the link broke: lost
		}
		to := e.nodes[m.to]
		dm, err := DecodeMsg(m.typ, m.payload)
		fmt.Fprintf(b, "%s <- %s: %s\n", m.to, m.from, describeMsg(dm, err))
		if m.link.oneShot && m.to == m.link.a {
			to.core.Answer(m.link.addr, m.from, m.typ, m.payload)
			e.dropLink(m.link)
			continue
		}
		lid := m.link.bLink
		if m.to == m.link.a {
			lid = m.link.aLink
		}
		to.core.Step(lid, m.from, m.typ, m.payload)
	}
	e.inflight = append(kept, e.inflight...)
}

func (e *ienv) dropLink(l *ilink) {
	if i := slices.Index(e.links, l); i >= 0 {
		e.links = slices.Delete(e.links, i, i+1)
	}
}

// breakLink ends a link at both ends.
func (e *ienv) breakLink(l *ilink, b *strings.Builder) {
	if !slices.Contains(e.links, l) {
		return
	}
	e.dropLink(l)
	if a := e.nodes[l.a]; a.down {
	} else if l.aLink != 0 {
		a.core.LinkDown(l.aLink, nil)
	} else if l.oneShot {
		a.core.Unreachable(l.addr)
	}
	if b := e.nodes[l.b]; !b.down {
		b.core.LinkDown(l.bLink, nil)
	}
	fmt.Fprintf(b, "link %s-%s ends\n", l.a, l.b)
}

func (e *ienv) breakLinksOf(id string, b *strings.Builder) {
	for _, l := range slices.Clone(e.links) {
		if l.a == id || l.b == id {
			e.breakLink(l, b)
		}
	}
	var kept []imsg
	for _, m := range e.inflight {
		if m.from != id && m.to != id {
			kept = append(kept, m)
		}
	}
	e.inflight = kept
}

// describeMsg prints a message with its fields.
func describeMsg(m Msg, err error) string {
	if err != nil {
		return "malformed: " + err.Error()
	}
	pos := func(ps []Position) string {
		var s []string
		for _, p := range ps {
			s = append(s, fmt.Sprintf("%s@%d", p.Name, p.LSN))
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	switch m := m.(type) {
	case SubscribeMsg:
		if m.Cascade {
			return fmt.Sprintf("Subscribe epoch=%d %s cascade", m.Epoch, pos(m.Positions))
		}
		return fmt.Sprintf("Subscribe epoch=%d %s", m.Epoch, pos(m.Positions))
	case NotPrimaryMsg:
		return fmt.Sprintf("NotPrimary %s epoch=%d primary=%q", m.Role, m.Epoch, m.Primary)
	case WelcomeMsg:
		if m.Relay {
			return fmt.Sprintf("Welcome epoch=%d primary=%s relay", m.Epoch, m.Primary)
		}
		return fmt.Sprintf("Welcome epoch=%d primary=%s", m.Epoch, m.Primary)
	case FramesMsg:
		return fmt.Sprintf("Frames %s at %d: %q", m.DB, m.Start, m.Frames)
	case SeedBeginMsg:
		return fmt.Sprintf("SeedBegin %s quarantine=%v (%s)", m.DB, m.Quarantine, m.Reason)
	case SeedChunkMsg:
		return fmt.Sprintf("SeedChunk %s %d bytes", m.DB, len(m.Data))
	case SeedEndMsg:
		return fmt.Sprintf("SeedEnd %s at %d", m.DB, m.LSN)
	case DropMsg:
		return fmt.Sprintf("Drop %s quarantine=%v", m.DB, m.Quarantine)
	case HeartbeatMsg:
		return fmt.Sprintf("Heartbeat ends=%s synced=%s", pos(m.Ends), pos(m.Synced))
	case AckMsg:
		return fmt.Sprintf("Ack %s epoch=%d written=%d applied=%d", m.DB, m.Epoch, m.Written, m.Applied)
	case KeepaliveMsg:
		return "Keepalive"
	case ProbeMsg:
		return fmt.Sprintf("Probe %s epoch=%d primary=%q flags=%d", m.State.Role, m.State.Epoch, m.State.Primary, m.State.Flags)
	case ProbeReplyMsg:
		return fmt.Sprintf("ProbeReply %s epoch=%d primary=%q flags=%d", m.State.Role, m.State.Epoch, m.State.Primary, m.State.Flags)
	case PositionsMsg:
		return "Positions?"
	case PositionsAreMsg:
		var s []string
		for _, d := range m.DBs {
			s = append(s, fmt.Sprintf("%s@%d", d.Name, d.LSN))
		}
		return "Positions [" + strings.Join(s, " ") + "]"
	case CatchUpMsg:
		return fmt.Sprintf("CatchUp %s %d..%d", m.DB, m.From, m.To)
	case CatchUpEndMsg:
		return fmt.Sprintf("CatchUpEnd %s at %d", m.DB, m.End)
	case VoteMsg:
		kind := "Vote"
		if m.Pre {
			kind = "PreVote"
		}
		if m.Transfer {
			kind += " transfer"
		}
		return fmt.Sprintf("%s term=%d %s", kind, m.Term, pos(m.DBs))
	case VoteReplyMsg:
		kind := "VoteReply"
		if m.Pre {
			kind = "PreVoteReply"
		}
		if m.Granted {
			return fmt.Sprintf("%s term=%d granted", kind, m.Term)
		}
		return fmt.Sprintf("%s term=%d refused: %s", kind, m.Term, m.Reason)
	}
	return fmt.Sprintf("%T", m)
}
