package repl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/vfs"
)

func TestMessageListRoundTrip(t *testing.T) {
	in := []Position{{Name: "shop", BaseID: []byte{1, 2, 3}, LSN: 12345}, {Name: "é", BaseID: nil, LSN: 0}}
	e := &enc{}
	e.u(7)
	e.s("127.0.0.1:7107")
	e.list(in)
	d := &dec{b: e.b}
	if d.u() != 7 || d.s() != "127.0.0.1:7107" {
		t.Fatal("header")
	}
	out := d.list()
	if err := d.end(); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Name != "shop" || !bytes.Equal(out[0].BaseID, []byte{1, 2, 3}) || out[0].LSN != 12345 || out[1].Name != "é" {
		t.Fatalf("got %+v", out)
	}
}

func TestMalformedMessagesAreProtocolErrors(t *testing.T) {
	for _, b := range [][]byte{
		{0xff},                   // unterminated integer
		{5, 'a'},                 // string longer than the message
		{0xff, 0xff, 0xff, 0x0f}, // a list of too many databases
	} {
		d := &dec{b: b}
		d.list()
		if err := d.end(); !errors.Is(err, ErrProtocol) {
			t.Errorf("%x: %v, want ErrProtocol", b, err)
		}
	}
	d := &dec{b: []byte{1, 'x', 9}}
	d.s()
	if err := d.end(); !errors.Is(err, ErrProtocol) {
		t.Errorf("trailing bytes: %v", err)
	}
}

func TestStatePersistence(t *testing.T) {
	dir := t.TempDir()
	st, err := LoadState(vfs.Default, dir)
	if err != nil || st.Role != RoleSecondary || st.Epoch != 0 {
		t.Fatalf("fresh node: %+v %v (a new node must be a secondary)", st, err)
	}
	if err := SaveState(vfs.Default, dir, State{Role: RolePrimary, Epoch: 3, Primary: "n1"}); err != nil {
		t.Fatal(err)
	}
	st, _ = LoadState(vfs.Default, dir)
	if st != (State{Role: RolePrimary, Epoch: 3, Primary: "n1"}) {
		t.Fatalf("reloaded %+v", st)
	}
	// A promotion that a stop interrupted did not happen.
	os.WriteFile(filepath.Join(dir, stateFile), []byte(`{"role":"PROMOTING","epoch":4,"primary":"n2"}`), 0o600)
	if st, _ = LoadState(vfs.Default, dir); st.Role != RoleSecondary {
		t.Fatalf("interrupted promotion restored as %s", st.Role)
	}
	os.WriteFile(filepath.Join(dir, stateFile), []byte(`{"role":`), 0o600)
	if _, err := LoadState(vfs.Default, dir); err == nil {
		t.Fatal("a damaged state file was accepted")
	}
}

func FuzzDecodeSubscribe(f *testing.F) {
	e := &enc{}
	e.u(1)
	e.s("127.0.0.1:1")
	e.list([]Position{{Name: "a", BaseID: []byte{1}, LSN: 2}})
	f.Add(e.b)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &dec{b: b}
		d.u()
		d.s()
		ps := d.list()
		if d.end() != nil {
			return
		}
		// What decodes must encode and decode back to the same values.
		d2 := &dec{b: b}
		epoch, addr := d2.u(), d2.s()
		e := &enc{}
		e.u(epoch)
		e.s(addr)
		e.list(ps)
		d3 := &dec{b: e.b}
		if d3.u() != epoch || d3.s() != addr {
			t.Fatal("header changed")
		}
		again := d3.list()
		if d3.end() != nil || len(again) != len(ps) {
			t.Fatalf("re-decoding failed")
		}
		for i := range ps {
			if again[i].Name != ps[i].Name || again[i].LSN != ps[i].LSN || !bytes.Equal(again[i].BaseID, ps[i].BaseID) {
				t.Fatalf("entry %d changed", i)
			}
		}
	})
}

// A primary holds a commit's round only while its streams are busy and no
// commit waits for the followers; other roles never hold.
func TestStreamHold(t *testing.T) {
	for _, c := range []struct {
		since           time.Duration
		primary, waited bool
		want            time.Duration
	}{
		{0, true, false, streamBatchInterval},
		{time.Millisecond, true, false, streamBatchInterval - time.Millisecond},
		{streamBatchInterval, true, false, 0},
		{time.Hour, true, false, 0},
		{time.Millisecond, true, true, 0},
		{time.Millisecond, false, false, 0},
	} {
		if got := streamHold(c.since, c.primary, c.waited); got != c.want {
			t.Errorf("streamHold(%v, primary %v, waited %v) = %v, want %v", c.since, c.primary, c.waited, got, c.want)
		}
	}
}

// A hold ends as soon as a semi-sync commit's wait is posted, and what
// else is posted meanwhile (an ack) is run without ending it.
func TestHoldEndsOnSyncWait(t *testing.T) {
	n := &Node{core: &Core{}, posted: make(chan func(), 4)}
	const long = 10 * time.Second
	acked := false
	n.posted <- func() { acked = true }
	start := time.Now()
	done := make(chan bool)
	go func() { done <- n.holdFor(context.Background(), 200*time.Millisecond) }()
	if !<-done || !acked {
		t.Fatalf("the hold failed, or the posted ack was not run (%v)", acked)
	}
	if time.Since(start) < 200*time.Millisecond {
		t.Fatal("a posted ack ended the hold")
	}
	n.posted <- func() { n.lastSyncWait = time.Now() } // WaitSync's post
	go func() { done <- n.holdFor(context.Background(), long) }()
	select {
	case <-done:
	case <-time.After(long / 2):
		t.Fatal("a semi-sync wait did not end the hold")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n.holdFor(ctx, long) {
		t.Fatal("a hold outlived its context")
	}
}
