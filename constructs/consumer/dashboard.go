package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Widgets returns the consumer's dashboard, row by row (each row 24 units
// wide), for a dashboard of the construct (Dashboard) or of the app's own
// (awscloudwatch.Dashboard.AddWidgets(row...)). Each call returns new
// widgets.
func (c *idempotentConsumer) Widgets() [][]awscloudwatch.IWidget {
	outcome := func(o sqsbatch.Outcome, label string) awscloudwatch.IMetric {
		return c.MetricOutcome(o, &awscloudwatch.MetricOptions{Label: jsii.String(label)})
	}
	metrics := func(m ...awscloudwatch.IMetric) *[]awscloudwatch.IMetric { return &m }
	graph := func(title string, width float64, left *[]awscloudwatch.IMetric, annotations ...*awscloudwatch.HorizontalAnnotation) awscloudwatch.IWidget {
		p := &awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Width: jsii.Number(width), Height: jsii.Number(6), Left: left}
		if len(annotations) > 0 {
			p.LeftAnnotations = &annotations
		}
		return awscloudwatch.NewGraphWidget(p)
	}
	alarms := make([]interfacesawscloudwatch.IAlarmRef, 0, len(c.alarms.All()))
	for _, a := range c.alarms.All() {
		alarms = append(alarms, a)
	}
	return [][]awscloudwatch.IWidget{{
		awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
			Width: jsii.Number(24), Height: jsii.Number(2),
			Markdown: jsii.String(fmt.Sprintf("## Idempotent consumer %s\n"+
				"**Effects run** (processed) against **duplicates absorbed** (deliveries of a fact already done, whose effect did not run again). "+
				"Mismatches, bad input and lost leases need a look; the dead-letter queue holds what no retry fixed.", *c.Node().Path())),
		}),
	}, {
		graph("Effects run and duplicates absorbed", 12, metrics(
			outcome(sqsbatch.Processed, "Effects run (processed)"),
			outcome(sqsbatch.Duplicate, "Duplicates absorbed"))),
		awscloudwatch.NewSingleValueWidget(&awscloudwatch.SingleValueWidgetProps{
			Title: jsii.String("Over the time range"), Width: jsii.Number(12), Height: jsii.Number(6),
			SetPeriodToTimeRange: jsii.Bool(true),
			Metrics: metrics(
				outcome(sqsbatch.Processed, "Effects run"),
				outcome(sqsbatch.Duplicate, "Duplicates absorbed"),
				outcome(sqsbatch.Mismatch, "Payload mismatches"),
				outcome(sqsbatch.BadInput, "Bad input"),
				outcome(sqsbatch.LeaseLost, "Leases lost")),
		}),
	}, {
		graph("Outcomes retried or dead-lettered", 12, metrics(
			outcome(sqsbatch.InProgress, "In progress elsewhere"),
			outcome(sqsbatch.NotStarted, "Not started"),
			outcome(sqsbatch.Failed, "Failed"),
			outcome(sqsbatch.LeaseLost, "Lease lost"),
			outcome(sqsbatch.Mismatch, "Payload mismatch"),
			outcome(sqsbatch.BadInput, "Bad input"))),
		graph("Dead-letter queues (messages)", 12, metrics(
			c.MetricDeadLetterMessages(&awscloudwatch.MetricOptions{Label: jsii.String("Dead-letter queue")}),
			c.MetricSubscriptionDeadLetterMessages(&awscloudwatch.MetricOptions{Label: jsii.String("Subscription dead-letter queue")}))),
	}, {
		graph("Oldest message age (seconds)", 8, metrics(c.MetricOldestMessageAge(nil)),
			&awscloudwatch.HorizontalAnnotation{Value: jsii.Number(c.oldestMessageAge.Seconds()), Label: jsii.String("alarm " + contract.Format(c.oldestMessageAge))}),
		graph("Invocation errors and throttles", 8, metrics(
			c.MetricErrors(&awscloudwatch.MetricOptions{Label: jsii.String("Errors")}),
			c.MetricThrottles(&awscloudwatch.MetricOptions{Label: jsii.String("Throttles")}))),
		graph("Duration (ms)", 8, metrics(
			c.MetricDuration(&awscloudwatch.MetricOptions{Label: jsii.String("Invocation p99")}),
			c.MetricDuration(&awscloudwatch.MetricOptions{Label: jsii.String("Invocation max"), Statistic: jsii.String("Maximum")}),
			c.MetricBatchDuration(&awscloudwatch.MetricOptions{Label: jsii.String("Batch max (handler)")})),
			&awscloudwatch.HorizontalAnnotation{Value: jsii.Number(float64(c.timeout.Milliseconds())), Label: jsii.String("timeout " + contract.Format(c.timeout))}),
	}, {
		awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
			Title: jsii.String("Alarms"), Width: jsii.Number(24), Height: jsii.Number(3), Alarms: &alarms,
		}),
	}}
}

// addDashboard creates the consumer's dashboard.
func (c *idempotentConsumer) addDashboard() {
	var rows []*[]awscloudwatch.IWidget
	for _, row := range c.Widgets() {
		rows = append(rows, &row)
	}
	c.dashboard = awscloudwatch.NewDashboard(c, jsii.String(IDDashboard), &awscloudwatch.DashboardProps{
		Widgets: &rows,
	})
}
