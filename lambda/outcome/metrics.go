package outcome

import "github.com/idempotent-consumer/idempotent-consumer/contract"

// Names of the CloudWatch metrics, written as Embedded Metric Format lines
// (one per batch, or per request) in the contract's metrics namespace
// (DefaultNamespace unless set): a count per outcome (Outcome.MetricName)
// and the names below, with one dimension, MetricDimension, whose value is
// the consumer's name.
const (
	// DefaultNamespace is the CloudWatch namespace of the metrics when the
	// contract names none (contract.MetricsNamespaceVar).
	DefaultNamespace = contract.DefaultMetricsNamespace
	// MetricDimension is the metrics' dimension: the consumer's name.
	MetricDimension = "Consumer"
	// MetricBatchDuration is the time a batch took, in milliseconds.
	MetricBatchDuration = "BatchDuration"
	// MetricDeadLetteredUnstarted counts the records not started on their
	// message's last receive (ApproximateReceiveCount at least the queue's
	// maxReceiveCount): SQS moves them to the dead-letter queue without their
	// effect ever having run. On a FIFO queue these are the messages behind a
	// failing message of their group, received and reported failed with it
	// each time until they reach the DLQ together. Only counted when the
	// maxReceiveCount is known.
	MetricDeadLetteredUnstarted = "DeadLetteredUnstarted"
	// MetricSkipped counts the stream records acknowledged without running
	// the business function, by the consumer's choice (a REMOVE skipped).
	MetricSkipped = "Skipped"
	// MetricUnauthorized counts the requests a verifier or client check
	// refused (401).
	MetricUnauthorized = "Unauthorized"
	// MetricUnkeyed counts the requests without a key served with no
	// idempotency.
	MetricUnkeyed = "Unkeyed"
	// MetricServerErrors counts the responses of status 500 and above,
	// whatever their cause.
	MetricServerErrors = "ServerErrors"
	// MetricRequestDuration is the time a request took, in milliseconds.
	MetricRequestDuration = "RequestDuration"
)
