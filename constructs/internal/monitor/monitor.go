// Package monitor holds what every consumer of the family watches: the
// handler's own metrics (the outcomes and the batch duration it writes as
// Embedded Metric Format lines), the function's, the alarm they all share
// the shape of, and the dashboard widgets of outcomes and of the function.
// A consumer adds the metrics and widgets of its source (a queue's depth, a
// stream's iterator age) and the words of its alarms.
package monitor

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Handler is a consumer's handler as the metrics see it: the namespace and
// the Consumer dimension its metrics lines carry (beside the Region of its
// stack: Dimensions), and its function.
type Handler struct {
	// Namespace is the MetricsNamespace the handler writes in.
	Namespace string
	// Consumer is the value of the Consumer dimension: the consumer's
	// construct path.
	Consumer string
	Function awslambda.Function
	// Timeout is the function's, for the duration widget's annotation.
	Timeout time.Duration
}

// Outcome is the number of records that ended with outcome (sum), or nil
// for a value that is not an outcome.
func (h Handler) Outcome(o outcome.Outcome, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	name := o.MetricName()
	if name == "" {
		return nil
	}
	return h.metric(name, WithStatistic(props, "Sum"))
}

// BatchDuration is the time the handler took over a batch, in milliseconds
// (maximum).
func (h Handler) BatchDuration(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return h.metric(outcome.MetricBatchDuration, WithStatistic(props, "Maximum"))
}

// DeadLetteredUnstarted is the number of records the handler did not start
// on their message's last receive, which SQS moves to the dead-letter queue
// without their effect ever having run (sum; sqsbatch's
// MetricDeadLetteredUnstarted, a count beside the outcomes, not one of
// them).
func (h Handler) DeadLetteredUnstarted(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return h.metric(outcome.MetricDeadLetteredUnstarted, WithStatistic(props, "Sum"))
}

// metric is one of the handler's metrics, in the namespace the construct
// writes into its environment and with the handler's dimensions
// (Dimensions).
func (h Handler) metric(name string, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(h.Namespace),
		MetricName:    jsii.String(name),
		DimensionsMap: Dimensions(h.Function, h.Consumer),
	}).With(props)
}

// Dimensions are the dimensions of the metrics of the consumer named
// consumer whose function is in scope's stack: the runtime's own
// (outcome.MetricDimensions), with the stack's Region, which is the
// function's AWS_REGION (a token, AWS::Region, in a stack of no explicit
// Region, which CloudFormation resolves to the same).
func Dimensions(scope constructs.Construct, consumer string) *map[string]*string {
	dims := map[string]*string{}
	for name, value := range outcome.MetricDimensions(consumer, *awscdk.Stack_Of(scope).Region()) {
		dims[name] = jsii.String(value)
	}
	return &dims
}

// Errors is the number of failed invocations of the function (sum).
func (h Handler) Errors(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return h.Function.MetricErrors(WithStatistic(props, "Sum"))
}

// Throttles is the number of throttled invocations (sum).
func (h Handler) Throttles(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return h.Function.MetricThrottles(WithStatistic(props, "Sum"))
}

// Duration is the function's invocation duration (milliseconds, p99).
func (h Handler) Duration(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return h.Function.MetricDuration(WithStatistic(props, "p99"))
}

// WithStatistic returns a copy of props with the statistic set when the
// caller did not choose one.
func WithStatistic(props *awscloudwatch.MetricOptions, statistic string) *awscloudwatch.MetricOptions {
	var p awscloudwatch.MetricOptions
	if props != nil {
		p = *props
	}
	if p.Statistic == nil {
		p.Statistic = jsii.String(statistic)
	}
	return &p
}

