package ops

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Stats are a consumer's outcome counts over a period, from the metrics its
// handler writes (one Embedded Metric Format line per batch).
type Stats struct {
	Consumer  string    `json:"consumer"`
	Namespace string    `json:"metrics_namespace"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	// Counts has one entry per outcome metric (sqsbatch.Outcome.MetricName)
	// and sqsbatch.MetricDeadLetteredUnstarted: the sum over the period.
	Counts map[string]float64 `json:"counts"`
}

// statsMetrics are the metrics stats sums: each outcome's, and the records
// not started on their last receive.
func statsMetrics() []string {
	var names []string
	for _, o := range sqsbatch.Outcomes() {
		names = append(names, o.MetricName())
	}
	return append(names, sqsbatch.MetricDeadLetteredUnstarted)
}

func runStats(ctx context.Context, o *options, args []string) error {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(o.stderr)
	var c common
	c.register(fs)
	since := fs.Duration("since", 24*time.Hour, "the period, ending now")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *since < time.Minute {
		return fmt.Errorf("--since %s: give at least 1m, CloudWatch's shortest period for these metrics", *since)
	}
	t, err := locate(ctx, o, &c, false)
	if err != nil {
		return err
	}
	to := o.now().UTC().Truncate(time.Minute)
	st := Stats{Consumer: t.s.Consumer, Namespace: t.s.MetricsNamespace, From: to.Add(-*since), To: to, Counts: map[string]float64{}}
	if st.Consumer == "" {
		return errors.New("unknown consumer name: give --function or --consumer (the Consumer dimension of its metrics, the construct's path)")
	}
	period := int32((*since + time.Minute - 1) / time.Minute * 60) // one datapoint: the whole period, in whole minutes
	var queries []cwtypes.MetricDataQuery
	ids := map[string]string{}
	for i, name := range statsMetrics() {
		id := fmt.Sprintf("m%d", i)
		ids[id] = name
		queries = append(queries, cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String(st.Namespace), MetricName: aws.String(name),
				Dimensions: []cwtypes.Dimension{{Name: aws.String(sqsbatch.MetricDimension), Value: aws.String(st.Consumer)}}},
			Period: aws.Int32(period), Stat: aws.String("Sum"),
		}})
		st.Counts[name] = 0
	}
	in := &cloudwatch.GetMetricDataInput{StartTime: aws.Time(st.From), EndTime: aws.Time(st.To), MetricDataQueries: queries}
	for p := cloudwatch.NewGetMetricDataPaginator(t.c.cw, in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("read the metrics of %s in %s: %w", st.Consumer, st.Namespace, err)
		}
		for _, r := range out.MetricDataResults {
			for _, v := range r.Values {
				st.Counts[ids[aws.ToString(r.Id)]] += v
			}
		}
	}
	if c.json {
		return json.NewEncoder(o.stdout).Encode(st)
	}
	fmt.Fprintf(o.stdout, "%s (metrics namespace %s), %s to %s:\n", st.Consumer, st.Namespace, st.From.Format(time.RFC3339), st.To.Format(time.RFC3339))
	tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
	for _, name := range statsMetrics() {
		fmt.Fprintf(tw, "%s\t%.0f\n", name, st.Counts[name])
	}
	tw.Flush()
	return nil
}
