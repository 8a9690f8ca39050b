package repl

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"

	epochpkg "github.com/miraj-db/miraj/internal/epoch"
)

// Raft mode in the core (§17.9), as messages and ticks, after
// etcd-io/raft (pre-vote, check-quorum lease, leader transfer) but on
// Miraj's per-database log:
//
//   - the term is the epoch; a vote, at most one per term, is in the
//     saved State (State.Vote) before the reply leaves (Advance sends the
//     replies the saved state covers);
//   - a follower that has not heard its leader for a timeout drawn in
//     [ElectionTicks, 2×ElectionTicks) first asks every member whether
//     it would vote (Pre): nothing changes on their side, and a member
//     that still hears its leader says no (stickiness), so a node back
//     from isolation does not depose a healthy leader;
//   - with a majority of yes (itself included), it takes the next term,
//     votes for itself and asks for votes; a member grants one when its
//     own databases are not more up to date (VoteRefusal);
//   - elected, it catches up from the most advanced of its voters
//     (PlanCatchUp on their answers), cuts its unterminated tails and
//     becomes primary in its term: the steps of a promotion
//     (core_promote.go), without the probe;
//   - a leader that has not heard a majority (itself included) for
//     ElectionTicks steps down (the lease); one that sees a higher term is
//     demoted, not fenced.
//
// SET GLOBAL cluster_role = 'primary' campaigns at once with transfer
// (voters set their stickiness aside, the leader gives up); 'secondary'
// on the leader steps down and does not stand for two timeouts;
// 'force_primary' is the promotion of manual mode, with no lease until a
// majority has joined.

type electPhase uint8

const (
	electIdle electPhase = iota
	electPreVote
	electVote
)

// election is raft mode's state in the core (memory only but for the
// term and vote, which are in State).
type election struct {
	rng *rand.Rand
	// timeout: this round's silence before standing; heard: the tick the
	// leader was last heard (hearsLeader); since: the tick the timer was
	// last reset (start, a campaign's end).
	timeout, heard, since int
	// The campaign under way.
	phase    electPhase
	term     Epoch
	transfer bool
	// asked: SET GLOBAL cluster_role = 'primary' waits for the verdict.
	asked    bool
	deadline int
	waiting  map[string]bool          // seed addresses not answered yet
	yes      map[string]PeerDatabases // by lower-case id, this node included
	answered int                      // members that answered
	refusals []string
	// On the leader: the last tick a majority was heard (the lease);
	// forced: promoted by force_primary, no lease until a majority joins.
	quorumAt int
	forced   bool
	// noStandUntil: after 'secondary' on the leader.
	noStandUntil int
	// pending: votes granted whose state is not saved yet.
	pending []pendingVote
	// refusedLogged: the tick a refused question of a peer outside the
	// rules was last logged (once per peer per minute).
	refusedLogged map[string]int
	notStanding   string
	counts        ElectionCounts
}

// pendingVote is a granted vote's reply, sent once the vote is on disk.
type pendingVote struct {
	link  LinkID
	term  Epoch
	vote  string
	reply VoteReplyMsg
}

// ElectionCounts are the counters of raft mode (SHOW STATUS LIKE
// 'Miraj_cluster_election%').
type ElectionCounts struct {
	// Started: campaigns at a new term (pre-votes that won); Won, Lost:
	// their outcomes; PreVotesFailed: pre-votes without a majority;
	// VotesGranted, VotesRefused: answers to real votes; StepDowns:
	// leaders that gave up (lease, higher term, transfer, 'secondary').
	Started, Won, Lost, PreVotesFailed, VotesGranted, VotesRefused, StepDowns uint64
}

// ElectionStatus is raft mode as the node sees it.
type ElectionStatus struct {
	Raft        bool
	Phase       string // "", "PRE-VOTE", "CANDIDATE"
	Term        Epoch
	Vote        string
	Leader      string
	Campaign    Epoch // the term of the campaign under way (0: none)
	Transfer    bool
	NotStanding string
	Counts      ElectionCounts
}

