package repl

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/journal"
)

// Promotion in the core (§17.4.1), as messages and ticks:
//
//  1. Promote: refusals that need no peer (promoting, fenced, a copy being
//     received); then a Probe and a Positions question to every peer.
//  2. Once every peer answered both or is unreachable, or ProbeWaitTicks
//     passed: the refusals (PromotionRefusals, PlanCatchUp, SYNCED_LSN,
//     max_promotion_lag_mb) decide; Ready.Answers carries the verdict and
//     the node is PROMOTING. It stops following.
//  3. Once the storage operations of the follow link are done: the
//     catch-up, step by step, each on a link of its own (CatchUp, Frames…,
//     CatchUpEnd), the frames appended durably at the same LSNs.
//  4. OpCutTails: an unterminated transaction of the former primary goes to
//     quarantine.
//  5. The epoch above every one known, persisted (Ready.State), the gate
//     opened, OpMarkEpochs, and the announcement: a probe of every peer,
//     repeated every RetryTicks to those that did not answer.

// promoteRun is a promotion under way.
type promoteRun struct {
	force bool
	// raft: the taking over of a node elected at term (core_elect.go):
	// no probe, the voters' positions, the term it was elected in.
	raft bool
	term Epoch
	here string // a refusal that needed no peer (forced past)
	// wait: the peers whose answers are awaited (step 1); got: which of
	// the two each gave (1 probe, 2 positions).
	wait      *waitSet
	got       map[string]int
	answers   map[string]PeerState // by lower-case id: the newest state each peer showed
	positions []PeerDatabases
	accepted  bool
	// planned: the plan was made again once the storage operations of
	// the follow link were done (the decision's plan started from the
	// journal ends of that moment).
	planned bool
	plan    []CatchUpStep
	step    int
	// catchLink: the link of the present step; catchEnd its CatchUpEnd.
	catchLink LinkID
	catchEnd  journal.LSN
	gotEnd    bool
	cutting   bool
}

// Promote designates this node the primary of a new epoch: SET GLOBAL
// cluster_role = 'primary' (force false) or 'force_primary'. An error is a
// refusal that needed no peer; nil means the probe is under way and
// Ready.Answers will carry the verdict.
func (c *Core) Promote(force bool) error {
	if c.cfg.LogStore {
		return c.refuse(logStoreRefusal)
	}
	if c.cfg.Raft && !force {
		return c.campaignNow()
	}
	var here string
	switch {
	case c.role == RolePrimary:
		c.out.Answers = append(c.out.Answers, PromoteAnswer{})
		return nil
	case c.role == RolePromoting || c.promo != nil:
		return c.refuse("cluster promotion in progress")
	case c.role == RoleFenced:
		here = "cluster_role = FENCED"
	case c.Seeding():
		here = "replication bootstrap in progress"
	}
	if here != "" && !force {
		return c.refuse(here)
	}
	p := &promoteRun{force: force, here: here, got: map[string]int{}, answers: map[string]PeerState{},
		wait: &waitSet{peers: map[string]bool{}, deadline: c.now + c.cfg.ProbeWaitTicks}}
	c.promo = p
	for _, addr := range c.cfg.Seeds {
		p.wait.peers[addr] = true
		c.ask(addr, ProbeMsg{State: c.selfState()})
		c.ask(addr, PositionsMsg{})
	}
	c.promoteProgress()
	return nil
}

func (c *Core) refuse(why string) error {
	c.eventf(slog.LevelError, "Cluster: promotion of %s refused: %s", c.cfg.ID, why)
	return fmt.Errorf("%w: %s", ErrPromotionRefused, why)
}

// promoteProgress moves an accepted or probing promotion on.
func (c *Core) promoteProgress() {
	p := c.promo
	if p == nil {
		return
	}
	if !p.accepted {
		if !p.wait.done(c.now) {
			return
		}
		for _, addr := range slices.Sorted(mapKeys(p.wait.peers)) {
			c.eventf(slog.LevelWarn, "Cluster: promotion of %s: peer %s unreachable", c.cfg.ID, addr)
		}
		p.wait = nil
		if !c.decidePromotion() {
			return
		}
	}
	if c.pendingOps > 0 || p.catchLink != 0 || p.cutting {
		return // storage is busy, a step is under way, or the tails are being cut
	}
	if !p.planned {
		// What the follow link was still writing when the promotion was
		// decided is in the journals now: the catch-up starts from there.
		p.planned = true
		var refusals []string
		p.plan, refusals = PlanCatchUp(c.localDBs(), p.positions)
		if p.raft && len(refusals) > 0 {
			// §17.9.2: an impossible catch-up abandons the election.
			c.promotionFailed(fmt.Errorf("election at term %d abandoned: %s", p.term, strings.Join(refusals, "; ")))
			return
		}
	}
	if p.step < len(p.plan) {
		s := p.plan[p.step]
		p.catchLink, p.gotEnd = c.dial(s.Peer, s.Addr, LinkCatchUp), false
		return
	}
	p.cutting = true
	c.out.Ops = append(c.out.Ops, Op{Kind: OpCutTails})
}

