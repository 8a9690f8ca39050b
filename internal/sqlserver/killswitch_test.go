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

// A KILL QUERY that fires just as the wait is woken for another reason (a
// lock went: the waiter will look again, and wait again if still blocked)
// ends the wait all the same. Before, the kill closed the wait's channel
// after its select had chosen the other one, and the statement waited
// again with the kill spent (TestTableLockWaits hung at KILL QUERY).
func TestKillSwitchesKillAsTheWaitWakes(t *testing.T) {
	var mu sync.Mutex
	var k killSwitches
	for i := range 50 {
		woken := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			mu.Lock()
			_, err := k.await(context.Background(), &mu, 7, woken, nil)
			mu.Unlock()
			done <- err
		}()
		// The waiter waits once its channel is in waits (it holds mu until
		// then, and gives it up as it waits).
		for {
			mu.Lock()
			if k.waits[7] != nil {
				break
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		close(woken) // the waiter's select takes this case
		k.fire(7)    // and the kill comes before it has mu back
		mu.Unlock()
		if err := <-done; err == nil {
			t.Fatalf("round %d: a kill as the wait woke was lost", i)
		}
		if n := k.kept.Load(); n != 0 {
			t.Fatalf("round %d: %d kills kept, want 0", i, n)
		}
	}
}
