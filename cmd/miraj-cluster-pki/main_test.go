package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/pki"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestWorkflow runs the commands of §17.2.2 and §17.2.4 in order.
func TestWorkflow(t *testing.T) {
	root := t.TempDir()
	ca := filepath.Join(root, "pki")
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"init-ca", "--name", "gestium-prod", "--out", ca}, 0, "authority"},
		{[]string{"init-ca", "--name", "gestium-prod", "--out", ca}, 1, "file exists"},
		{[]string{"issue-node", "--ca", ca, "--id", "n1", "--san", "10.0.0.1", "--san", "n1.exemple.local", "--out", filepath.Join(ca, "n1")}, 0, "node n1"},
		{[]string{"issue-node", "--ca", ca, "--id", "n2", "--san", "10.0.0.2", "--out", filepath.Join(ca, "n2"), "--days", "90"}, 0, "node n2"},
		{[]string{"issue-node", "--ca-cert", filepath.Join(ca, pki.CACertFile), "--ca-key", filepath.Join(ca, pki.CAKeyFile),
			"--id", "n3", "--san", "10.0.0.3", "--out", filepath.Join(ca, "n3")}, 0, "node n3"},
		{[]string{"issue-node", "--ca", ca, "--id", "n3", "--san", "10.0.0.3", "--out", filepath.Join(ca, "n3")}, 1, "use --force"},
		{[]string{"issue-node", "--ca", ca, "--id", "n3", "--san", "10.0.0.3", "--out", filepath.Join(ca, "n3"), "--force"}, 0, "node n3"},
		{[]string{"revoke", "n3", "--ca", ca}, 0, "revoked: serial"},
		{[]string{"revoke", "--cert", filepath.Join(ca, "n2", pki.NodeCertFile), "--ca", ca, "--out", filepath.Join(root, "crl.pem")}, 0, "crl.pem"},
		{[]string{"crl", "--ca", ca, "--days", "365"}, 0, "3 revoked"},
		{[]string{"revoke", "n9", "--ca", ca}, 1, "no certificate of this node"},
		{[]string{"issue-node", "--ca", ca, "--id", "n4", "--out", filepath.Join(ca, "n4")}, 2, "at least one --san"},
		{[]string{"revoke", "--ca", ca}, 2, "node id or --cert"},
		{[]string{"crl"}, 2, "--ca DIR"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	}
	for _, s := range steps {
		code, out, errs := runCLI(t, s.args...)
		if code != s.code || !strings.Contains(out+errs, s.want) {
			t.Fatalf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q", s.args, code, s.code, out, errs, s.want)
		}
	}
	for _, f := range []string{"n1/node.pem", "n1/node-key.pem", "n1/cluster-ca.pem", pki.RegisterFile, pki.RevocationsFile, pki.CRLFile} {
		if _, err := os.Stat(filepath.Join(ca, f)); err != nil {
			t.Error(err)
		}
	}
	reg, err := pki.ReadRegister(filepath.Join(ca, pki.RegisterFile))
	if err != nil || len(reg) != 4 {
		t.Fatalf("register: %d entries, %v", len(reg), err)
	}
}