// decidePromotion applies the refusals to the answers; it reports whether
// the promotion goes on.
func (c *Core) decidePromotion() bool {
	p := c.promo
	reasons := PromotionRefusals(c.st, p.answerList())
	if p.here != "" {
		reasons = append([]string{p.here}, reasons...)
	}
	// A peer that showed itself (an answer, or a probe of its own) but did
	// not answer both questions is reachable, and what it holds is not
	// known: a controlled promotion cannot tell what it would lose.
	heard := map[string]bool{}
	for key := range p.answers {
		heard[key] = true
	}
	for key := range p.got {
		heard[key] = true
	}
	for _, key := range slices.Sorted(mapKeys(heard)) {
		switch p.got[key] {
		case 3:
		case 2:
			reasons = append(reasons, fmt.Sprintf("node %s said its positions but did not answer the probe in time", key))
		default:
			reasons = append(reasons, fmt.Sprintf("node %s is reachable but did not say its positions in time", key))
		}
	}
	local := c.localDBs()
	plan, catchUpRefusals := PlanCatchUp(local, p.positions)
	reasons = append(reasons, catchUpRefusals...)
	// SYNCED_LSN of every database the primary confirmed writes of: this
	// node holds them if it holds that incarnation far enough (after the
	// catch-up); another incarnation, or none, holds none of them.
	synced := map[string]journal.LSN{}
	for key, s := range c.synced {
		synced[key] = s.LSN
	}
	held := make([]LocalDB, 0, len(local))
	other := map[string]bool{}
	for _, l := range local {
		if s, ok := c.synced[strings.ToLower(l.Name)]; ok && !bytes.Equal(s.BaseID, l.BaseID) {
			l.End, other[strings.ToLower(l.Name)] = 0, true
		}
		held = append(held, l)
	}
	var heldPlan []CatchUpStep
	for _, st := range plan {
		if !other[strings.ToLower(st.DB)] {
			heldPlan = append(heldPlan, st)
		}
	}
	reasons = append(reasons, PromotionSyncedRefusals(held, heldPlan, synced)...)
	if lag := c.lagAfter(local, plan); c.cfg.MaxPromotionLag > 0 && lag > c.cfg.MaxPromotionLag {
		reasons = append(reasons, fmt.Sprintf("lag of %d bytes after catch-up exceeds max_promotion_lag_mb (%d)", lag, c.cfg.MaxPromotionLag>>20))
	}
	if c.role == RolePrimary || c.role == RolePromoting {
		reasons = append(reasons, "cluster promotion in progress")
		p.force = false
	}
	if len(reasons) > 0 && !p.force {
		c.promo = nil
		c.out.Answers = append(c.out.Answers, PromoteAnswer{Err: c.refuse(strings.Join(reasons, "; "))})
		return false
	}
	for _, r := range reasons {
		c.eventf(slog.LevelError, "Cluster: promotion of %s (forced): %s", c.cfg.ID, r)
	}
	p.accepted, p.plan = true, plan
	c.role = RolePromoting
	c.out.Answers = append(c.out.Answers, PromoteAnswer{})
	if len(plan) == 0 {
		c.eventf(slog.LevelInfo, "Cluster: promotion of %s: without catch-up", c.cfg.ID)
	} else {
		var total journal.LSN
		for _, s := range plan {
			total += s.To - s.From
		}
		c.eventf(slog.LevelInfo, "Cluster: promotion of %s: catch-up planned from %s (%d bytes over %d database(s))", c.cfg.ID, plan[0].Peer, total, len(plan))
	}
	if c.follow.link != 0 {
		c.closeLink(c.links[c.follow.link])
	}
	return true
}

