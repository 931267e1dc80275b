package endpoint

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Widgets returns the endpoint's dashboard, row by row (24 units wide), for
// the construct's own (Dashboard) or a dashboard of the app's. Each call
// returns new widgets.
func (e *idempotentEndpoint) Widgets() [][]awscloudwatch.IWidget {
	h := e.handler
	label := func(name, l string) awscloudwatch.IMetric {
		return e.metric(name, &awscloudwatch.MetricOptions{Label: jsii.String(l)})
	}
	alarms := make([]interfacesawscloudwatch.IAlarmRef, 0, 5)
	for _, a := range e.alarms.All() {
		alarms = append(alarms, a)
	}
	return [][]awscloudwatch.IWidget{{
		awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
			Width: jsii.Number(24), Height: jsii.Number(2),
			Markdown: jsii.String(fmt.Sprintf("## Idempotent endpoint %s\n"+
				"**Effects run** (processed) against **replays** (a retry of a completed request, answered from its record). "+
				"409s are retries against running requests; 401s, refused signatures or clients; 5xx released the key or hit the store.", h.Consumer)),
		}),
	},
		h.OutcomeRow(),
		{
			monitor.Graph("Answers of the adapter", 12, monitor.Metrics(
				label(outcome.InProgress.MetricName(), "409 in progress"),
				label(outcome.Mismatch.MetricName(), "422 key reused"),
				label(outcome.BadInput.MetricName(), "400/413 bad request"),
				label(outcome.MetricUnauthorized, "401 unauthorized"),
				label(outcome.MetricServerErrors, "5xx"),
				label(outcome.MetricUnkeyed, "served unkeyed"))),
			monitor.Graph("Invocation errors and throttles", 6, monitor.Metrics(
				h.Errors(&awscloudwatch.MetricOptions{Label: jsii.String("Errors")}),
				h.Throttles(&awscloudwatch.MetricOptions{Label: jsii.String("Throttles (429)")}))),
			monitor.Graph("Duration (ms)", 6, monitor.Metrics(
				h.Duration(&awscloudwatch.MetricOptions{Label: jsii.String("Invocation p99")}),
				e.metric(outcome.MetricRequestDuration, &awscloudwatch.MetricOptions{Label: jsii.String("Request max (handler)"), Statistic: jsii.String("Maximum")})),
				&awscloudwatch.HorizontalAnnotation{Value: jsii.Number(float64(h.Timeout.Milliseconds())), Label: jsii.String("timeout " + contract.Format(h.Timeout))}),
		},
		{
			awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
				Title: jsii.String("Alarms"), Width: jsii.Number(24), Height: jsii.Number(3), Alarms: &alarms,
			}),
		}}
}

func (e *idempotentEndpoint) addDashboard() {
	var rows []*[]awscloudwatch.IWidget
	for _, row := range e.Widgets() {
		rows = append(rows, &row)
	}
	awscloudwatch.NewDashboard(e, jsii.String(ids.Dashboard), &awscloudwatch.DashboardProps{Widgets: &rows})
}
