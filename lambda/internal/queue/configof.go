package queue

import (
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// ConfigOf is the batch adapter's configuration for s, without what is
// the handler's to choose (Logger, Metrics, MetricsLevel): the one place
// where the contract's settings become sqsbatch.Config.
func ConfigOf(s contract.Settings) Config {
	return Config{
		Concurrency:      s.BatchConcurrency,
		MinRemaining:     s.MinRemaining,
		MaxMessageBytes:  s.MaxMessageBytes,
		Delivery:         s.Delivery,
		FIFO:             s.FIFO,
		MaxReceiveCount:  s.MaxReceiveCount,
		BackoffBase:      backoffBase(s.BackoffBase),
		BackoffCap:       s.BackoffCap,
		BackoffFIFOCap:   s.BackoffFIFOCap,
		Consumer:         s.Consumer,
		MetricsNamespace: s.MetricsNamespace,
	}
}

// backoffBase is sqsbatch.Config.BackoffBase for the setting: the
// setting's zero (off) is the adapter's negative, whose zero is its
// default.
func backoffBase(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
