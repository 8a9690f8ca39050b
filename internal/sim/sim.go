package sim

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/vfs"
)

// Options are one run's parameters, all drawn from Seed by OptionsFromSeed
// (so that a seed alone replays a run).
type Options struct {
	Seed  uint64
	Nodes int
	// SafetySteps of faults and writes, then at most LivenessTicks for the
	// healed cluster to converge.
	SafetySteps   int
	LivenessTicks int
	// Event weights per step (out of their sum plus IdleWeight).
	WriteWeight, CrashWeight, RestartWeight, PartitionWeight, HealWeight, PromoteWeight, BreakWeight, DemoteWeight, IdleWeight int
	// CheckpointWeight: a node writes a checkpoint of every database, as
	// the server's background loop does, whatever its journal holds that
	// is not on disk yet (a secondary that acknowledges before its fsync,
	// DurableAcks false). A crash later recovers from the checkpoint and
	// the journal after it.
	CheckpointWeight int
	// CutPromoteWeight: the serving primary is cut off from every other
	// node without a word (its links stall), and the operator forces the
	// promotion of a secondary: the other secondaries must follow the new
	// primary at once, not when their silent link times out (checker
	// "follows at once"), and the old primary is fenced once it can reach
	// anyone again.
	CutPromoteWeight int
	// Cascade: n3 streams from n2 (its upstream, which relays the
	// primary's log) rather than from the primary, falling back to the
	// primary while n2 cannot serve it.
	Cascade bool
	// Raft: mode = "raft" (§17.9): no operator designates the primary,
	// the nodes elect it; 'primary' campaigns with transfer, 'secondary'
	// steps the leader down. Secondaries acknowledge durably (raft mode's
	// default). ClockJumpWeight: a node's clock jumps (its core ticks
	// through two election timeouts at once); FlapWeight: the link
	// between two nodes goes down and up every few ticks for a while.
	// StallWeight: a node stops for a while, as one whose disk stalls
	// on an fsync does (or a long pause of its process): no tick, no
	// message handled, no client write, until it resumes.
	Raft                                     bool
	ClockJumpWeight, FlapWeight, StallWeight int
	// LogStore: one node is a log-store node (node.kind = "log-store"):
	// n2 in a cascade (n3 streams through it), the last node otherwise,
	// a voting member in raft mode. It keeps the journals only, relays,
	// serves catch-ups, crashes and restarts like the others.
	LogStore bool
	// KeyLast: the simulated table's primary key is a fourth column
	// after values of every kind (id, node, payload), a signed integer
	// scrambled from the id (negative about half the time), so rows are
	// inserted in no key order; otherwise the key is the id, first and
	// ascending. The checker "key order" holds either way.
	KeyLast bool
	// IntKey: under KeyLast, the scrambled key is an int32 (a BIGINT
	// otherwise), so that an index over the payload, whose first values
	// are int32 too, packs its entries into one integer
	// (storage/entries.go) until a payload of another kind comes.
	IntKey bool
	// Reindex: some writes give the table another set of secondary
	// indexes instead (storage.Tx.Reindex), which keeps the trees that
	// already order the rows and builds the others; the checker "indexes"
	// holds through commits, replication, replay and checkpoints.
	Reindex bool
	// RowChanges: some writes update or delete a row instead: by its key
	// on the committed table (storage.DB.CommitRow, sometimes worked out
	// on the table as an earlier write read it, which must be refused as
	// stale when the row changed since), or in a transaction, moving the
	// row to a new key or removing it. The checker "row commit" holds at
	// each one; "same rows", "key order" and "indexes" hold after.
	RowChanges bool
	// BlockWrites: the journals write whole blocks as they do with direct
	// I/O (journal.WriteBlocks: the last block's bytes kept and written
	// again with each append, read back at each start and truncation),
	// through the page cache of the memory file system the simulator
	// runs on. The checkers that read journals after crashes and
	// restarts ("vanished", "ledger", "restart", "stream", "same rows")
	// hold with it.
	BlockWrites bool
	// GroupWriteOverlap: while a client write's group commit writes its
	// bytes, another commit sometimes appends to the same journal (from
	// journal.Options.DuringGroupWrite, on a goroutine of its own that the
	// write waits for): its frames follow the ones in flight and the next
	// fsync covers them. The checkers hold with it; a journal whose end
	// left out the bytes in flight would give the second commit the first
	// one's LSNs.
	GroupWriteOverlap bool
	// GatherJoin: when a one-row client write's group commit is about to
	// fsync (journal.Log.SyncToGathering), another commit sometimes
	// appends (journal.Options.DuringGather, on a goroutine of its own):
	// a group of two, for which the next one-row commit then waits, and
	// whose wait that commit's join ends. Drawn with GroupWriteOverlap.
	// The checkers hold with it: "acknowledged" (a commit returns only
	// once its bytes were written, which the fsync that acknowledged it
	// covers) fails for a group commit that acknowledges the commits it
	// gathered without writing them first.
	GatherJoin bool
	// HeldSnapshots: writers sometimes take a snapshot of the simulated
	// table (storage.DB.Snapshot, which freezes that version) and keep it
	// for a while, among one-row commits that change the committed trees
	// in place whenever no one holds them (storage.DB.CommitRow). The
	// checker "frozen" holds: a snapshot reads as it did when it was
	// taken, whatever was committed since.
	HeldSnapshots bool
	// WideRows: one row in 36 has a 70 KiB string payload, so that its commit
	// frame is larger than the buffers commits reuse (storage/db.go,
	// frameBuf) and follows or precedes commits that reuse one; the journal
	// copies every frame it is given, and "ledger" and "same rows" hold
	// through the buffers' reuse, direct-I/O blocks, the bytes kept for
	// readers and replication windows smaller than a frame.
	WideRows bool
	// SegmentBytes is the journals' segment size: 16 KiB, or so small
	// (down to 256 bytes) that segments roll every few transactions,
	// inside them on a follower, which appends frames as they arrive.
	// Recovery, truncation, retention and reads cross segment ends.
	SegmentBytes int64
	// KeepBytes is the journal each node keeps behind its checkpoints:
	// all of it, 4 KiB, or none (a checkpoint then removes the segments
	// before the older of the two checkpoints kept). A follower behind a
	// journal's start is sent a copy (repl.DecideStart); "vanished"
	// finds a removed transaction in the copy the database came from.
	KeepBytes int64
	// SlowWeight: a secondary becomes slow to apply for a while (its
	// frames queue up, unacknowledged, while the messages handled outside
	// the apply queue, such as SYNCED_LSN, still arrive).
	SlowWeight int
	// MaxDelay is the largest delivery delay of a message, in ticks.
	MaxDelay int
	// FaultPerMille: the chance, in thousandths, that a journal write or
	// fsync fails (the node's databases then refuse writes; the simulated
	// operator restarts it).
	FaultPerMille int
	// DurableAcks: secondaries fsync replicated frames before acknowledging
	// (ack = "durable"); otherwise they acknowledge what they wrote.
	DurableAcks bool
	// Window is the in-flight bytes a primary allows per database and
	// follower (the server's maxInFlightBytes, scaled down so that the
	// small runs exercise it: a small one keeps a follower behind the
	// SYNCED_LSN it hears of).
	Window int
	// Dir holds the nodes' data directories (removed at the end).
	Dir string
	// Trace, if set, receives one line per event.
	Trace io.Writer
}

