package slt

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/difftest"
	"github.com/miraj-db/miraj/internal/slt"
)

// TestRunnerReportsFailures runs testdata/runner.test, whose records are
// made to pass or fail in each way the runner tells apart, and checks that
// it reports exactly those failures: a runner that passed everything would
// make TestSQLLogic worthless.
func TestRunnerReportsFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	port := difftest.StartMiraj(t, ctx, t.TempDir(), os.Getenv("MIRAJ_SLT_SERVER"))
	rep, err := slt.Run(ctx, slt.Options{
		Addr: fmt.Sprintf("127.0.0.1:%d", port), User: "root",
		// SLEEP(60) must time out; the other records answer at once.
		QueryTimeout: time.Second,
	}, []slt.File{{Name: "runner.test", Path: "testdata/runner.test"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	rep.Write(&buf)
	t.Log("\n" + buf.String())
	want := map[string]slt.Kind{
		"runner.test:34": slt.KindWrong,
		"runner.test:43": slt.KindWrong,
		"runner.test:55": slt.KindWrong,
		"runner.test:68": slt.KindSchema,
		"runner.test:78": slt.KindError,
		"runner.test:82": slt.KindError,
		"runner.test:87": slt.KindNoError,
		"runner.test:99": slt.KindTimeout,
	}
	got := map[string]slt.Kind{}
	for _, f := range rep.Failures() {
		got[f.Key()] = f.Kind
	}
	for k, kind := range want {
		if got[k] != kind {
			t.Errorf("%s: reported %q, want %q", k, got[k], kind)
		}
	}
	for _, f := range rep.Failures() {
		if _, ok := want[f.Key()]; !ok {
			t.Errorf("%s: unexpected failure %s: %s (expected %s, got %s)", f.Key(), f.Kind, f.Err, f.Expected, f.Got)
		}
	}
	f := rep.Files[0]
	if f.OK != 8 || f.Skipped != 2 || !f.Halted {
		t.Errorf("ok %d, skipped %d, halted %v; want 8 ok (the last one after the timeout), 2 skipped, halted", f.OK, f.Skipped, f.Halted)
	}

	// The known list marks failures as known and finds stale entries.
	list, err := slt.ParseKnown(strings.NewReader(
		"# comment\nrunner.test:34 known a wrong value on purpose\nrunner.test:105 known passes: stale\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	rep.Classify(list)
	if n := len(rep.Unexpected()); n != len(want)-1 {
		t.Errorf("%d unexpected failures, want %d", n, len(want)-1)
	}
	if len(rep.Stale) != 1 || rep.Stale[0].Record != "runner.test:105" {
		t.Errorf("stale entries %v, want runner.test:105", rep.Stale)
	}
}