func (c *Core) initElection() {
	c.el.rng = rand.New(rand.NewPCG(c.cfg.RandSeed, 0x656c656374))
	c.el.refusedLogged = map[string]int{}
	c.el.heard = -1 << 30
	c.resetElectionTimer()
}

// resetElectionTimer starts a new silence, of a new random length.
func (c *Core) resetElectionTimer() {
	c.el.since = c.now
	c.el.timeout = c.cfg.ElectionTicks + c.el.rng.IntN(max(c.cfg.ElectionTicks, 1))
}

// majority is N/2+1 of the members (this node and its seeds).
func (c *Core) majority() int { return c.members()/2 + 1 }

// hearsLeader is the stickiness: a leader (or one taking over) hears
// itself; a follower heard its leader within ElectionTicks: a message on
// its follow link, the leader's announcement, or its own vote for the
// candidate (who has not had the time to be heard yet).
func (c *Core) hearsLeader() bool {
	switch c.role {
	case RolePrimary, RolePromoting:
		return true
	case RoleSecondary:
		return c.now-c.el.heard < c.cfg.ElectionTicks
	}
	return false
}

// electionTick runs raft mode's timers: a follower's election timeout, a
// campaign's deadline, the leader's lease.
func (c *Core) electionTick() {
	if !c.cfg.Raft {
		return
	}
	el := &c.el
	if c.role == RolePrimary {
		c.leaseTick()
		return
	}
	if el.phase != electIdle {
		if c.now >= el.deadline {
			c.campaignLost()
		}
		return
	}
	if c.role != RoleSecondary || c.promo != nil || c.now-max(el.heard, el.since) < el.timeout {
		return
	}
	if why := c.cannotStand(); why != "" {
		if why != el.notStanding {
			c.eventf(slog.LevelInfo, "Cluster: %s does not stand for election: %s", c.cfg.ID, why)
		}
		el.notStanding = why
		c.resetElectionTimer()
		return
	}
	el.notStanding = ""
	c.startPreVote()
}

// cannotStand says why this node may not be a candidate now ("" if it
// may).
func (c *Core) cannotStand() string {
	switch {
	case c.cfg.LogStore:
		return "a log-store node never stands for election (it votes)"
	case c.now < c.el.noStandUntil:
		return fmt.Sprintf("stepped down by SET GLOBAL cluster_role = 'secondary' (not standing for %d ms)", (c.el.noStandUntil-c.now)*c.cfg.TickMillis)
	case c.Seeding():
		return "a copy of a database is being received"
	}
	return ""
}

// voteMsg is this node's question for the campaign under way.
func (c *Core) voteMsg(pre bool) VoteMsg {
	return VoteMsg{Cluster: c.cfg.Cluster, Term: c.el.term, Pre: pre, Transfer: c.el.transfer, Advertise: c.cfg.Advertise, DBs: c.positions()}
}

// askAll sends the campaign's question to every member.
func (c *Core) askAll(pre bool) {
	el := &c.el
	el.yes = map[string]PeerDatabases{strings.ToLower(c.cfg.ID): {ID: c.cfg.ID}}
	el.waiting, el.answered, el.refusals = map[string]bool{}, 0, nil
	el.deadline = c.now + c.cfg.ElectionTicks
	m := c.voteMsg(pre)
	for _, addr := range c.cfg.Seeds {
		el.waiting[addr] = true
		c.ask(addr, m)
	}
}

// startPreVote asks the members whether they would vote for this node at
// the next term; nothing changes anywhere until a majority says yes.
func (c *Core) startPreVote() {
	el := &c.el
	el.phase, el.term, el.transfer = electPreVote, c.nextTerm(), false
	c.askAll(true)
	c.checkCampaign()
}

// nextTerm is the term a campaign stands at: above this node's and above
// every one a peer showed (one whose adoption could not be saved
// included).
func (c *Core) nextTerm() Epoch {
	t := c.st.Epoch
	for _, e := range c.peerEpoch {
		t = max(t, e)
	}
	return t + 1
}