func (o Options) String() string {
	return fmt.Sprintf("nodes=%d steps=%d liveness=%d weights(write=%d crash=%d restart=%d partition=%d heal=%d promote=%d break=%d demote=%d cut_promote=%d idle=%d) max_delay=%d durable_acks=%v window=%d",
		o.Nodes, o.SafetySteps, o.LivenessTicks, o.WriteWeight, o.CrashWeight, o.RestartWeight, o.PartitionWeight, o.HealWeight,
		o.PromoteWeight, o.BreakWeight, o.DemoteWeight, o.CutPromoteWeight, o.IdleWeight, o.MaxDelay, o.DurableAcks, o.Window) + fmt.Sprintf(" disk_faults=%d/1000 slow=%d checkpoint=%d key_last=%v int_key=%v reindex=%v row_changes=%v block_writes=%v group_write_overlap=%v gather_join=%v held_snapshots=%v wide_rows=%v segment_bytes=%d keep_bytes=%d cascade=%v raft=%v clock_jump=%d flap=%d stall=%d log_store=%v", o.FaultPerMille, o.SlowWeight, o.CheckpointWeight, o.KeyLast, o.KeyLast && o.IntKey, o.Reindex, o.RowChanges, o.BlockWrites, o.GroupWriteOverlap, o.GatherJoin, o.HeldSnapshots, o.WideRows, o.SegmentBytes, o.KeepBytes, o.Cascade, o.Raft, o.ClockJumpWeight, o.FlapWeight, o.StallWeight, o.LogStore)
}

// OptionsFromSeed expands a seed into a run's options.
func OptionsFromSeed(seed uint64, dir string) Options {
	r := rand.New(rand.NewPCG(seed, 0x6d6972616a))
	o := Options{
		Seed:            seed,
		Nodes:           3 + r.IntN(3),
		SafetySteps:     150 + r.IntN(150),
		LivenessTicks:   400,
		WriteWeight:     20 + r.IntN(40),
		CrashWeight:     1 + r.IntN(4),
		RestartWeight:   3 + r.IntN(5),
		PartitionWeight: r.IntN(5),
		HealWeight:      2 + r.IntN(4),
		PromoteWeight:   1 + r.IntN(3),
		BreakWeight:     r.IntN(4),
		DemoteWeight:    r.IntN(3),
		IdleWeight:      10 + r.IntN(30),
		MaxDelay:        1 + r.IntN(4),
		DurableAcks:     r.IntN(2) == 0,
		FaultPerMille:   []int{0, 5, 15, 40}[r.IntN(4)],
		Window:          []int{2048, 200}[r.IntN(2)],
		SlowWeight:      r.IntN(4),
		// Drawn last, so that the options before it stay as they were
		// for every seed.
		CheckpointWeight: r.IntN(5),
		KeyLast:          r.IntN(2) == 0,
		Reindex:          r.IntN(2) == 0,
		RowChanges:       r.IntN(2) == 0,
		BlockWrites:      r.IntN(2) == 0,
		IntKey:           r.IntN(2) == 0,
		// GroupWriteOverlap after the others, for the same reason.
		GroupWriteOverlap: r.IntN(2) == 0,
		// HeldSnapshots after the others, for the same reason.
		HeldSnapshots: r.IntN(2) == 0,
		// WideRows after the others, for the same reason.
		WideRows: r.IntN(2) == 0,
		// SegmentBytes after the others, for the same reason.
		SegmentBytes: []int64{16 << 10, 16 << 10, 4 << 10, 1 << 10, 256}[r.IntN(5)],
		// KeepBytes after the others, for the same reason.
		KeepBytes: []int64{1 << 40, 1 << 40, 4 << 10, 0}[r.IntN(4)],
		Dir:       dir,
	}
	// GatherJoin after the others, for the same reason.
	o.GatherJoin = o.GroupWriteOverlap && r.IntN(2) == 0
	// CutPromoteWeight after the others, for the same reason.
	o.CutPromoteWeight = r.IntN(3)
	// Cascade after the others, for the same reason.
	o.Cascade = r.IntN(3) == 0
	// Raft after the others, for the same reason. Raft mode has no
	// cascade (a member streams from the leader).
	if r.IntN(2) == 0 {
		o.Raft, o.Cascade, o.DurableAcks = true, false, true
		o.ClockJumpWeight, o.FlapWeight, o.StallWeight = r.IntN(3), r.IntN(3), r.IntN(3)
	}
	// LogStore after the others, for the same reason.
	o.LogStore = r.IntN(3) == 0
	return o
}

