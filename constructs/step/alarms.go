package step

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// Alarms are the alarms of an IdempotentStep; each fires on the first
// datapoint that breaches and treats missing data as not breaching.
//
// A step writes no metrics of its own, and each of its failures is a
// function error, a business failure (step.Fail) and a Step.InProgress
// told to a retry included: an alarm on the function's Errors would fire
// on every declined payment. The alarms that watch the step's answers read
// its log lines instead, through metric filters on its log group, and fire
// on those that ask for a person.
type Alarms struct {
	// PayloadMismatch fires when the step's fact was run with another
	// input (Step.PayloadMismatch): the key function gives two facts one
	// key, or the input carries a field that changes between executions.
	PayloadMismatch awscloudwatch.Alarm
	// LeaseLost fires when an effect outlived its lease and another
	// invocation took the fact over (Step.LeaseLost): it may have run
	// twice.
	LeaseLost awscloudwatch.Alarm
	// BadInput fires when a state input carried no key (Step.BadInput).
	BadInput awscloudwatch.Alarm
	// OutputNotStored fires when an effect's output, with the step's input,
	// was larger than Step Functions accepts less the Task state's margin
	// (Step.OutputNotStored, step.MaxOutputBytes): the effect ran and the
	// saga stops there, where a Catch sees it.
	OutputNotStored awscloudwatch.Alarm
	// StoreFailed fires when the idempotency store failed
	// (Step.StoreFailed).
	StoreFailed awscloudwatch.Alarm
	// Throttles fires when an invocation was throttled.
	Throttles awscloudwatch.Alarm
}

// All returns every alarm, in a fixed order.
func (a Alarms) All() []awscloudwatch.Alarm {
	return []awscloudwatch.Alarm{a.PayloadMismatch, a.LeaseLost, a.BadInput, a.OutputNotStored, a.StoreFailed, a.Throttles}
}

// logged is a value of a field of the step's log line that a metric
// filter counts.
type logged struct{ field, value string }

// The log lines the alarms watch, with the metric each filter writes.
var (
	loggedMismatch  = logged{"outcome", outcome.Mismatch.String()}
	loggedLeaseLost = logged{"outcome", outcome.LeaseLost.String()}
	loggedBadInput  = logged{"outcome", outcome.BadInput.String()}
	loggedNotStored = logged{"error", states.ErrorOutputNotStored}
	loggedStore     = logged{"error", states.ErrorStore}
	watched         = []logged{loggedMismatch, loggedLeaseLost, loggedBadInput, loggedNotStored, loggedStore}
)

// metricName is the metric a filter writes for l: "StepMismatch".
func (l logged) metricName() string {
	switch l {
	case loggedNotStored:
		return "StepOutputNotStored"
	case loggedStore:
		return "StepStoreFailed"
	}
	return "Step" + outcome.Outcomes()[slices.IndexFunc(outcome.Outcomes(), func(o outcome.Outcome) bool { return o.String() == l.value })].MetricName()
}

// addFilters adds a metric filter on the log group for each watched line
// of this step, in the metrics namespace, with the step's name as the
// dimension Step.
func (c *idempotentStep) addFilters() {
	c.filters = map[logged]awscloudwatch.Metric{}
	for _, l := range watched {
		f := awslogs.NewMetricFilter(c, jsii.String(l.metricName()+"Filter"), &awslogs.MetricFilterProps{
			LogGroup: c.fn.LogGroup,
			FilterPattern: awslogs.FilterPattern_All(
				awslogs.FilterPattern_StringValue(jsii.String("$.step"), jsii.String("="), jsii.String(c.name)),
				awslogs.FilterPattern_StringValue(jsii.String("$."+l.field), jsii.String("="), jsii.String(l.value))),
			MetricNamespace: jsii.String(c.s.Runtime.MetricsNamespace),
			MetricName:      jsii.String(l.metricName()),
			MetricValue:     jsii.String("1"),
			Dimensions:      &map[string]*string{"Step": jsii.String("$.step")},
		})
		c.filters[l] = f.Metric(&awscloudwatch.MetricOptions{
			DimensionsMap: &map[string]*string{"Step": jsii.String(c.name)},
			Statistic:     jsii.String("Sum"),
			Period:        awscdk.Duration_Minutes(jsii.Number(1)),
		})
	}
}

// MetricLogged implements IdempotentStep.MetricLogged.
func (c *idempotentStep) MetricLogged(field, value string, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	m, ok := c.filters[logged{field, value}]
	if !ok {
		panic(fmt.Sprintf("IdempotentStep %s: MetricLogged(%q, %q): no metric filter counts it; give one of %v", *c.Node().Path(), field, value, watched))
	}
	if props == nil {
		return m
	}
	return m.With(props)
}

func (c *idempotentStep) addAlarms() {
	c.addFilters()
	id, s := c.s.ID, c.s
	alarm := func(alarmID, description string, metric awscloudwatch.IMetric) awscloudwatch.Alarm {
		return monitor.NewAlarm(c, alarmID, description, metric, 0, s.AlarmAction)
	}
	h := monitor.Handler{Namespace: s.Runtime.MetricsNamespace, Consumer: s.Runtime.Consumer, Function: c.fn.Function, Timeout: s.Runtime.Timeout}
	c.alarms = Alarms{
		PayloadMismatch: alarm(ids.PayloadMismatchAlarm,
			fmt.Sprintf("%s: step %s was given a fact's key with another input than the one recorded (Step.PayloadMismatch); the effect did not run. The key function gives two facts one key, or the input carries a field that changes between executions (leave it out with PayloadIgnore).", id, c.name),
			c.filters[loggedMismatch]),
		LeaseLost: alarm(ids.LeaseLostAlarm,
			fmt.Sprintf("%s: step %s's effect outlived its lease and another invocation took the fact over (Step.LeaseLost), so the effect may have run twice. Raise Timeout, or make the effect faster.", id, c.name),
			c.filters[loggedLeaseLost]),
		BadInput: alarm(ids.BadInputAlarm,
			fmt.Sprintf("%s: step %s refused a state input that is not JSON or carries no key (Step.BadInput); its execution failed or was caught. Fix the state machine's input.", id, c.name),
			c.filters[loggedBadInput]),
		OutputNotStored: alarm(ids.OutputNotStoredAlarm,
			fmt.Sprintf("%s: step %s's effect ran and its output, with the step's input, was larger than Step Functions accepts less the Task state's margin (Step.OutputNotStored; the line names the bound): the execution stopped there. Return a smaller output (an id, not the document; large data in S3).", id, c.name),
			c.filters[loggedNotStored]),
		StoreFailed: alarm(ids.StoreFailedAlarm,
			fmt.Sprintf("%s: step %s could not reach the idempotency store (Step.StoreFailed); the Task's Retry tries again, and an execution whose retries ran out is to be redriven.", id, c.name),
			c.filters[loggedStore]),
		Throttles: alarm(ids.ThrottlesAlarm, fmt.Sprintf("%s: invocations were throttled (Lambda.TooManyRequestsException, retried by the Task).", id), h.Throttles(nil)),
	}
}
