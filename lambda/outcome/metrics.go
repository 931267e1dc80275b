package outcome

import "github.com/idempotent-consumer/idempotent-consumer/contract"

// Names of the CloudWatch metrics, written as Embedded Metric Format lines
// (one per batch, or per request) in the contract's metrics namespace
// (DefaultNamespace unless set): a count per outcome (Outcome.MetricName)
// and the names below, with the dimensions of MetricDimensions: the
// consumer's name (MetricDimension) and the Region the function runs in
// (RegionDimension).
const (
	// DefaultNamespace is the CloudWatch namespace of the metrics when the
	// contract names none (contract.MetricsNamespaceVar).
	DefaultNamespace = contract.DefaultMetricsNamespace
	// MetricDimension is the metrics' first dimension: the consumer's name.
	MetricDimension = "Consumer"
	// RegionDimension is the metrics' second dimension: the AWS Region the
	// function runs in (AWS_REGION, which Lambda sets), so that one
	// consumer's metrics from two Regions stay apart where they are read
	// together (a cross-Region dashboard, a metrics stream).
	RegionDimension = "Region"
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

// MetricDimensions is the dimensions of every metric of a consumer, by
// name: MetricDimension, the consumer's name, and RegionDimension, region,
// left out when region is empty (outside Lambda, with no AWS_REGION). The
// runtime writes them and the constructs' alarms and metrics read them from
// here, so that the alarms match what the runtime writes.
func MetricDimensions(consumer, region string) map[string]string {
	dims := map[string]string{MetricDimension: consumer}
	if region != "" {
		dims[RegionDimension] = region
	}
	return dims
}