// Violation is a broken rule found by a checker.
type Violation struct {
	Seed    uint64
	Tick    int
	Checker string
	Msg     string
}

func (v Violation) String() string {
	return fmt.Sprintf("seed=%d tick=%d %s: %s", v.Seed, v.Tick, v.Checker, v.Msg)
}

// Result is what a run found.
type Result struct {
	Violations []Violation
	Writes     int // acknowledged client writes
	Promotions int
	Ticks      int
	// Confirmed counts writes confirmed by semi-synchronous commit;
	// ConfirmedWaived those a controlled promotion lost with every holder
	// out of reach (allowed by §17.8.6).
	Confirmed, ConfirmedWaived int
	// RowChanges counts committed row changes (Options.RowChanges);
	// StaleRefused the changes by key refused because their row had
	// changed since it was read.
	RowChanges, StaleRefused int
	// InPlace counts the one-row commits that changed the committed
	// trees in place (storage.DB.InPlaceCommits), TxInPlace the
	// transactions left open that did (their commit follows another
	// commit, whose catalog no one froze); SnapshotsHeld the snapshots
	// writers held (Options.HeldSnapshots).
	InPlace, TxInPlace, SnapshotsHeld int
	// SavepointRollbacks counts the row-change transactions that rolled a
	// second change back to a savepoint before they committed.
	SavepointRollbacks int
	// DeferredCommits and DeferredConflicts count the commits of row
	// deletes made without a snapshot (storage.DB.BeginDeferred), and
	// those refused because a commit replaced the row since it was read.
	DeferredCommits, DeferredConflicts int
	// GatherJoins counts the commits that appended while a group commit
	// waited for its group (Options.GatherJoin).
	GatherJoins int
	// Raft: the run was in raft mode; Elections counts the nodes that
	// took over after winning an election; MajorityConfirmed the writes
	// confirmed at MAJORITY.
	Raft              bool
	Elections         int
	MajorityConfirmed int
	// LogStore: the run had a log-store node (Options.LogStore).
	LogStore bool
	// Streamed transactions (stream.go): begun (their frames reached the
	// journal), committed, rolled back, rolled back to a savepoint then
	// committed, refused at commit (ErrConflict), left open in the
	// journal by a crash or a demotion of their node; Streams sums the
	// storage's counters of every database of every node.
	StreamsBegun, StreamsCommitted, StreamsRolledBack, StreamsToSavepoint, StreamsConflicted, StreamsLeftOpen int
	// StreamsAbortLost: rollbacks whose abort frame a disk fault kept out
	// of the journal, the node then taking a checkpoint before its restart.
	StreamsAbortLost int
	Streams          storage.StreamCounts
}

const dbTable = "t"

// nextWait numbers the semi-sync waits given to the cores.

// The simulated table: id, the writing node, and a payload of one of the
// kinds rows hold (payload); keyed by the id, or (Options.KeyLast) by a
// fourth column, the id scrambled (scrambledKey).
var (
	tableDef        = &storage.TableDef{Name: dbTable, NumCols: 3, AutoCol: -1, PK: []int{0}}
	tableDefKeyLast = &storage.TableDef{Name: dbTable, NumCols: 4, AutoCol: -1, PK: []int{3}}
)

// scrambledKey maps ids one to one onto signed integers in no particular
// order (multiplying by an odd number is a bijection modulo 2^64).
func scrambledKey(id int64) int64 { return int64(uint64(id) * 0x9e3779b97f4a7c15) }

// scrambledKey32 is scrambledKey onto int32s (a bijection modulo 2^32: the
// ids stay far below it).
func scrambledKey32(id int64) int32 { return int32(uint32(id) * 0x9e3779b9) }

// table returns the simulated table's definition.
func (w *world) table() *storage.TableDef {
	if w.opts.KeyLast {
		return tableDefKeyLast
	}
	return tableDef
}

// wideRow reports whether row id has a 70 KiB payload (Options.WideRows).
func (w *world) wideRow(id int64) bool { return w.opts.WideRows && id%36 == 5 }

// rowValues returns the values of row id written by node.
func (w *world) rowValues(id int64, node string) []any {
	vals := []any{id, node, payload(id)}
	if w.wideRow(id) {
		vals[2] = fmt.Sprintf("row %d %s", id, strings.Repeat("w", 70<<10))
	}
	switch {
	case w.opts.KeyLast && w.opts.IntKey:
		vals = append(vals, scrambledKey32(id))
	case w.opts.KeyLast:
		vals = append(vals, scrambledKey(id))
	}
	return vals
}

