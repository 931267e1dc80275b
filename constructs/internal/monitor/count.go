package monitor

import "github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"

// Count is one of the handler's counts that is not an outcome (sum), by its
// Embedded Metric Format name: the stream adapter's Skipped
// (outcome.MetricSkipped), for one.
func (h Handler) Count(name string, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return h.metric(name, WithStatistic(props, "Sum"))
}