// startVote takes the next term, votes for this node and asks for votes
// (transfer: SET GLOBAL cluster_role = 'primary', stickiness set aside).
func (c *Core) startVote(transfer bool) error {
	el := &c.el
	el.phase = electIdle
	term := c.nextTerm()
	if err := c.transition(State{Role: RoleSecondary, Epoch: term, Vote: c.cfg.ID}, "candidate"); err != nil {
		c.eventf(slog.LevelError, "Cluster: %s does not stand at term %d: %v", c.cfg.ID, term, err)
		return err
	}
	c.followNew("", false)
	el.phase, el.term, el.transfer = electVote, term, transfer
	el.counts.Started++
	c.eventf(slog.LevelInfo, "Cluster: %s candidate at term %d", c.cfg.ID, term)
	c.askAll(false)
	c.checkCampaign()
	return nil
}

// voteAnswered takes a member's answer to the campaign's question.
func (c *Core) voteAnswered(addr, from string, m VoteReplyMsg) {
	el := &c.el
	if !m.Granted && m.Term > c.st.Epoch {
		// A member of a later term: this node adopts it (the campaign,
		// of an older term, ends there).
		if el.phase != electIdle {
			el.refusals = append(el.refusals, fmt.Sprintf("node %s refused: %s", from, m.Reason))
		}
		c.observeEpoch(from, m.Term, "", false)
	}
	if el.phase == electIdle || m.Pre != (el.phase == electPreVote) || !m.Pre && m.Term != el.term || !el.waiting[addr] {
		return
	}
	delete(el.waiting, addr)
	el.answered++
	if m.Granted {
		el.yes[strings.ToLower(from)] = PeerDatabases{ID: from, Addr: addr, DBs: m.DBs}
	} else {
		el.refusals = append(el.refusals, fmt.Sprintf("node %s refused: %s", from, m.Reason))
	}
	c.checkCampaign()
}

// voteUnreachable: the member at addr did not answer.
func (c *Core) voteUnreachable(addr string) {
	if c.el.phase == electIdle || !c.el.waiting[addr] {
		return
	}
	delete(c.el.waiting, addr)
	c.checkCampaign()
}

// checkCampaign moves a campaign on once a majority said yes, or ends it
// once every member answered without one.
func (c *Core) checkCampaign() {
	el := &c.el
	switch {
	case el.phase == electIdle:
	case len(el.yes) >= c.majority() && el.phase == electPreVote:
		c.startVote(false)
	case len(el.yes) >= c.majority():
		c.elected()
	case len(el.waiting) == 0:
		c.campaignLost()
	}
}

// campaignLost ends a campaign without a majority.
func (c *Core) campaignLost() {
	el := &c.el
	need, got := c.majority(), len(el.yes)
	why := fmt.Sprintf("cluster has no quorum: %d of %d members reachable", el.answered+1, c.members())
	if len(el.refusals) > 0 {
		why = el.refusals[0]
	}
	if el.phase == electPreVote {
		el.counts.PreVotesFailed++
		c.eventf(slog.LevelDebug, "Cluster: pre-vote of %s for term %d: %d of the %d required (%s)", c.cfg.ID, el.term, got, need, why)
	} else {
		el.counts.Lost++
		c.eventf(slog.LevelWarn, "Cluster: no majority: %d vote(s) of the %d required at term %d (%s)", got, need, el.term, why)
	}
	c.lastError = "election: " + why
	c.campaignOver(why)
}

// campaignOver ends the campaign under way (why: the refusal a waiting
// SET GLOBAL gets).
func (c *Core) campaignOver(why string) {
	el := &c.el
	if el.asked {
		el.asked = false
		c.out.Answers = append(c.out.Answers, PromoteAnswer{Err: c.refuse(why)})
	}
	el.phase, el.waiting, el.yes = electIdle, nil, nil
	c.resetElectionTimer()
}

