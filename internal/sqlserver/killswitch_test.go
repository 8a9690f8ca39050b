package sqlserver

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A KILL QUERY that comes after the process list shows a statement
// waiting but before the statement waits ends that wait; one from before
// the statement began does not.
func TestKillSwitchesKeepEarlyKills(t *testing.T) {
	var mu sync.Mutex
	var k killSwitches
	never := make(chan struct{})
	soon := func() <-chan time.Time { return time.After(50 * time.Millisecond) }

	mu.Lock()
	k.fire(7) // nobody waits yet
	timedOut, err := k.await(context.Background(), &mu, 7, never, soon())
	mu.Unlock()
	if timedOut || err == nil {
		t.Fatalf("a wait after an early kill: timedOut=%v err=%v, want 1317", timedOut, err)
	}

	// A kill kept from the statement before is forgotten as the next
	// statement begins: its wait runs to the timeout.
	mu.Lock()
	k.fire(7)
	mu.Unlock()
	k.forget(&mu, 7)
	mu.Lock()
	timedOut, err = k.await(context.Background(), &mu, 7, never, soon())
	mu.Unlock()
	if !timedOut || err != nil {
		t.Fatalf("a wait after a forgotten kill: timedOut=%v err=%v, want the timeout", timedOut, err)
	}
	if n := k.kept.Load(); n != 0 {
		t.Fatalf("%d kills kept, want 0", n)
	}
}
