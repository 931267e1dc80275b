package ops

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Stats are a consumer's outcome counts over a period, from the metrics its
// handler writes (one Embedded Metric Format line per batch).
type Stats struct {
	Consumer string `json:"consumer"`
	// Region is the Region whose metrics are read (--region, or the SDK's
	// default configuration): the metrics' Region dimension.
	Region    string    `json:"region"`
	Namespace string    `json:"metrics_namespace"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	// PeriodSeconds is the one period asked of CloudWatch: a multiple of
	// the granularity CloudWatch keeps for a start time that far back
	// (statsWindow), so From may be earlier than --since asked.
	PeriodSeconds int32 `json:"period_seconds"`
	// Counts has one entry per outcome metric (outcome.Outcome.MetricName)
	// and outcome.MetricDeadLetteredUnstarted: the sum over the period.
	Counts map[string]float64 `json:"counts"`
	// NoData is true when CloudWatch returned no data point of any of these
	// metrics: Counts are then zeros by default, not by measure (the
	// consumer handled nothing, or the namespace or consumer name is not
	// the one its metrics carry).
	NoData bool `json:"no_data"`
}

// CloudWatch keeps a regular-resolution metric's data points at a coarser
// granularity as they age, and answers a query whose start time is older
// than a granularity's horizon with no data at all unless its period is a
// multiple of that granularity (the MetricStat Period rule:
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricStat.html).
const (
	minuteHorizon = 15 * 24 * time.Hour // older start: a multiple of 300 s
	fiveHorizon   = 63 * 24 * time.Hour // older start: a multiple of 3600 s
	// retention is how long CloudWatch keeps hourly data points (455 days):
	// --since is refused beyond it (less the alignment to the hour).
	retention = 455 * 24 * time.Hour
)

// statsWindow is the period stats asks for, ending at now truncated to the
// minute and covering at least since: one data point, whose period is a
// multiple of the granularity CloudWatch accepts for its start time, and
// whose start is aligned down to that granularity (as CloudWatch rounds a
// start time down to it).
func statsWindow(now time.Time, since time.Duration) (from, to time.Time, period int32) {
	to = now.UTC().Truncate(time.Minute)
	g := time.Minute
	from = to.Add(-since).Truncate(g)
	for _, step := range []struct {
		horizon time.Duration
		g       time.Duration
	}{{minuteHorizon, 5 * time.Minute}, {fiveHorizon, time.Hour}} {
		if now.Sub(from) > step.horizon-time.Minute { // a minute's margin for the request's flight
			g = step.g
			from = to.Add(-since).Truncate(g)
		}
	}
	n := (to.Sub(from) + g - 1) / g
	return from, to, int32((n * g) / time.Second)
}

// statsMetrics are the metrics stats sums: each outcome's, and the records
// not started on their last receive.
func statsMetrics() []string {
	var names []string
	for _, o := range outcome.Outcomes() {
		names = append(names, o.MetricName())
	}
	return append(names, outcome.MetricDeadLetteredUnstarted)
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
	if *since > retention-time.Hour {
		return fmt.Errorf("--since %s: CloudWatch keeps these metrics for 455 days; give at most %s", *since, retention-time.Hour)
	}
	t, err := locate(ctx, o, &c, false)
	if err != nil {
		return err
	}
	from, to, period := statsWindow(o.now(), *since)
	st := Stats{Consumer: t.s.Consumer, Region: t.c.region, Namespace: t.s.MetricsNamespace, From: from, To: to, PeriodSeconds: period, Counts: map[string]float64{}, NoData: true}
	if st.Consumer == "" {
		return errors.New("unknown consumer name: give --function or --consumer (the Consumer dimension of its metrics, the construct's path)")
	}
	var dims []cwtypes.Dimension
	for name, value := range outcome.MetricDimensions(st.Consumer, st.Region) {
		dims = append(dims, cwtypes.Dimension{Name: aws.String(name), Value: aws.String(value)})
	}
	var queries []cwtypes.MetricDataQuery
	ids := map[string]string{}
	for i, name := range statsMetrics() {
		id := fmt.Sprintf("m%d", i)
		ids[id] = name
		queries = append(queries, cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String(st.Namespace), MetricName: aws.String(name),
				Dimensions: dims},
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
				st.NoData = false
			}
		}
	}
	if c.json {
		return json.NewEncoder(o.stdout).Encode(st)
	}
	fmt.Fprintf(o.stdout, "%s in %s (metrics namespace %s), %s to %s (one period of %d s):\n", st.Consumer, st.Region, st.Namespace, st.From.Format(time.RFC3339), st.To.Format(time.RFC3339), st.PeriodSeconds)
	if st.NoData {
		fmt.Fprintf(o.stdout, "no data: CloudWatch has no data point of any of these metrics (%s) for %s=%s, %s=%s in %s over the period, so there are no counts to show.\n",
			strings.Join(statsMetrics(), ", "), outcome.MetricDimension, st.Consumer, outcome.RegionDimension, st.Region, st.Namespace)
		fmt.Fprintln(o.stdout, "Either the consumer handled nothing, or --namespace/--consumer are not the ones its metrics carry (see the EMF lines of its log).")
		return nil
	}
	tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
	for _, name := range statsMetrics() {
		fmt.Fprintf(tw, "%s\t%.0f\n", name, st.Counts[name])
	}
	tw.Flush()
	return nil
}