// elected: a majority voted for this node; it takes over as a promotion
// does, from the catch-up on.
func (c *Core) elected() {
	el := &c.el
	el.phase = electIdle
	el.counts.Won++
	c.eventf(slog.LevelInfo, "Cluster: node %s elected leader (term %d, %d vote(s) of %d)", c.cfg.ID, el.term, len(el.yes), c.members())
	p := &promoteRun{accepted: true, raft: true, term: el.term}
	// The voters' databases of this node's incarnations: the others are
	// older ones (VoteRefusal), copied again once they follow.
	base := map[string]string{}
	for _, db := range c.log.Databases() {
		base[strings.ToLower(db.Name)] = string(db.BaseID)
	}
	for _, key := range slices.Sorted(mapKeys(el.yes)) {
		v := el.yes[key]
		if strings.EqualFold(v.ID, c.cfg.ID) {
			continue
		}
		same := v
		same.DBs = nil
		for _, d := range v.DBs {
			if b, ok := base[strings.ToLower(d.Name)]; ok && b == string(d.BaseID) {
				same.DBs = append(same.DBs, d)
			}
		}
		p.positions = append(p.positions, same)
	}
	el.waiting, el.yes = nil, nil
	c.promo = p
	c.role = RolePromoting
	if el.asked {
		el.asked = false
		c.out.Answers = append(c.out.Answers, PromoteAnswer{})
	}
	if c.follow.link != 0 {
		c.closeLink(c.links[c.follow.link])
	}
	c.promoteProgress()
}

// leaseTick: a leader that has not heard a majority of the members
// (itself included) for ElectionTicks steps down (§17.9.3).
func (c *Core) leaseTick() {
	el := &c.el
	// The ticks each follower was last heard, newest first: the
	// majority's is the one that leaves majority-1 followers at or after
	// it (this node hears itself now).
	var last []int
	for _, f := range c.followers {
		if l := c.links[f.link]; f.link != 0 && l != nil {
			last = append(last, l.heard)
		}
	}
	slices.SortFunc(last, func(a, b int) int { return b - a })
	heard := 1
	for _, t := range last {
		if c.now-t < c.cfg.ElectionTicks {
			heard++
		}
	}
	if k := c.majority() - 1; len(last) >= k {
		at := c.now
		if k > 0 {
			at = last[k-1]
		}
		if el.forced && c.now-at < c.cfg.ElectionTicks {
			el.forced = false
			c.eventf(slog.LevelInfo, "Cluster: a majority has joined %s (%d of %d members): the lease applies again", c.cfg.ID, heard, c.members())
		}
		el.quorumAt = max(el.quorumAt, at)
	}
	if el.forced || c.now-el.quorumAt < c.cfg.ElectionTicks {
		return
	}
	why := fmt.Sprintf("majority lost: %d of %d members heard in the last %d ms", heard, c.members(), c.cfg.ElectionTicks*c.cfg.TickMillis)
	c.eventf(slog.LevelWarn, "Cluster: node %s demoted automatically (raft mode): %s", c.cfg.ID, why)
	c.lastError = why
	c.stepDown("quorum lost ("+why+")", State{Role: RoleSecondary, Epoch: c.st.Epoch, Primary: c.st.Primary})
}

// stepDown leaves the leader's role for next: the sessions waiting for
// acknowledgements get 9004 with why.
func (c *Core) stepDown(why string, next State) error {
	c.el.counts.StepDowns++
	c.endWaits(why)
	err := c.transition(next, why)
	c.resetElectionTimer()
	return err
}