// payload is row id's third value. Its kind varies with id, so that rows
// stored compactly (storage/row.go), with and without NULLs, and rows
// holding a time (kept boxed) all go through commits, the journal,
// replication and replay; the checker "same rows" compares them with
// their Go types.
func payload(id int64) any {
	switch id % 9 {
	case 0:
		return nil
	case 1:
		return int32(-id)
	case 2:
		return uint16(id)
	case 3:
		return float32(id) / 4
	case 4:
		return -float64(id) / 3
	case 5:
		return fmt.Sprintf("row %d", id)
	case 6:
		return []byte{byte(id), 0, 255}
	case 7:
		return id%2 == 0
	}
	return time.Unix(id, 0).UTC()
}

func bind(def *storage.TableDef) ([]storage.Compare, error) {
	out := make([]storage.Compare, def.NumCols)
	for i := range out {
		out[i] = valueOrder
	}
	return out, nil
}

// valueOrder orders two non-NULL values of the simulated table: by kind
// (signed integers, unsigned integers, floats, strings, byte strings,
// booleans, times), then by value. Integers of one sign compare by value
// whatever their size, as the storage compares them without this
// function; a kind's values rank the same against any value of another,
// as a column's comparison of an integer with a constant does not fall as
// the integer rises.
func valueOrder(a, b any) int {
	ka, kb := kindRank(a), kindRank(b)
	if ka != kb {
		return cmp.Compare(ka, kb)
	}
	switch x := a.(type) {
	case int64, int32:
		return cmp.Compare(signedOf(x), signedOf(b))
	case uint16:
		return cmp.Compare(x, b.(uint16))
	case float32, float64:
		return cmp.Compare(floatOf(x), floatOf(b))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case bool:
		return cmp.Compare(b2i(x), b2i(b.(bool)))
	case time.Time:
		return x.Compare(b.(time.Time))
	}
	panic(fmt.Sprintf("sim: value of type %T", a))
}

// kindRank is the rank of v's kind in valueOrder.
func kindRank(v any) int {
	switch v.(type) {
	case int64, int32:
		return 0
	case uint16:
		return 1
	case float32, float64:
		return 2
	case string:
		return 3
	case []byte:
		return 4
	case bool:
		return 5
	case time.Time:
		return 6
	}
	panic(fmt.Sprintf("sim: value of type %T", v))
}

func signedOf(v any) int64 {
	if x, ok := v.(int32); ok {
		return int64(x)
	}
	return v.(int64)
}

