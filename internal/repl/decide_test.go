package repl

import (
	"errors"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
)

func TestCheckTransition(t *testing.T) {
	sec := func(e Epoch, p string) State { return State{Role: RoleSecondary, Epoch: e, Primary: p} }
	pri := func(e Epoch, p string) State { return State{Role: RolePrimary, Epoch: e, Primary: p} }
	fen := func(e Epoch, p string) State { return State{Role: RoleFenced, Epoch: e, Primary: p} }
	cases := []struct {
		name      string
		cur, next State
		err       error
	}{
		{"a new node learns the primary", sec(0, ""), sec(1, "n1"), nil},
		{"promotion to a higher epoch", sec(1, "n1"), pri(2, "n2"), nil},
		{"promotion within the same epoch", sec(1, "n1"), pri(1, "n2"), ErrRoleChange},
		{"a lower epoch", sec(3, "n1"), sec(2, "n2"), ErrStaleEpoch},
		{"a primary steps down", pri(2, "n2"), sec(2, "n2"), nil},
		{"a primary fenced by a higher epoch", pri(2, "n2"), fen(3, "n3"), nil},
		{"a primary fenced by the tie-break", pri(2, "n2"), fen(2, "n5"), nil},
		{"an epoch's primary replaced by a lower id", sec(2, "n3"), sec(2, "n2"), ErrRoleChange},
		{"an epoch's primary replaced by a higher id (two primaries of one epoch)", sec(2, "n2"), sec(2, "n3"), nil},
		{"a primary taking a new epoch without stepping down", pri(2, "n2"), pri(3, "n2"), nil},
		{"a fenced node rejoins", fen(3, "n3"), sec(3, "n3"), nil},
		{"a fenced node becomes primary again in its epoch", fen(3, "n3"), pri(3, "n3"), ErrRoleChange},
		{"PROMOTING is never persisted", sec(1, "n1"), State{Role: RolePromoting, Epoch: 2}, ErrRoleChange},
		{"a primary without an id", sec(1, "n1"), pri(2, ""), ErrRoleChange},
		// Raft mode (§17.9.1): one vote per term.
		{"a vote given", sec(3, ""), State{Role: RoleSecondary, Epoch: 3, Vote: "n2"}, nil},
		{"another vote in the same term", State{Role: RoleSecondary, Epoch: 3, Vote: "n2"}, State{Role: RoleSecondary, Epoch: 3, Vote: "n3"}, ErrRoleChange},
		{"a vote in the next term", State{Role: RoleSecondary, Epoch: 3, Vote: "n2"}, State{Role: RoleSecondary, Epoch: 4, Vote: "n3"}, nil},
		{"the candidate elected in its term", State{Role: RoleSecondary, Epoch: 4, Vote: "n1"}, State{Role: RolePrimary, Epoch: 4, Primary: "n1", Vote: "n1"}, nil},
		{"a node primary in a term it voted in for another", State{Role: RoleSecondary, Epoch: 4, Vote: "n2"}, State{Role: RolePrimary, Epoch: 4, Primary: "n1", Vote: "n2"}, ErrRoleChange},
		{"a node primary in a term whose leader it knows", State{Role: RoleSecondary, Epoch: 4, Primary: "n2", Vote: "n1"}, State{Role: RolePrimary, Epoch: 4, Primary: "n1", Vote: "n1"}, ErrRoleChange},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckTransition(c.cur, c.next)
			if (c.err == nil) != (err == nil) || (c.err != nil && !errors.Is(err, c.err)) {
				t.Fatalf("CheckTransition(%+v, %+v) = %v, want %v", c.cur, c.next, err, c.err)
			}
		})
	}
}

func TestDecideStart(t *testing.T) {
	base := []byte{1, 2, 3}
	p := DBView{BaseID: base, Hist: history.History{{Epoch: 1, Node: "n1", LSN: 0}, {Epoch: 2, Node: "n2", LSN: 500}}, End: 900, Retained: 100}
	hist1 := history.History{{Epoch: 1, Node: "n1", LSN: 0}}
	cases := []struct {
		name       string
		f          Position
		kind       StartKind
		quarantine bool
		reason     string
	}{
		{"missing database", Position{Name: "d"}, StartSeed, false, "does not have"},
		{"another incarnation", Position{Name: "d", BaseID: []byte{9}, Hist: hist1, LSN: 300}, StartSeed, true, "another incarnation"},
		{"behind, on history", Position{Name: "d", BaseID: base, Hist: hist1, LSN: 300}, StartStream, false, ""},
		{"behind retention", Position{Name: "d", BaseID: base, Hist: hist1, LSN: 50}, StartSeed, false, "no longer retained"},
		{"old primary's extra writes", Position{Name: "d", BaseID: base, Hist: hist1, LSN: 600}, StartSeed, true, "diverged after LSN 500"},
		{"another primary of epoch 2", Position{Name: "d", BaseID: base, Hist: history.History{hist1[0], {Epoch: 2, Node: "n3", LSN: 500}}, LSN: 520}, StartSeed, true, "diverged"},
		{"same history, behind", Position{Name: "d", BaseID: base, Hist: p.Hist, LSN: 800}, StartStream, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := DecideStart(p, c.f)
			if d.Kind != c.kind || d.Quarantine != c.quarantine || !strings.Contains(d.Reason, c.reason) {
				t.Fatalf("DecideStart = %+v, want kind %v quarantine %v reason ~%q", d, c.kind, c.quarantine, c.reason)
			}
		})
	}
}