// voteAsked answers a member's question (a pre-vote or a vote).
func (c *Core) voteAsked(l *linkState, m VoteMsg) {
	reply := VoteReplyMsg{Pre: m.Pre}
	refuse := func(why string, outsideRules bool) {
		reply.Term, reply.Reason = c.st.Epoch, why
		if !m.Pre {
			c.el.counts.VotesRefused++
		}
		if outsideRules {
			c.logRefusal(l.peer, why)
		}
		c.send(l, reply)
		c.closeLink(l)
	}
	switch {
	case !c.cfg.Raft:
		refuse(fmt.Sprintf("node %s is not in raft mode", c.cfg.ID), true)
		return
	case m.Cluster != c.cfg.Cluster:
		refuse(fmt.Sprintf("cluster %q is not this node's (%q)", m.Cluster, c.cfg.Cluster), true)
		return
	case !c.isSeed(m.Advertise):
		refuse(fmt.Sprintf("%s (%s) is not a voting member of this node's seeds", l.peer, m.Advertise), true)
		return
	}
	if v := epochpkg.Check(c.st.Epoch, m.Term, false); v.Ignored() {
		refuse("malformed term: "+epochMessage(v, c.st.Epoch, m.Term, l.peer), true)
		return
	}
	if m.Term < c.st.Epoch || m.Pre && m.Term == c.st.Epoch {
		refuse(fmt.Sprintf("term %d is behind this node's term %d", m.Term, c.st.Epoch), false)
		return
	}
	if c.hearsLeader() && !m.Transfer {
		what := "its leader " + c.st.Primary
		switch {
		case c.role != RoleSecondary:
			what = "itself as leader"
		case c.st.Primary == "":
			what = "of the candidate it voted for, " + c.st.Vote
		}
		refuse(fmt.Sprintf("node %s still hears %s", c.cfg.ID, what), false)
		return
	}
	if why := VoteRefusal(c.localDBs(), m.DBs); why != "" {
		if !m.Pre && m.Term > c.st.Epoch {
			c.observeEpoch(l.peer, m.Term, "", false)
		}
		refuse(why, false)
		return
	}
	if m.Pre {
		reply.Term, reply.Granted = c.st.Epoch, true
		c.send(l, reply)
		c.closeLink(l)
		return
	}
	if m.Term == c.st.Epoch {
		switch {
		case c.st.Vote != "" && !strings.EqualFold(c.st.Vote, l.peer):
			refuse(fmt.Sprintf("node %s already voted for %s at term %d", c.cfg.ID, c.st.Vote, m.Term), false)
			return
		case c.st.Primary != "" && !strings.EqualFold(c.st.Primary, l.peer):
			refuse(fmt.Sprintf("term %d already has leader %s", m.Term, c.st.Primary), false)
			return
		}
	}
	next := State{Role: RoleSecondary, Epoch: m.Term, Vote: l.peer}
	if m.Term == c.st.Epoch {
		next.Primary = c.st.Primary
	}
	if c.promo != nil {
		c.promotionFailed(fmt.Errorf("vote granted to %s at term %d", l.peer, m.Term))
	}
	var err error
	if c.role == RolePrimary {
		c.eventf(slog.LevelWarn, "Cluster: node %s demoted automatically (raft mode): %s stands at term %d (transfer)", c.cfg.ID, l.peer, m.Term)
		err = c.stepDown(fmt.Sprintf("leadership transferred to %s", l.peer), next)
	} else {
		err = c.transition(next, "vote granted to "+l.peer)
	}
	if err != nil {
		refuse(err.Error(), false)
		return
	}
	c.followNew("", false)
	c.resetElectionTimer()
	c.el.heard = c.now
	c.el.counts.VotesGranted++
	c.eventf(slog.LevelInfo, "Cluster: vote granted to %s (term %d)", l.peer, m.Term)
	reply.Term, reply.Granted, reply.DBs = m.Term, true, c.peerDBs()
	c.el.pending = append(c.el.pending, pendingVote{link: l.id, term: m.Term, vote: l.peer, reply: reply})
}

// sendSavedVotes sends the granted votes that the saved state holds; a
// vote the node no longer holds (its save failed) is never sent.
func (c *Core) sendSavedVotes() {
	kept := c.el.pending[:0]
	for _, p := range c.el.pending {
		l := c.links[p.link]
		switch {
		case l == nil || l.closing:
		case c.saved.Epoch == p.term && c.saved.Vote == p.vote:
			c.send(l, p.reply)
			c.closeLink(l)
		case c.st.Epoch == p.term && c.st.Vote == p.vote:
			kept = append(kept, p) // not saved yet
		default:
			c.closeLink(l)
		}
	}
	c.el.pending = kept
}

