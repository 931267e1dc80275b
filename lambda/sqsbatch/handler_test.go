package sqsbatch_test

import (
	"errors"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
)

// The shared fixture of the queue-fed sources' tests (queuetest).
type (
	order   = queuetest.Order
	fixture = queuetest.Fixture
)

var (
	orderKey         = queuetest.OrderKey
	newFixture       = queuetest.NewFixture
	newCountingStore = queuetest.NewCountingStore
	message          = queuetest.Message
	messageAt        = queuetest.MessageAt
	failedIDs        = queuetest.FailedIDs
	errThrottled     = errors.New("ProvisionedThroughputExceededException: throttled")
)