func floatOf(v any) float64 {
	if x, ok := v.(float32); ok {
		return float64(x)
	}
	return v.(float64)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// world is one run.
type world struct {
	// overlapping: a commit made during a group write is running on a
	// goroutine of its own; disk faults are not drawn meanwhile, so that
	// the random sequence stays the main loop's.
	overlapping atomic.Bool
	opts        Options
	// faulty: storage answers a test breaks on purpose, to see the
	// checker that guards them fire (checkers_test.go); nil in a run.
	faulty *faultyStorage
	rng    *rand.Rand
	now    int
	nodes  []*node
	byID   map[string]*node
	net    network
	res    Result
	log    *slog.Logger

	// ledger: every transaction a primary wrote, by database identity,
	// LSN and epoch: the checkers compare journals against it.
	ledger map[ledgerKey]string
	// together[{a, b}]: since when two nodes taking writes in one epoch
	// have been able to reach each other.
	together map[[2]string]int
	nextID   int64
	// confirmed: writes confirmed to their client by semi-synchronous
	// commit, for the guarantee at promotion.
	confirmed []*confirmedWrite
	// gone: rows ("db/id") a committed row change deleted or moved to
	// another key (Options.RowChanges). The checks that a promotion keeps
	// the rows its peers hold and the confirmed writes pass over them:
	// such a row may be absent for good, its removal kept.
	gone map[string]bool
	// acks: the highest positions each node acknowledged, per database
	// identity and epoch, as it sent them.
	acks map[ackKey]repl.AckPos
	// nextWait numbers the semi-sync waits given to the cores.
	nextWait uint64
	// touched: the last tick a fault touched each node (a crash, a
	// restart, a partition or its healing, a link broken, slowness).
	touched map[string]int
	// flaps: links going down and up (Options.FlapWeight).
	flaps []flap
	// leaders: raft mode, the node that became primary in each term by
	// election; forcedTerms: terms taken by force_primary (outside the
	// one-leader rule).
	leaders     map[uint64]string
	forcedTerms map[uint64]bool
	// isolated: since when each raft leader has been cut off from a
	// majority (checker "lease").
	isolated map[string]int
	// Streamed transactions (stream.go): their number so far, their
	// parts by tag (and the tags in order), the newest stream counters of
	// every database object; inLiveness: none begins then.
	streamNum    int
	streamParts  map[string]*streamPart
	streamTags   []string
	streamCounts map[*storage.DB]storage.StreamCounts
	inLiveness   bool
	// finalStream: the streamed transaction the liveness phase runs when
	// none committed before (finalTries: those it began; one refused at
	// its commit is tried again).
	finalStream *streamTx
	finalTries  int
	// journalFaults counts the journal faults injected (diskFault): a
	// rollback, which returns no error, may have failed a journal.
	journalFaults int
	// failAbort makes the next journal write fail: set around a streamed
	// transaction's rollback, its abort frame is not written.
	failAbort bool
}

// touch records that a fault touched nodes now.
func (w *world) touch(ids ...string) {
	for _, id := range ids {
		w.touched[id] = w.now
	}
}

func (w *world) ids() []string {
	var out []string
	for _, n := range w.nodes {
		out = append(out, n.id)
	}
	return out
}

type ledgerKey struct {
	base  string
	lsn   journal.LSN
	epoch ballot
}

// Run executes one seed's run and returns what the checkers found.
func Run(opts Options) (res Result) {
	defer lowerWorkerBytes()()
	w := newWorld(opts)
	defer func() {
		if p := recover(); p != nil {
			// A panic is a broken invariant: reported with its stack.
			// The engines are left as they are: the panicking commit
			// may hold a lock their crash would wait on.
			w.violate("panic", fmt.Sprintf("%v\n%s", p, debug.Stack()))
			os.RemoveAll(opts.Dir)
			res = w.res
			return
		}
		for _, n := range w.nodes {
			if n.eng != nil {
				n.eng.Crash()
			}
		}
		os.RemoveAll(opts.Dir)
		res = w.res
	}()
	if !w.setup() {
		return
	}
	for ; w.now < opts.SafetySteps && len(w.res.Violations) == 0; w.now++ {
		w.randomEvent()
		w.advanceStreams()
		w.tick()
		w.check(w.now%10 == 0)
	}
	if len(w.res.Violations) == 0 {
		w.liveness()
	}
	w.res.Ticks = w.now
	w.res.Raft, w.res.LogStore = opts.Raft, opts.LogStore
	w.res.Streams = w.sumStreamCounts()
	if len(w.res.Violations) == 0 && (w.res.StreamsCommitted == 0 || w.res.Streams.Workers == 0) {
		w.violate("streams", fmt.Sprintf("streamed transactions committed in this run: %d, applied by a follower's worker: %d; want some of each", w.res.StreamsCommitted, w.res.Streams.Workers))
	}
	return
}

// newWorld prepares a run: nothing started yet.
func newWorld(opts Options) *world {
	w := &world{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x73696d)), byID: map[string]*node{},
		ledger: map[ledgerKey]string{}, together: map[[2]string]int{}, leaders: map[uint64]string{}, forcedTerms: map[uint64]bool{}, isolated: map[string]int{}, touched: map[string]int{}, acks: map[ackKey]repl.AckPos{}, gone: map[string]bool{},
		streamParts: map[string]*streamPart{}, streamCounts: map[*storage.DB]storage.StreamCounts{},
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w.net.links = map[int]*link{}
	w.net.cut = map[[2]string]bool{}
	return w
}

// setup starts the nodes and has the operator designate n1; it reports
// whether they started.
func (w *world) setup() bool {
	w.tracef("options: %s", w.opts)
	for i := 1; i <= w.opts.Nodes; i++ {
		id := fmt.Sprintf("n%d", i)
		n := &node{w: w, id: id, dir: filepath.Join(w.opts.Dir, id), held: map[txKey]bool{}}
		n.fs = vfs.NewCrashable(filepath.Join(w.opts.Dir, ".trash-"+id), w.fsFault)
		n.quar = &repl.Quarantine{FS: n.fs, Dir: n.stateDir(), Node: id, Cluster: "sim", Now: w.clock, Log: w.log}
		// The folders a node starts with (made before the run: durable).
		if err := os.MkdirAll(n.stateDir(), 0o755); err != nil {
			w.violate("setup", err.Error())
			return false
		}
		w.nodes = append(w.nodes, n)
		w.byID[id] = n
	}
	for _, n := range w.nodes {
		if err := n.start(); err != nil {
			w.violate("setup", err.Error())
			return false
		}
	}
	// The operator designates n1 (raft mode: the nodes elect a leader).
	if !w.opts.Raft {
		w.nodes[0].promote(false)
	}
	return true
}

func (w *world) tracef(format string, args ...any) {
	if w.opts.Trace != nil {
		line := fmt.Sprintf("t=%d "+format+"\n", append([]any{w.now}, args...)...)
		// Paths (in errors) name the run's own directory: a replay has
		// another one, and must print the same trace.
		if w.opts.Dir != "" {
			line = strings.ReplaceAll(line, w.opts.Dir, "<dir>")
		}
		io.WriteString(w.opts.Trace, line)
	}
}

func (w *world) violate(checker, msg string) {
	w.res.Violations = append(w.res.Violations, Violation{Seed: w.opts.Seed, Tick: w.now, Checker: checker, Msg: msg})
	w.tracef("VIOLATION %s: %s", checker, msg)
}

func (w *world) upNodes() []*node {
	var out []*node
	for _, n := range w.nodes {
		if n.eng != nil {
			out = append(out, n)
		}
	}
	return out
}

func (w *world) pick(ns []*node) *node {
	if len(ns) == 0 {
		return nil
	}
	return ns[w.rng.IntN(len(ns))]
}

