package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// Widgets returns the consumer's dashboard, row by row (each row 24 units
// wide), for a dashboard of the construct (Dashboard) or of the app's own
// (awscloudwatch.Dashboard.AddWidgets(row...)). Each call returns new
// widgets.
func (c *idempotentConsumer) Widgets() [][]awscloudwatch.IWidget {
	h := c.handler()
	alarms := make([]interfacesawscloudwatch.IAlarmRef, 0, len(c.alarms.All()))
	for _, a := range c.alarms.All() {
		alarms = append(alarms, a)
	}
	return append(append([][]awscloudwatch.IWidget{{
		awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
			Width: jsii.Number(24), Height: jsii.Number(2),
			Markdown: jsii.String(fmt.Sprintf("## Idempotent consumer %s\n"+
				"**Effects run** (processed) against **duplicates absorbed** (deliveries of a fact already done, whose effect did not run again). "+
				"Mismatches, bad input, lost leases, expired messages and messages dead-lettered unstarted need a look; the dead-letter queue holds what no retry fixed.", *c.Node().Path())),
		}),
	},
		h.OutcomeRow(),
		{
			h.RetriedGraph(),
			monitor.Graph("Dead-letter queues (messages)", 12, c.deadLetterMetrics()),
		},
	}, c.sourceRows()...), [][]awscloudwatch.IWidget{
		append([]awscloudwatch.IWidget{
			monitor.Graph("Oldest message age (seconds)", 8, monitor.Metrics(c.MetricOldestMessageAge(nil)),
				&awscloudwatch.HorizontalAnnotation{Value: jsii.Number(c.oldestMessageAge.Seconds()), Label: jsii.String("alarm " + contract.Format(c.oldestMessageAge))}),
		}, h.FunctionGraphs()...),
		{
			awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
				Title: jsii.String("Alarms"), Width: jsii.Number(24), Height: jsii.Number(3), Alarms: &alarms,
			}),
		}}...)
}

// deadLetterMetrics are the depths of the consumer's dead-letter queues:
// the queue's, and its source's (the subscription's, the rule target's).
func (c *idempotentConsumer) deadLetterMetrics() *[]awscloudwatch.IMetric {
	m := []awscloudwatch.IMetric{c.MetricDeadLetterMessages(&awscloudwatch.MetricOptions{Label: jsii.String("Dead-letter queue")})}
	if c.subDLQ != nil {
		m = append(m, c.MetricSubscriptionDeadLetterMessages(&awscloudwatch.MetricOptions{Label: jsii.String("Subscription dead-letter queue")}))
	}
	if c.eventDLQ != nil {
		m = append(m, c.MetricEventDeadLetterMessages(&awscloudwatch.MetricOptions{Label: jsii.String("Rule target dead-letter queue")}))
	}
	return &m
}

// sourceRows are the rows of the consumer's source: the rule's deliveries
// for an EventBridge source, none for the others.
func (c *idempotentConsumer) sourceRows() [][]awscloudwatch.IWidget {
	if c.rule == nil {
		return nil
	}
	return [][]awscloudwatch.IWidget{{
		monitor.Graph("EventBridge rule: events not delivered into the queue", 24, monitor.Metrics(
			c.MetricEventFailedInvocations(&awscloudwatch.MetricOptions{Label: jsii.String("Failed invocations")}),
			c.MetricEventsSentToDeadLetterQueue(&awscloudwatch.MetricOptions{Label: jsii.String("Sent to the target dead-letter queue")}),
			c.MetricEventsFailedToBeSentToDeadLetterQueue(&awscloudwatch.MetricOptions{Label: jsii.String("Lost (not sent to the dead-letter queue)")}))),
	}}
}

// addDashboard creates the consumer's dashboard.
func (c *idempotentConsumer) addDashboard() {
	var rows []*[]awscloudwatch.IWidget
	for _, row := range c.Widgets() {
		rows = append(rows, &row)
	}
	c.dashboard = awscloudwatch.NewDashboard(c, jsii.String(ids.Dashboard), &awscloudwatch.DashboardProps{
		Widgets: &rows,
	})
}
