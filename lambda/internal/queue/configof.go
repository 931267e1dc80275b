package queue

import (
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
)

// ConfigOf is the transport's configuration for s, without what is the
// handler's to choose (Logger, Metrics, MetricsLevel): the one place where
// the contract's queue settings become sqsbatch.Config (the shared ones:
// batch.Of).
func ConfigOf(s contract.Settings) Config {
	return Config{
		Batch:           batch.Of(s),
		MaxMessageBytes: s.MaxMessageBytes,
		Delivery:        s.Delivery,
		FIFO:            s.FIFO,
		MaxReceiveCount: s.MaxReceiveCount,
		BackoffBase:     backoffBase(s.BackoffBase),
		BackoffCap:      s.BackoffCap,
		BackoffFIFOCap:  s.BackoffFIFOCap,
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