// randomEvent draws one event from the weights.
func (w *world) randomEvent() {
	o := w.opts
	weights := []int{o.WriteWeight, o.CrashWeight, o.RestartWeight, o.PartitionWeight, o.HealWeight, o.PromoteWeight, o.BreakWeight, o.DemoteWeight, o.SlowWeight, o.CheckpointWeight, o.CutPromoteWeight, o.IdleWeight, o.ClockJumpWeight, o.FlapWeight, o.StallWeight}
	total := 0
	for _, x := range weights {
		total += x
	}
	r := w.rng.IntN(total)
	ev := 0
	for ; r >= weights[ev]; ev++ {
		r -= weights[ev]
	}
	switch ev {
	case 0:
		if n := w.pick(w.upNodes()); n != nil {
			n.clientWrite()
		}
	case 1:
		if up := w.upNodes(); len(up) > 1 {
			w.pick(up).crash()
		}
	case 2:
		var down []*node
		for _, n := range w.nodes {
			if n.eng == nil {
				down = append(down, n)
			}
		}
		if n := w.pick(down); n != nil {
			if err := n.start(); err != nil {
				w.violate("restart", fmt.Sprintf("%s does not start: %v", n.id, err))
			}
		}
	case 3:
		a, b := w.pick(w.nodes), w.pick(w.nodes)
		if a != b {
			both := w.rng.IntN(2) == 0
			// Half the partitions reset the links they cut; the others
			// stall them without a word (a firewall's DROP), for the link
			// timeout to find.
			silent := w.rng.IntN(2) == 0
			w.net.cut[[2]string{a.id, b.id}] = true
			if both {
				w.net.cut[[2]string{b.id, a.id}] = true
			}
			w.tracef("partition %s->%s both=%v silent=%v", a.id, b.id, both, silent)
			w.touch(a.id, b.id)
			if !silent {
				w.breakLinks()
			}
		}
	case 4:
		if w.rng.IntN(3) == 0 {
			w.net.cut = map[[2]string]bool{}
			w.tracef("heal all")
			w.touch(w.ids()...)
		} else if len(w.net.cut) > 0 {
			keys := sortedCuts(w.net.cut)
			k := keys[w.rng.IntN(len(keys))]
			delete(w.net.cut, k)
			w.tracef("heal %s->%s", k[0], k[1])
			w.touch(k[0], k[1])
		}
	case 5:
		var cands []*node
		for _, n := range w.upNodes() {
			if n.core.Role() == repl.RoleSecondary {
				cands = append(cands, n)
			}
		}
		if n := w.pick(cands); n != nil {
			// Raft mode: 'primary' campaigns with transfer; the
			// emergency lever is rarer.
			odds := 3
			if w.opts.Raft {
				odds = 12
			}
			n.promote(w.rng.IntN(odds) == 0)
		}
	case 7:
		var cands []*node
		for _, n := range w.upNodes() {
			if r := n.core.Role(); r == repl.RolePrimary || r == repl.RoleFenced {
				cands = append(cands, n)
			}
		}
		if n := w.pick(cands); n != nil {
			n.demote()
		}
	case 8:
		var cands []*node
		for _, n := range w.upNodes() {
			if n.core.Role() == repl.RoleSecondary {
				cands = append(cands, n)
			}
		}
		if n := w.pick(cands); n != nil {
			n.slowUntil = w.now + 10 + w.rng.IntN(40)
			w.tracef("%s slow until tick %d", n.id, n.slowUntil)
			w.touch(n.id)
		}
	case 9:
		if n := w.pick(w.upNodes()); n != nil {
			n.checkpoint()
		}
	case 10:
		p := w.servingPrimary()
		var cands []*node
		for _, n := range w.upNodes() {
			if n != p && n.core.Role() == repl.RoleSecondary {
				cands = append(cands, n)
			}
		}
		if n := w.pick(cands); p != nil && n != nil {
			for _, o := range w.nodes {
				if o != p {
					w.net.cut[[2]string{p.id, o.id}], w.net.cut[[2]string{o.id, p.id}] = true, true
				}
			}
			if w.opts.Raft {
				// The others elect a leader; the cut one steps down at
				// the end of its lease.
				w.tracef("leader %s cut off silently", p.id)
				w.touch(w.ids()...)
				break
			}
			w.tracef("primary %s cut off silently; %s promoted by force", p.id, n.id)
			w.touch(w.ids()...)
			n.promote(true)
		}
	case 12:
		if n := w.pick(w.upNodes()); n != nil {
			w.tracef("%s clock jumps %d ticks", n.id, 2*electionTicks)
			w.touch(n.id)
			for range 2 * electionTicks {
				n.core.Tick()
			}
			n.handleReady()
		}
	case 13:
		a, b := w.pick(w.nodes), w.pick(w.nodes)
		if a != b {
			w.flaps = append(w.flaps, flap{a: a.id, b: b.id, until: w.now + 20 + w.rng.IntN(60), every: 2 + w.rng.IntN(6)})
			w.tracef("link %s<->%s flaps", a.id, b.id)
		}
	case 14:
		if n := w.pick(w.upNodes()); n != nil {
			n.stallFrom, n.stallUntil = w.now, w.now+5+w.rng.IntN(2*electionTicks+10)
			w.tracef("%s stalls until tick %d", n.id, n.stallUntil)
			w.touch(n.id)
		}
	case 6:
		ids := w.net.linkIDs()
		if len(ids) > 0 {
			l := ids[w.rng.IntN(len(ids))]
			w.tracef("break link %d", l)
			if k := w.net.links[l]; k != nil {
				w.touch(k.a, k.b)
			}
			w.net.breakLink(w, l)
		}
	}
}

