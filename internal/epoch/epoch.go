package epoch

import "fmt"

// Epoch numbers the successive primaries of a cluster; it only grows.
type Epoch uint64

const (
	// MaxJump is the largest step an announcement may take beyond the
	// highest epoch known (§17.2.5): promotions and elections add one at a
	// time, so a bigger leap is a bug or a forged message, and adopting it
	// would fence the primary for nothing.
	MaxJump = 1000
	// Implausible is the first epoch never accepted (2^48): at one
	// promotion per second a cluster would take nine million years to get
	// there, so such a value (u64::MAX included) is corruption.
	Implausible Epoch = 1 << 48
)

// Verdict is the outcome of Check.
type Verdict int

// Verdicts.
const (
	// Accept: the announcement may be acted upon (it is higher than the
	// known epoch, within the allowed jump).
	Accept Verdict = iota
	// NotNewer: the announced epoch is not above the known one; nothing to
	// adopt, nothing suspicious.
	NotNewer
	// IgnoreJump: more than MaxJump above the known epoch, from a node
	// that is not our proven primary.
	IgnoreJump
	// IgnoreImplausible: at or above Implausible, from anyone.
	IgnoreImplausible
)

func (v Verdict) String() string {
	switch v {
	case Accept:
		return "accept"
	case NotNewer:
		return "not newer"
	case IgnoreJump:
		return "abnormal jump"
	case IgnoreImplausible:
		return "implausible epoch"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Ignored reports whether the announcement must be ignored and logged.
func (v Verdict) Ignored() bool { return v == IgnoreJump || v == IgnoreImplausible }

// Check judges an epoch announced by a peer against the highest epoch the
// node knows. fromFollowedPrimary is true only when the announcement comes
// from the primary this node follows, whose identity the transport proved:
// it may jump further (the node is new or was long absent).
func Check(known, announced Epoch, fromFollowedPrimary bool) Verdict {
	switch {
	case announced >= Implausible:
		return IgnoreImplausible
	case announced <= known:
		return NotNewer
	case announced-known > MaxJump && !fromFollowedPrimary:
		return IgnoreJump
	}
	return Accept
}

// Message is the log line for an ignored announcement (§17.2.5: "epoch …
// announced by node … ignored (abnormal jump …)").
func Message(v Verdict, known, announced Epoch, node string) string {
	switch v {
	case IgnoreImplausible:
		return fmt.Sprintf("epoch %d announced by node %s ignored (abnormal jump: implausible epoch, 2^48 or above; highest known %d)", announced, node, known)
	case IgnoreJump:
		return fmt.Sprintf("epoch %d announced by node %s ignored (abnormal jump of %d from %d, at most %d)", announced, node, announced-known, known, MaxJump)
	}
	return fmt.Sprintf("epoch %d announced by node %s: %s", announced, node, v)
}
