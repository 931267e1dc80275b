package httpkey

import "github.com/idempotent-consumer/idempotent-consumer/internal/contract"

// ConfigOf is the HTTP adapter's configuration for s, without what the
// handler builds (Verifier, Client, Logger, Metrics, MetricsLevel): the one
// place where the contract's settings become httpkey.Config.
func ConfigOf(s contract.Settings) Config {
	return Config{
		Name:             s.Consumer,
		ReplayHeaders:    s.ReplayHeaders,
		HashHeaders:      s.HashHeaders,
		MaxBodyBytes:     s.MaxRequestBytes,
		MetricsNamespace: s.MetricsNamespace,
	}
}