// localDBs describes this node's databases for PlanCatchUp.
func (c *Core) localDBs() []LocalDB {
	var local []LocalDB
	for _, db := range c.log.Databases() {
		local = append(local, LocalDB{Name: db.Name, BaseID: db.BaseID, Hist: db.RecvHist, End: db.End})
	}
	return local
}

// PromotionAnswers returns, while a promotion runs past its decision, the
// peers that answered both of its questions (the simulator's checkers).
func (c *Core) PromotionAnswers() []PeerState {
	if c.promo == nil {
		return nil
	}
	return c.promo.answeredBoth()
}

func (p *promoteRun) answerList() []PeerState {
	var out []PeerState
	for _, key := range slices.Sorted(mapKeys(p.answers)) {
		out = append(out, p.answers[key])
	}
	return out
}

// answeredBoth lists the peers that answered both questions (the
// simulator's checkers hold the promotion to what they held).
func (p *promoteRun) answeredBoth() []PeerState {
	var out []PeerState
	for _, a := range p.answerList() {
		if p.got[strings.ToLower(a.ID)] == 3 {
			out = append(out, a)
		}
	}
	return out
}

// lagAfter is what this node would still lack, after the planned catch-up,
// of the log ends its primary last announced (max_promotion_lag_mb).
func (c *Core) lagAfter(local []LocalDB, plan []CatchUpStep) int64 {
	to := map[string]journal.LSN{}
	for _, s := range plan {
		to[strings.ToLower(s.DB)] = s.To
	}
	var lag int64
	for _, l := range local {
		key := strings.ToLower(l.Name)
		end, ok := to[key]
		if !ok {
			end = l.End
		}
		if p, known := c.primaryLSN[key]; known && p > end {
			lag += int64(p - end)
		}
	}
	return lag
}

// catchUpConnected asks the peer for the present step's bytes.
func (c *Core) catchUpConnected(l *linkState) {
	p := c.promo
	if p == nil || p.catchLink != l.id {
		c.closeLink(l)
		return
	}
	s := p.plan[p.step]
	c.send(l, CatchUpMsg{DB: s.DB, BaseID: s.BaseID, From: s.From, To: s.To})
}

// stepCatchUp handles the frames and the end of a catch-up step.
func (c *Core) stepCatchUp(l *linkState, m Msg) {
	p := c.promo
	if p == nil || p.catchLink != l.id || p.gotEnd {
		c.protocolError(l, m)
		return
	}
	s := p.plan[p.step]
	switch m := m.(type) {
	case FramesMsg:
		if !strings.EqualFold(m.DB, s.DB) {
			c.protocolError(l, m)
			return
		}
		c.pendingOps++
		// The promoted node's journal: durable before it serves.
		c.out.Ops = append(c.out.Ops, Op{Kind: OpAppend, Link: l.id, DB: s.DB, At: m.Start, Data: m.Frames, Durable: true})
	case CatchUpEndMsg:
		if !strings.EqualFold(m.DB, s.DB) {
			c.protocolError(l, m)
			return
		}
		p.gotEnd, p.catchEnd = true, m.End
		c.catchUpStepDone()
	default:
		c.protocolError(l, m)
	}
}

// catchUpAppended is Appended for the catch-up link.
func (c *Core) catchUpAppended(err error) {
	if err != nil {
		c.catchUpFailed(err)
		return
	}
	c.catchUpStepDone()
}

// catchUpStepDone ends the present step once its end came and every frame
// is appended: the journal must end where the peer said.
func (c *Core) catchUpStepDone() {
	p := c.promo
	if !p.gotEnd || c.pendingOps > 0 {
		return
	}
	s := p.plan[p.step]
	info, _ := c.dbInfo(s.DB)
	if info.End != p.catchEnd {
		c.catchUpFailed(fmt.Errorf("catch-up from %s: ended at %d, journal at %d", s.Peer, p.catchEnd, info.End))
		return
	}
	c.eventf(slog.LevelInfo, "Cluster: catch-up from %s finished (%d bytes, database %s)", s.Peer, s.To-s.From, s.DB)
	link := p.catchLink
	p.catchLink = 0
	p.step++
	c.closeLink(c.links[link])
}

// catchUpFailed ends the present step in failure: a controlled promotion
// is abandoned, a forced one goes on with the next step.
func (c *Core) catchUpFailed(err error) {
	p := c.promo
	s := p.plan[p.step]
	link := p.catchLink
	p.catchLink = 0
	c.closeLink(c.links[link])
	err = fmt.Errorf("catch-up from %s: %w", s.Peer, err)
	if !p.force {
		c.promotionFailed(err)
		return
	}
	c.eventf(slog.LevelError, "Cluster: promotion of %s (forced): %v", c.cfg.ID, err)
	p.step++
}

