// Package pki is the cluster's certificate authority (spec §17.2.2, §17.2.4):
// it creates the authority, signs node certificates, keeps the registers of
// what it signed and revoked, and produces the signed revocation list. It is
// shared by the miraj-cluster-pki tool and the server, and uses only Go's
// standard library (ECDSA P-256, X.509, CRL): no openssl needed, while
// authorities and certificates made with openssl work the same way.
//
// Files, named as in the spec:
//
//	authority folder:  cluster-ca.pem, cluster-ca-key.pem (never on the nodes),
//	                   certificats.txt (register: serial, node, end of validity),
//	                   revocations.txt (register: serial, node, revocation time),
//	                   cluster-crl.pem (signed revocation list)
//	node folder:       node.pem, node-key.pem, cluster-ca.pem (copy)
//
// An existing file is never overwritten unless Force is set (the CRL, which
// is replaced as a whole by design, excepted). Private keys are written with
// mode 0600; every file is written to a temporary file then renamed, so a
// reader never sees half of one.
//
// NewServerPair makes a self-signed authority and a server certificate it
// signs, for the client port's TLS when no certificates are configured
// (the server's data directory keeps them, as MySQL 8's auto_generate_certs
// does).
//
// The package starts no goroutines. A *CA is not safe for concurrent use:
// its operations append to registers in its folder; run one at a time.
//
// Example:
//
//	ca, err := pki.InitCA(pki.InitOptions{Name: "gestium-prod", Dir: "pki"})
//	cert, err := ca.IssueNode(pki.NodeOptions{ID: "n1", SANs: []string{"10.0.0.1"}, OutDir: "pki/n1"})
//	revoked, err := ca.Revoke(pki.RevokeOptions{ID: "n1"})
package pki