// peerDBs is what this node answers of its databases (Positions, a vote).
func (c *Core) peerDBs() []PeerDB {
	var out []PeerDB
	for _, db := range c.log.Databases() {
		out = append(out, PeerDB{Position: Position{Name: db.Name, BaseID: db.BaseID, Hist: db.RecvHist, LSN: uint64(db.End)}, Retained: db.Retained})
	}
	return out
}

// isSeed reports whether addr is one of this node's members.
func (c *Core) isSeed(addr string) bool {
	for _, s := range c.cfg.Seeds {
		if strings.EqualFold(s, addr) {
			return true
		}
	}
	return false
}

// logRefusal logs a question refused outside the rules (another cluster, a
// non-member, a malformed term) once per peer per minute.
func (c *Core) logRefusal(peer, why string) {
	key := strings.ToLower(peer)
	minute := 60_000 / max(c.cfg.TickMillis, 1)
	if last, ok := c.el.refusedLogged[key]; ok && c.now-last < minute {
		return
	}
	c.el.refusedLogged[key] = c.now
	c.eventf(slog.LevelWarn, "Cluster: vote asked by %s refused: %s", peer, why)
}

// Election returns raft mode's state.
func (c *Core) Election() ElectionStatus {
	s := ElectionStatus{Raft: c.cfg.Raft, Term: c.st.Epoch, Vote: c.st.Vote, Leader: c.st.Primary, Transfer: c.el.transfer,
		NotStanding: c.el.notStanding, Counts: c.el.counts}
	switch c.el.phase {
	case electPreVote:
		s.Phase, s.Campaign = "PRE-VOTE", c.el.term
	case electVote:
		s.Phase, s.Campaign = "CANDIDATE", c.el.term
	}
	return s
}

// VoteRefusal is the vote rule (§17.9.2), database by database: a member
// refuses a candidate that lacks one of its databases, or whose newest
// epoch mark on it is older than its own (or, for another incarnation of
// it, not newer); with an equal mark the positions do not matter (the
// elected node catches up from its voters). "" grants. Pure: the core and its tests
// call it.
func VoteRefusal(mine []LocalDB, candidate []Position) string {
	byName := map[string]Position{}
	for _, p := range candidate {
		byName[strings.ToLower(p.Name)] = p
	}
	for _, l := range mine {
		p, ok := byName[strings.ToLower(l.Name)]
		if !ok {
			return fmt.Sprintf("the candidate does not have database %s", l.Name)
		}
		mm, cm := l.Hist.Last(), p.Hist.Last()
		switch {
		case !bytes.Equal(p.BaseID, l.BaseID) && !newerMark(cm, mm):
			// Another incarnation (dropped and created again): the
			// candidate's must be the newer one.
			return fmt.Sprintf("database %s is another incarnation on the candidate, not a newer one (epoch %d, this node's %d)", l.Name, cm.Epoch, mm.Epoch)
		case newerMark(mm, cm):
			return fmt.Sprintf("not up to date on database %s (epoch %d < %d)", l.Name, cm.Epoch, mm.Epoch)
		}
	}
	return ""
}

// campaignNow is SET GLOBAL cluster_role = 'primary' in raft mode: a
// campaign at once, with transfer; Ready.Answers carries the verdict.
func (c *Core) campaignNow() error {
	switch {
	case c.role == RolePrimary:
		c.out.Answers = append(c.out.Answers, PromoteAnswer{})
		return nil
	case c.role == RolePromoting || c.promo != nil || c.el.phase == electVote:
		return c.refuse("cluster promotion in progress")
	case c.Seeding():
		return c.refuse("replication bootstrap in progress")
	}
	c.el.phase = electIdle
	c.el.asked = true
	if err := c.startVote(true); err != nil {
		c.el.asked = false
		return c.refuse(err.Error())
	}
	return nil
}
