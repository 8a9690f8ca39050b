// Package clienttls holds the certificates of the client port (the MySQL
// protocol): it loads and checks the files of --ssl-cert, --ssl-key,
// --ssl-ca and --ssl-crl, makes a self-signed pair in the data directory
// when none are given (as MySQL 8's auto_generate_certs does), builds the
// tls.Config that connections are served with, and names what MySQL's
// variables and status show: the protocol version (TLSv1.3), the cipher
// in OpenSSL's words (TLS_AES_128_GCM_SHA256, ECDHE-ECDSA-AES128-GCM-SHA256)
// and distinguished names as OpenSSL's X509_NAME_oneline writes them
// (/C=FR/O=Example/CN=app), which REQUIRE SUBJECT and ISSUER compare.
//
// Only TLS 1.2 and 1.3 are served: a client that offers only TLS 1.0 or
// 1.1 fails the handshake.
//
// The package starts no goroutines and holds no state: a *Material is
// immutable once loaded, and safe for concurrent use. Reloading is loading
// again and swapping the pointer (the caller's).
//
// Example:
//
//	files, made, err := clienttls.Auto(stateDir, clienttls.AutoNames("8.0.40-miraj-1.0.0"), hosts)
//	m, err := clienttls.Load(files, time.Now())
//	conn := tls.Server(raw, m.Config())
package clienttls
