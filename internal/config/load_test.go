package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/pki"
	"github.com/miraj-db/miraj/internal/pki/pkitest"
)

// nodeDir makes a folder with node.pem, node-key.pem and cluster-ca.pem for
// id (SAN 10.0.0.1) and a cluster.toml using them with relative paths.
func nodeDir(t *testing.T, ca *pki.CA, certID, extra string) string {
	t.Helper()
	n := pkitest.Issue(t, ca, certID, "10.0.0.1")
	doc := `[node]
id = "n1"
listen = "0.0.0.0:7107"
advertise = "10.0.0.1:7107"
[cluster]
name = "c"
tls_cert = "node.pem"
tls_key = "node-key.pem"
tls_ca = "cluster-ca.pem"
members = ["n1", "n2"]
` + extra
	if err := os.WriteFile(filepath.Join(n.Dir, config.FileName), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return n.Dir
}

func TestLoad(t *testing.T) {
	ca := pkitest.NewCA(t, "c")
	dir := nodeDir(t, ca, "n1", "")
	c, warnings, err := config.Load(filepath.Join(dir, config.FileName), config.DefaultClientPort)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings %q", warnings)
	}
	if c.TLSCert != filepath.Join(dir, "node.pem") || c.TLSCA != filepath.Join(dir, "cluster-ca.pem") {
		t.Fatalf("paths not resolved against the file's folder: %q %q", c.TLSCert, c.TLSCA)
	}
}

func TestLoadFileChecks(t *testing.T) {
	ca := pkitest.NewCA(t, "c")
	cases := []struct {
		name    string
		certID  string
		extra   string
		prepare func(dir string)
		wantErr string
		wantW   string
	}{
		{name: "missing key file", certID: "n1", prepare: func(dir string) { os.Remove(filepath.Join(dir, "node-key.pem")) },
			wantErr: "[cluster] tls_cert"},
		{name: "missing ca", certID: "n1", prepare: func(dir string) { os.Remove(filepath.Join(dir, "cluster-ca.pem")) },
			wantErr: "[cluster] tls_ca"},
		{name: "missing crl", certID: "n1", extra: `tls_crl = "cluster-crl.pem"`, wantErr: "cluster.toml:11: [cluster] tls_crl"},
		{name: "crl of another authority", certID: "n1", extra: `tls_crl = "cluster-crl.pem"`,
			prepare: func(dir string) {
				other := pkitest.NewCA(t, "other")
				if _, err := other.WriteCRL(filepath.Join(dir, "cluster-crl.pem"), 0); err != nil {
					t.Fatal(err)
				}
			}, wantErr: "not signed by the cluster authority"},
		{name: "certificate of another node", certID: "n2",
			wantW: `security: the certificate ` /* … */},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := nodeDir(t, ca, tc.certID, tc.extra)
			if tc.prepare != nil {
				tc.prepare(dir)
			}
			_, warnings, err := config.Load(filepath.Join(dir, config.FileName), config.DefaultClientPort)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, config.ErrInvalid) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(warnings, "\n"); !strings.Contains(w, tc.wantW) || !strings.Contains(w, `names node "n2" and not "n1"`) {
				t.Fatalf("warnings %q", w)
			}
		})
	}
}

func TestLoadSANWarning(t *testing.T) {
	ca := pkitest.NewCA(t, "c")
	dir := nodeDir(t, ca, "n1", "")
	doc, _ := os.ReadFile(filepath.Join(dir, config.FileName))
	doc = []byte(strings.Replace(string(doc), `advertise = "10.0.0.1:7107"`, `advertise = "10.0.0.7:7107"`, 1))
	os.WriteFile(filepath.Join(dir, config.FileName), doc, 0o644)
	_, warnings, err := config.Load(filepath.Join(dir, config.FileName), config.DefaultClientPort)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(warnings, "\n"); !strings.Contains(w, `does not carry the advertised address "10.0.0.7" in its SAN`) {
		t.Fatalf("warnings %q", w)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, _, err := config.Load(filepath.Join(t.TempDir(), "cluster.toml"), 7007)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	p, _ := config.DefaultPath()
	if filepath.Base(p) != config.FileName {
		t.Fatalf("DefaultPath = %q", p)
	}
}
