package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/repl"
)

func TestParseLag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Lag
		bad  bool
	}{
		{in: "0", want: Lag{}},
		{in: "1048576", want: Lag{Bytes: 1 << 20}},
		{in: "16kB", want: Lag{Bytes: 16 << 10}},
		{in: "1MB", want: Lag{Bytes: 1 << 20}},
		{in: "2 GB", want: Lag{Bytes: 2 << 30}},
		{in: "100B", want: Lag{Bytes: 100}},
		{in: "5s", want: Lag{Duration: 5 * time.Second, Seconds: true}},
		{in: "500ms", want: Lag{Duration: 500 * time.Millisecond, Seconds: true}},
		{in: "1m", want: Lag{Duration: time.Minute, Seconds: true}},
		{in: "-1", bad: true},
		{in: "bogus", bad: true},
		{in: "", bad: true},
	} {
		got, err := ParseLag(tc.in)
		if (err != nil) != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("ParseLag(%q) = %+v, %v; want %+v (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// fakeNode is a Node whose answers the test sets.
type fakeNode struct {
	role      repl.Role
	writable  bool
	streaming bool
	lagBytes  int64
	logStore  bool
	lagSecs   *float64
	copies    []repl.CopyProgress
}

func (f *fakeNode) Role() repl.Role   { return f.role }
func (f *fakeNode) Writable() bool    { return f.writable }
func (f *fakeNode) Streaming() bool   { return f.streaming }
func (f *fakeNode) Epoch() repl.Epoch { return 3 }
func (f *fakeNode) NodeID() string    { return "n2" }
func (f *fakeNode) PrimaryID() string { return "n1" }
func (f *fakeNode) Nodes() []repl.NodeRow {
	self := repl.NodeRow{NodeID: "n2", Role: string(f.role), State: "SELF", LagBytes: f.lagBytes, LagSeconds: f.lagSecs}
	if f.logStore {
		self.Role = string(repl.RoleLogStore)
	}
	return []repl.NodeRow{self}
}
func (f *fakeNode) Copies() []repl.CopyProgress { return f.copies }

func TestChecks(t *testing.T) {
	secs := func(s float64) *float64 { return &s }
	for _, tc := range []struct {
		name string
		node *fakeNode
		path string
		want int
	}{
		{"primary", &fakeNode{role: repl.RolePrimary, writable: true}, "/primary", 200},
		{"primary, replica check", &fakeNode{role: repl.RolePrimary, writable: true}, "/replica", 503},
		{"primary, read-only check", &fakeNode{role: repl.RolePrimary, writable: true}, "/read-only", 200},
		{"primary not yet writable", &fakeNode{role: repl.RolePrimary}, "/primary", 503},
		{"fenced", &fakeNode{role: repl.RoleFenced}, "/primary", 503},
		{"fenced, replica", &fakeNode{role: repl.RoleFenced}, "/replica", 503},
		{"promoting", &fakeNode{role: repl.RolePromoting}, "/replica", 503},
		{"streaming secondary", &fakeNode{role: repl.RoleSecondary, streaming: true}, "/replica", 200},
		{"secondary without a link", &fakeNode{role: repl.RoleSecondary}, "/replica", 503},
		{"secondary receiving a copy", &fakeNode{role: repl.RoleSecondary, streaming: true,
			copies: []repl.CopyProgress{{Node: "n2", Database: "big", Kind: "seed", Done: 10}}}, "/replica", 503},
		{"secondary serving a copy to n3", &fakeNode{role: repl.RoleSecondary, streaming: true,
			copies: []repl.CopyProgress{{Node: "n3", Database: "big", Kind: "seed", Done: 10}}}, "/replica", 200},
		{"within lag bytes", &fakeNode{role: repl.RoleSecondary, streaming: true, lagBytes: 1000}, "/replica?lag=1kB", 200},
		{"beyond lag bytes", &fakeNode{role: repl.RoleSecondary, streaming: true, lagBytes: 1025}, "/replica?lag=1kB", 503},
		{"within lag seconds", &fakeNode{role: repl.RoleSecondary, streaming: true, lagSecs: secs(4.9)}, "/replica?lag=5s", 200},
		{"beyond lag seconds", &fakeNode{role: repl.RoleSecondary, streaming: true, lagSecs: secs(5.1)}, "/replica?lag=5s", 503},
		{"bad lag", &fakeNode{role: repl.RoleSecondary, streaming: true}, "/replica?lag=soon", 503},
		{"log-store node, replica", &fakeNode{role: repl.RoleSecondary, streaming: true, logStore: true}, "/replica", 503},
		{"log-store node, read-only", &fakeNode{role: repl.RoleSecondary, streaming: true, logStore: true}, "/read-only", 503},
		{"health", &fakeNode{role: repl.RoleFenced}, "/health", 200},
		{"unknown path", &fakeNode{role: repl.RolePrimary}, "/nothing", 404},
	} {
		h := Handler(Options{Node: tc.node})
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(method, tc.path, nil))
			if rec.Code != tc.want {
				t.Errorf("%s: %s %s = %d, want %d (%s)", tc.name, method, tc.path, rec.Code, tc.want, rec.Body)
			}
		}
	}
}
