// Package config loads and validates a cluster node's cluster.toml (spec
// §17.2.1): the [node] and [cluster] tables, their defaults, ranges and
// cross-key rules.
//
// The file is decoded by github.com/pelletier/go-toml/v2; this package adds
// the semantic checks. Every error names the file, the line of the offending
// key when it can be found, the key and what is allowed. Keys that the spec
// does not define are not fatal: they come back as warnings so that a typo is
// reported rather than silently ignored.
//
// The package owns no goroutines and holds no state: Load and Parse are safe
// to call concurrently, and a returned *Cluster is read-only by convention.
//
// Example (what miraj-server does with --cluster-config):
//
//	c, warnings, err := config.Load(path, 7007)
//	if err != nil {
//		return err // refuse to start
//	}
//	for _, w := range warnings {
//		logger.Warn(w)
//	}
//	_ = c.Peers() // seeds without this node's own address
package config