func sortedCuts(m map[[2]string]bool) [][2]string {
	out := make([][2]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

// breakLinks ends the links a partition cuts (TCP notices, one way or the
// other).
func (w *world) breakLinks() {
	for _, id := range w.net.linkIDs() {
		// Breaking one link can end others (a core that hears of it
		// closes what depended on it).
		l := w.net.links[id]
		if l != nil && !w.net.reachable(l.a, l.b) {
			w.net.breakLink(w, id)
		}
	}
}

// flap is a link going down and up (Options.FlapWeight).
type flap struct {
	a, b         string
	until, every int
}

// flapLinks cuts or heals each flapping pair, in turn.
func (w *world) flapLinks() {
	kept := w.flaps[:0]
	for _, f := range w.flaps {
		ab, ba := [2]string{f.a, f.b}, [2]string{f.b, f.a}
		if w.now >= f.until {
			delete(w.net.cut, ab)
			delete(w.net.cut, ba)
			continue
		}
		kept = append(kept, f)
		if w.now%f.every != 0 {
			continue
		}
		w.touch(f.a, f.b)
		if w.net.cut[ab] {
			delete(w.net.cut, ab)
			delete(w.net.cut, ba)
		} else {
			w.net.cut[ab], w.net.cut[ba] = true, true
			w.breakLinks()
		}
	}
	w.flaps = kept
}

// tick delivers what is due and lets time pass for every node.
func (w *world) tick() {
	w.flapLinks()
	for _, m := range w.net.due(w.now) {
		w.deliver(m)
	}
	for _, n := range w.nodes {
		if n.eng != nil && n.stallUntil == w.now && n.stallFrom < w.now {
			// Resumed: its clock says the time that passed (the
			// server's driver ticks by the monotonic clock).
			n.tracef("resumes after %d ticks", w.now-n.stallFrom)
			for range w.now - n.stallFrom {
				n.core.Tick()
			}
			n.stallFrom = w.now
			n.handleReady()
		}
		if n.eng != nil && !n.stalled() {
			n.duties()
		}
	}
}

// deliver hands one queued event to its node's core.
func (w *world) deliver(m message) {
	to := w.byID[m.to]
	if m.kind != closeMsg && to.eng != nil && to.stalled() {
		// A stalled node handles nothing: what comes waits (TCP's
		// buffers), in order.
		m.at = w.now + 1
		w.net.queue = append(w.net.queue, m)
		return
	}
	switch m.kind {
	case closeMsg:
		w.net.breakLink(w, m.link)
		return
	case unreachableMsg:
		if to.eng != nil {
			to.core.Unreachable(m.from)
			to.handleReady()
		}
		return
	case dialFailedMsg:
		if to.eng != nil {
			to.core.LinkDown(m.dialLink, errLinkBroken)
			to.handleReady()
		}
		return
	}
	l := w.net.links[m.link]
	if l == nil || to.eng == nil {
		return // the link broke: what was in flight is gone
	}
	if !w.net.passes(m.from, m.to) {
		// A silent partition: TCP retransmits, the link stalls (until it
		// heals, or a link timeout ends it), nothing is lost in between.
		m.at = w.now + 1
		w.net.queue = append(w.net.queue, m)
		return
	}
	switch m.kind {
	case connectedMsg:
		to.core.Connected(m.dialLink, m.from)
	case deliverMsg:
		lid := l.bLink
		if m.to == l.a {
			lid = l.aLink
			if l.oneShot {
				// A one-shot's answer, from the asked node (whose
				// address is its id).
				l.answered = true
				to.core.Answer(l.b, m.from, m.typ, m.payload)
				to.handleReady()
				return
			}
		}
		if m.typ == repl.MsgVote {
			// The checker "vote rule" judges the answer against the
			// question.
			if v, err := repl.DecodeMsg(m.typ, m.payload); err == nil && !v.(repl.VoteMsg).Pre {
				if to.asked == nil {
					to.asked = map[string]repl.VoteMsg{}
				}
				to.asked[m.from] = v.(repl.VoteMsg)
			}
		}
		if m.typ == repl.MsgPositions {
			// The checkers keep what the peer holds as it answers.
			from := w.byID[m.from]
			if from.answered == nil {
				from.answered = map[string]map[string]dbView{}
			}
			from.answered[m.to] = to.views()
		}
		to.core.Step(lid, m.from, m.typ, m.payload)
	}
	to.handleReady()
}

// liveness heals everything, restarts every node and checks that the
// cluster converges: one primary serving writes (designated by the operator
// if none does), every fenced node returned to service, every node caught
// up on every database the primary has.
func (w *world) liveness() {
	w.tracef("liveness phase")
	w.inLiveness = true
	w.net.cut = map[[2]string]bool{}
	w.flaps = nil
	w.touch(w.ids()...)
	w.opts.FaultPerMille = 0 // healed disks too
	for _, n := range w.nodes {
		if n.eng == nil {
			if err := n.start(); err != nil {
				w.violate("liveness", fmt.Sprintf("%s does not start: %v", n.id, err))
				return
			}
		}
	}
	deadline := w.now + w.opts.LivenessTicks
	designated := false
	for ; w.now < deadline; w.now++ {
		w.tick()
		w.check(false)
		if len(w.res.Violations) > 0 {
			return
		}
		p := w.servingPrimary()
		if p == nil && !designated && w.opts.Raft && len(w.forcedTerms) > 0 && w.now > deadline-w.opts.LivenessTicks+8*electionTicks {
			// §17.9.8: after forced promotions, the survivors' databases
			// can contradict each other (each lacks one another holds, or
			// holds it on an older epoch): the election stays blocked,
			// and 'force_primary' is the operator's lever. Without a
			// forced promotion in the run, a blocked election is a
			// liveness failure.
			var best *node
			for _, n := range w.nodes {
				if n.eng != nil && !n.isLogStore() && n.core.Role() == repl.RoleSecondary && (best == nil || n.st.Epoch > best.st.Epoch) {
					best = n
				}
			}
			if best != nil {
				w.tracef("election blocked since the heal: the operator forces %s (%s)", best.id, best.core.LastError())
				best.promote(true)
				designated = true
			}
			continue
		}
		if p == nil && !designated && !w.opts.Raft && w.now > deadline-w.opts.LivenessTicks+2*probeEvery {
			// The operator designates the secondary of the highest epoch
			// (no automatic election in manual mode).
			var best *node
			for _, n := range w.nodes {
				if n.eng != nil && !n.isLogStore() && n.core.Role() == repl.RoleSecondary && (best == nil || n.st.Epoch > best.st.Epoch) {
					best = n
				}
			}
			if best != nil {
				best.promote(true)
				designated = true
			}
			continue
		}
		if p != nil {
			// The operator returns every fenced node to service
			// (§17.4.2, step 6): the cluster converges with all of them.
			for _, n := range w.nodes {
				if n.eng != nil && n.core.Role() == repl.RoleFenced {
					n.demote()
				}
			}
		}
		if p != nil && w.finalStream != nil {
			p.driveFinalStream()
			continue
		}
		if p != nil && w.converged(p) {
			if (w.res.StreamsCommitted == 0 || w.sumStreamCounts().Workers == 0) && w.finalTries < 4 {
				// No streamed transaction committed in the safety phase,
				// or none reached a follower's worker: one now, so that
				// every run has one, which the followers apply in a
				// worker before the cluster counts as converged.
				w.finalTries++
				p.beginFinalStream()
				continue
			}
			w.tracef("converged on primary %s", p.id)
			w.check(true)
			return
		}
		if p != nil && w.now%5 == 0 {
			p.clientWrite()
			w.advanceStreams()
		}
	}
	var state []string
	for _, n := range w.nodes {
		peer, welcomed := n.core.Following()
		state = append(state, fmt.Sprintf("%s %s epoch %d following %q (welcomed %v)", n.id, n.core.Role(), n.st.Epoch, peer, welcomed))
	}
	w.violate("liveness", fmt.Sprintf("no convergence within %d ticks: %s", w.opts.LivenessTicks, strings.Join(state, "; ")))
}

// servingPrimary returns the one node taking writes, if exactly one does.
func (w *world) servingPrimary() *node {
	var p *node
	for _, n := range w.nodes {
		if n.eng != nil && !n.eng.ReadOnly() {
			if p != nil {
				return nil
			}
			p = n
		}
	}
	return p
}

// converged: every node follows p and has applied all of p's databases
// (and holds no other).
func (w *world) converged(p *node) bool {
	for _, n := range w.nodes {
		if n == p {
			continue
		}
		if n.eng == nil {
			return false
		}
		// A cascade streams from its upstream, once the upstream follows
		// (n3 falls back to the primary while n2 cannot serve it).
		want := p.id
		if up := n.upstream(); up != nil && up != p {
			want = up.id
		}
		if peer, welcomed := n.core.Following(); peer != want || !welcomed {
			return false
		}
		pdbs, ndbs := p.dbInfos(), n.dbInfos()
		if len(pdbs) != len(ndbs) {
			return false
		}
		for i, pdb := range pdbs {
			ndb := ndbs[i]
			// (A log store's Applied is the end of its last complete
			// transaction: what it holds of the primary's log.)
			if pdb.Name != ndb.Name || !bytes.Equal(pdb.BaseID, ndb.BaseID) || pdb.Applied != ndb.Applied {
				return false
			}
		}
	}
	return true
}

var bg = context.Background()

// clock is the simulated time: one millisecond per tick, so that commit
// frames are the same bytes in every replay.
func (w *world) clock() time.Time { return time.UnixMilli(1_800_000_000_000 + int64(w.now)) }

// errDisk is an injected disk error.
var errDisk = errors.New("sim: injected disk error")

// fsFault decides whether an operation on a node's files other than its
// journals fails (the cluster state, checkpoints, database folders,
// quarantine), at the disk fault rate.
func (w *world) fsFault(op vfs.Op, path string) error {
	if w.overlapping.Load() {
		return nil
	}
	if w.opts.FaultPerMille > 0 && w.rng.IntN(1000) < w.opts.FaultPerMille {
		w.tracef("disk fault on %s of %s", op, path)
		return errDisk
	}
	return nil
}

// diskFault decides whether a journal write or fsync fails.
func (w *world) diskFault(op journal.FaultOp) error {
	if w.overlapping.Load() {
		return nil
	}
	if w.failAbort && op == journal.FaultWrite {
		w.failAbort = false
		w.tracef("disk fault on %s (an abort frame)", op)
		w.journalFaults++
		return errDisk
	}
	if w.opts.FaultPerMille > 0 && w.rng.IntN(1000) < w.opts.FaultPerMille {
		w.tracef("disk fault on %s", op)
		w.journalFaults++
		return errDisk
	}
	return nil
}