// catchUpEnded: the catch-up link ended before its step did.
func (c *Core) catchUpEnded(l *linkState, err error) {
	p := c.promo
	if p == nil || p.catchLink != l.id {
		return
	}
	if p.gotEnd {
		return // closed after its end: the appends finish the step
	}
	if err == nil {
		err = fmt.Errorf("link closed before the end")
	}
	c.catchUpFailed(err)
}

// promotionFailed abandons the promotion.
func (c *Core) promotionFailed(err error) {
	c.eventf(slog.LevelError, "Cluster: promotion of %s abandoned: %v", c.cfg.ID, err)
	c.role = c.st.Role
	c.lastError = err.Error()
	c.promo = nil
}

// TailsCut reports the end of OpCutTails; the promotion then takes its
// epoch.
func (c *Core) TailsCut(err error) {
	p := c.promo
	if p == nil || !p.cutting {
		return
	}
	if err != nil {
		c.promotionFailed(err)
		return
	}
	// The epoch above every one this node knows (an unreachable peer
	// does not stop the promotion); in raft mode, the term it was elected
	// in, if it is still the node's.
	next := State{Role: RolePrimary, Epoch: c.st.Epoch + 1, Primary: c.cfg.ID}
	for _, e := range c.peerEpoch {
		if e >= next.Epoch {
			next.Epoch = e + 1
		}
	}
	if c.cfg.Raft {
		next.Vote = c.cfg.ID
	}
	if p.raft {
		if c.st.Epoch != p.term || c.st.Vote != c.cfg.ID || c.st.Primary != "" || c.newerEpochSeen(p.term) {
			c.promotionFailed(fmt.Errorf("election at term %d abandoned: the node is at term %d", p.term, c.st.Epoch))
			return
		}
		next.Epoch = p.term
	}
	c.promo = nil
	if err := c.transition(next, "promotion"); err != nil {
		c.promo = p
		c.promotionFailed(err)
		return
	}
	c.out.Ops = append(c.out.Ops, Op{Kind: OpMarkEpochs})
	c.lastError = ""
	c.eventf(slog.LevelInfo, "Cluster: %s is primary of epoch %d", c.cfg.ID, next.Epoch)
	if c.cfg.Raft {
		c.el.quorumAt, c.el.forced = c.now, !p.raft
		if !p.raft {
			c.eventf(slog.LevelWarn, "Cluster: forced promotion outside quorum: confirmed writes possibly lost (%s, term %d; no lease until a majority has joined it)", c.cfg.ID, next.Epoch)
		}
	}
	// The announcement, repeated to whoever does not answer, once the
	// new state is on disk (Advance): a primary whose state could not be
	// saved announces nothing.
	c.announcePending = true
}

// announceSaved announces a promotion whose state is on disk.
func (c *Core) announceSaved() {
	if !c.announcePending || c.saved.Role != RolePrimary {
		return
	}
	c.announcePending = false
	c.announce = map[string]bool{}
	for _, addr := range c.cfg.Seeds {
		c.announce[addr] = true
	}
	c.probeAll()
}

// Demote is SET GLOBAL cluster_role = 'secondary': a primary's planned
// switchover (§17.4.3) or a fenced node's return to service (§17.4.2).
func (c *Core) Demote() error {
	switch c.role {
	case RoleSecondary:
		return nil
	case RolePromoting:
		return fmt.Errorf("cluster_role: a promotion is in progress")
	}
	why := "planned switchover"
	if c.role == RoleFenced {
		why = "fenced node returned to service"
	}
	if c.cfg.Raft && c.role == RolePrimary {
		// §17.9.6: the leader gives up and does not stand for two
		// election timeouts: another member is elected.
		c.el.noStandUntil = c.now + 2*c.cfg.ElectionTicks
		c.eventf(slog.LevelInfo, "Cluster: %s steps down (SET GLOBAL cluster_role = 'secondary'); not standing for %d ms", c.cfg.ID, 2*c.cfg.ElectionTicks*c.cfg.TickMillis)
		return c.stepDown("leader stepped down", State{Role: RoleSecondary, Epoch: c.st.Epoch, Primary: c.st.Primary})
	}
	return c.transition(State{Role: RoleSecondary, Epoch: c.st.Epoch, Primary: c.st.Primary}, why)
}
