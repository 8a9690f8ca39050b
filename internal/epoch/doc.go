// Package epoch holds the Epoch type and the sanity check applied to an
// epoch announced by a peer (spec §17.2.5): an announcement more than 1,000
// beyond the highest epoch the node knows, or implausible (2^48 and above),
// is ignored and logged; it neither fences the primary nor is adopted. Only
// a node that follows a primary whose identity is proven accepts a larger
// jump from it (a new or long-absent node), and never an implausible epoch.
//
// Check is a pure function: no clock, no I/O, no goroutines; safe to call
// from anywhere.
//
// Example:
//
//	if v := epoch.Check(known, announced, false); v.Ignored() {
//		logger.Warn(epoch.Message(v, known, announced, peerID))
//		return
//	}
package epoch
