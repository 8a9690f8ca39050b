// Package transport carries messages between cluster nodes over mutual TLS
// 1.3 (spec §17.2.2–§17.2.5): a listener on the inter-node port, a dialer to
// peers, and framed links between them.
//
// Every link is authenticated both ways against tls_ca; the peer's identity
// is its certificate's common name (case-insensitive). A peer outside
// members, or whose certificate is revoked in tls_crl, fails the TLS
// handshake itself, before any frame is read. Then each side declares its
// protocol version, cluster name and node id in a hello frame: a different
// cluster, or an id other than the certificate's, is refused. A dialler also
// requires the certificate to carry the dialled address in its SAN and, when
// it dialled a given node, that node's name.
//
// Limits: the handshake (TCP, TLS, hello) is bounded by HandshakeTimeout;
// at most 4 simultaneous incoming links per known member and 16 at least in
// total (excess closed at once, logged at most every 10 s); 16 MiB per frame
// unless Conn.SetMaxFrame raises it (256 MiB at most) for a replication
// stream. A malformed or oversized frame closes the link, logged with the
// reason. Every refusal is logged in the spec's terms on the injected
// *slog.Logger.
//
// tls_crl is polled every second: a changed valid list replaces the old one
// and every link is closed (peers reconnect and are verified again); an
// unreadable list is reported and the old one kept.
//
// Goroutines: New starts nothing. Run owns the accept loop, the CRL watcher
// and one goroutine per incoming link (which runs Options.Handler); it
// returns once they have all exited. Dial runs in the caller's goroutine.
// A Conn's Send and Recv may be used from two goroutines at once (one
// sender, one receiver, or several of each, serialized).
//
// Example:
//
//	t, err := transport.New(transport.OptionsFromConfig(cfg))
//	go t.Run(ctx) // handler gets incoming links
//	c, err := t.Dial(ctx, "n2", "10.0.0.2:7107")
//	err = c.Send(ctx, myType, payload)
//	f, err := c.Recv(ctx)
package transport
