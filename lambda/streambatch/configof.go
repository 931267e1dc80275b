package streambatch

import "github.com/idempotent-consumer/idempotent-consumer/internal/contract"

// ConfigOf is the stream adapter's configuration for s, without what
// is the handler's to choose (Logger, Metrics, MetricsLevel): the one place
// where the contract's settings become streambatch.Config.
func ConfigOf(s contract.Settings) Config {
	return Config{
		Concurrency:      s.BatchConcurrency,
		MinRemaining:     s.MinRemaining,
		OldImage:         s.StreamImages == contract.ImagesNewAndOld,
		Removes:          s.StreamRemoves,
		Consumer:         s.Consumer,
		MetricsNamespace: s.MetricsNamespace,
	}
}