// NewAlarm creates an alarm in scope that fires on the first datapoint
// above threshold, treats missing data as not breaching, and notifies
// action (when not nil).
func NewAlarm(scope constructs.Construct, id, description string, metric awscloudwatch.IMetric, threshold float64, action awscloudwatch.IAlarmAction) awscloudwatch.Alarm {
	a := awscloudwatch.NewAlarm(scope, jsii.String(id), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(description),
		Metric:             metric,
		Threshold:          jsii.Number(threshold),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		EvaluationPeriods:  jsii.Number(1),
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	if action != nil {
		a.AddAlarmAction(action)
	}
	return a
}

// Metrics returns its arguments as the list the widgets take.
func Metrics(m ...awscloudwatch.IMetric) *[]awscloudwatch.IMetric { return &m }

// Graph is a graph widget 6 units high.
func Graph(title string, width float64, left *[]awscloudwatch.IMetric, annotations ...*awscloudwatch.HorizontalAnnotation) awscloudwatch.IWidget {
	p := &awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Width: jsii.Number(width), Height: jsii.Number(6), Left: left}
	if len(annotations) > 0 {
		p.LeftAnnotations = &annotations
	}
	return awscloudwatch.NewGraphWidget(p)
}

// outcome is the handler's count of outcome, labelled.
func (h Handler) outcome(o outcome.Outcome, label string) awscloudwatch.IMetric {
	return h.Outcome(o, &awscloudwatch.MetricOptions{Label: jsii.String(label)})
}

// OutcomeRow is the dashboard row of effects run against duplicates
// absorbed: a graph, and the totals over the time range (24 units).
func (h Handler) OutcomeRow() []awscloudwatch.IWidget {
	return []awscloudwatch.IWidget{
		Graph("Effects run and duplicates absorbed", 12, Metrics(
			h.outcome(outcome.Processed, "Effects run (processed)"),
			h.outcome(outcome.Duplicate, "Duplicates absorbed"))),
		awscloudwatch.NewSingleValueWidget(&awscloudwatch.SingleValueWidgetProps{
			Title: jsii.String("Over the time range"), Width: jsii.Number(12), Height: jsii.Number(6),
			SetPeriodToTimeRange: jsii.Bool(true),
			Metrics: Metrics(
				h.outcome(outcome.Processed, "Effects run"),
				h.outcome(outcome.Duplicate, "Duplicates absorbed"),
				h.outcome(outcome.Mismatch, "Payload mismatches"),
				h.outcome(outcome.BadInput, "Bad input"),
				h.outcome(outcome.LeaseLost, "Leases lost")),
		}),
	}
}

// RetriedGraph is the graph of the outcomes that are retried or
// dead-lettered, and of the records dead-lettered without having started
// (12 units wide).
func (h Handler) RetriedGraph() awscloudwatch.IWidget {
	return Graph("Outcomes retried or dead-lettered", 12, Metrics(
		h.outcome(outcome.InProgress, "In progress elsewhere"),
		h.outcome(outcome.NotStarted, "Not started"),
		h.outcome(outcome.Failed, "Failed"),
		h.outcome(outcome.LeaseLost, "Lease lost"),
		h.outcome(outcome.Mismatch, "Payload mismatch"),
		h.outcome(outcome.BadInput, "Bad input"),
		h.outcome(outcome.Expired, "Expired (older than the window)"),
		h.DeadLetteredUnstarted(&awscloudwatch.MetricOptions{Label: jsii.String("Dead-lettered unstarted")})))
}

// FunctionGraphs are the graphs of the function: errors and throttles, and
// durations (the invocation's p99 and maximum, the handler's batch) against
// the timeout; 8 units wide each.
func (h Handler) FunctionGraphs() []awscloudwatch.IWidget {
	return []awscloudwatch.IWidget{
		Graph("Invocation errors and throttles", 8, Metrics(
			h.Errors(&awscloudwatch.MetricOptions{Label: jsii.String("Errors")}),
			h.Throttles(&awscloudwatch.MetricOptions{Label: jsii.String("Throttles")}))),
		Graph("Duration (ms)", 8, Metrics(
			h.Duration(&awscloudwatch.MetricOptions{Label: jsii.String("Invocation p99")}),
			h.Duration(&awscloudwatch.MetricOptions{Label: jsii.String("Invocation max"), Statistic: jsii.String("Maximum")}),
			h.BatchDuration(&awscloudwatch.MetricOptions{Label: jsii.String("Batch max (handler)")})),
			&awscloudwatch.HorizontalAnnotation{Value: jsii.Number(float64(h.Timeout.Milliseconds())), Label: jsii.String("timeout " + contract.Format(h.Timeout))}),
	}
}
