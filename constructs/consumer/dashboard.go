package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
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
	return [][]awscloudwatch.IWidget{{
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
			monitor.Graph("Dead-letter queues (messages)", 12, monitor.Metrics(
				c.MetricDeadLetterMessages(&awscloudwatch.MetricOptions{Label: jsii.String("Dead-letter queue")}),
				c.MetricSubscriptionDeadLetterMessages(&awscloudwatch.MetricOptions{Label: jsii.String("Subscription dead-letter queue")}))),
		},
		append([]awscloudwatch.IWidget{
			monitor.Graph("Oldest message age (seconds)", 8, monitor.Metrics(c.MetricOldestMessageAge(nil)),
				&awscloudwatch.HorizontalAnnotation{Value: jsii.Number(c.oldestMessageAge.Seconds()), Label: jsii.String("alarm " + contract.Format(c.oldestMessageAge))}),
		}, h.FunctionGraphs()...),
		{
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