func TestJudgeEpoch(t *testing.T) {
	pri := State{Role: RolePrimary, Epoch: 4, Primary: "n2"}
	sec := State{Role: RoleSecondary, Epoch: 4, Primary: "n2"}
	cases := []struct {
		name      string
		cur       State
		role      Role
		announced Epoch
		primary   string
		followed  bool
		want      EpochNews
	}{
		{"primary sees a newer epoch", pri, RolePrimary, 5, "n3", false, NewsFence},
		{"primary sees its own epoch from itself", pri, RolePrimary, 4, "n2", false, NewsNone},
		{"primary sees its epoch held by a greater id", pri, RolePrimary, 4, "n3", false, NewsFence},
		{"primary sees its epoch held by a smaller id", pri, RolePrimary, 4, "n1", false, NewsNone},
		{"primary sees an older epoch", pri, RolePrimary, 3, "n1", false, NewsNone},
		{"abnormal jump ignored", pri, RolePrimary, 4 + 1001, "n3", false, NewsNone},
		{"implausible ignored, even from the followed primary", sec, RoleSecondary, 1 << 50, "n3", true, NewsNone},
		{"secondary adopts", sec, RoleSecondary, 6, "n3", false, NewsAdopt},
		{"promoting node adopts (its promotion then fails)", sec, RolePromoting, 6, "n3", false, NewsAdopt},
		{"followed primary may jump", sec, RoleSecondary, 4 + 5000, "n3", true, NewsAdopt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := JudgeEpoch(c.cur, c.role, "n2", c.announced, c.primary, c.followed); got != c.want {
				t.Fatalf("JudgeEpoch = %v, want %v", got, c.want)
			}
		})
	}
}

func TestVoteRefusal(t *testing.T) {
	mark := func(e Epoch, node string, lsn int) history.Mark {
		return history.Mark{Epoch: e, Node: node, LSN: journal.LSN(lsn)}
	}
	mine := []LocalDB{
		{Name: "shop", BaseID: []byte("aa"), Hist: history.History{mark(1, "n1", 0), mark(4, "n2", 100)}, End: 500},
		{Name: "crm", BaseID: []byte("bb"), Hist: history.History{mark(2, "n1", 0)}, End: 50},
	}
	pos := func(name, base string, lsn uint64, h ...history.Mark) Position {
		return Position{Name: name, BaseID: []byte(base), Hist: h, LSN: lsn}
	}
	cases := []struct {
		name string
		cand []Position
		want string // "" grants; else a part of the refusal
	}{
		{"same marks, shorter", []Position{pos("shop", "aa", 120, mark(1, "n1", 0), mark(4, "n2", 100)), pos("crm", "bb", 10, mark(2, "n1", 0))}, ""},
		{"newer mark on one", []Position{pos("shop", "aa", 120, mark(5, "n3", 110)), pos("crm", "bb", 50, mark(2, "n1", 0))}, ""},
		{"older mark", []Position{pos("shop", "aa", 900, mark(3, "n3", 90)), pos("crm", "bb", 50, mark(2, "n1", 0))}, "not up to date on database shop (epoch 3 < 4)"},
		{"same epoch, another node first", []Position{pos("shop", "aa", 900, mark(4, "n1", 90)), pos("crm", "bb", 50, mark(2, "n1", 0))}, "not up to date on database shop"},
		{"a database missing", []Position{pos("shop", "aa", 500, mark(4, "n2", 100))}, "does not have database crm"},
		{"an older incarnation", []Position{pos("shop", "zz", 900, mark(4, "n2", 0)), pos("crm", "bb", 50, mark(2, "n1", 0))}, "another incarnation"},
		{"a newer incarnation", []Position{pos("shop", "zz", 10, mark(6, "n3", 0)), pos("crm", "bb", 50, mark(2, "n1", 0))}, ""},
		{"names in another case", []Position{pos("SHOP", "aa", 500, mark(4, "n2", 100)), pos("Crm", "bb", 50, mark(2, "n1", 0))}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := VoteRefusal(mine, c.cand)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("VoteRefusal = %q, want %q", got, c.want)
			}
		})
	}
}
