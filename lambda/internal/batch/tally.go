package batch

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/verdict"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Tally adds up a batch's reports: the metrics' counts and capacity,
// whether any fact was judged, and the first error that fails the
// invocation.
type Tally struct {
	counts   [verdict.Count]int
	capacity [verdict.Count]idempotency.Capacity
	facts    int
	judged   bool
	first    error // the first fact's error
	config   error // the first error wrapping outcome.ErrMisconfigured
}

// errNothingJudged is the invocation's error when no fact of a non-empty
// batch could be judged (each met a store error or the deadline): a
// function error, so that it shows in the function's error metrics.
var errNothingJudged = errors.New("no record of the batch could be judged")

// Add counts one fact's report; record is the index of its record in the
// batch, which the invocation's error names.
func (t *Tally) Add(r Report, record int) {
	t.counts[r.Outcome]++
	t.capacity[r.Outcome].Add(r.Capacity)
	if t.facts == 0 {
		t.first = r.Err
	}
	t.facts++
	if r.Outcome != outcome.NotStarted && !errors.Is(r.Err, idempotency.ErrStore) {
		t.judged = true
	}
	if t.config == nil && errors.Is(r.Err, outcome.ErrMisconfigured) {
		t.config = fmt.Errorf("record %d of the batch: %w", record, r.Err)
	}
}

// Judged counts a record judged without a fact (S3's test event, a
// record acknowledged without running).
func (t *Tally) Judged() { t.judged = true }

// Err is the invocation's error: a fact's misconfiguration, or no fact
// judged. The event source then retries the whole batch.
func (t *Tally) Err() error {
	if t.config != nil {
		return t.config
	}
	if t.facts > 0 && !t.judged {
		return fmt.Errorf("%w: %w", errNothingJudged, t.first)
	}
	return nil
}

// Emit writes one CloudWatch Embedded Metric Format line with the batch's
// outcome counts, the source's own count (name, n), the DynamoDB capacity its
// facts consumed, ReadUnits and WriteUnits for all of them (the table's
// bill) and the processed and duplicate facts' shares (a dashboard divides
// them by outcome.Processed and outcome.Duplicate for the units per fact of
// each), and the batch's duration.
//
// The line carries "level" (handler.Batch.MetricsLevel) and "timestamp" (RFC
// 3339): Lambda's log-level filtering reads a JSON line's level only when
// it also has a valid RFC 3339 timestamp, and takes any other line for
// INFO, which it drops at a higher application log level.
func (t *Tally) Emit(o *handler.Batch, took time.Duration, name string, n int) {
	metrics := make([]emf.Metric, 0, int(verdict.Count)+8)
	for _, oc := range outcome.Outcomes() {
		metrics = append(metrics, emf.Metric{Name: oc.MetricName(), Unit: "Count", Value: t.counts[oc]})
	}
	metrics = append(metrics, emf.Metric{Name: name, Unit: "Count", Value: n})
	var total idempotency.Capacity
	for _, c := range t.capacity {
		total.Add(c)
	}
	processed, duplicate := t.capacity[outcome.Processed], t.capacity[outcome.Duplicate]
	metrics = append(metrics,
		emf.Metric{Name: "ReadUnits", Unit: "Count", Value: total.Read}, emf.Metric{Name: "WriteUnits", Unit: "Count", Value: total.Write},
		emf.Metric{Name: "ProcessedReadUnits", Unit: "Count", Value: processed.Read}, emf.Metric{Name: "ProcessedWriteUnits", Unit: "Count", Value: processed.Write},
		emf.Metric{Name: "DuplicateReadUnits", Unit: "Count", Value: duplicate.Read}, emf.Metric{Name: "DuplicateWriteUnits", Unit: "Count", Value: duplicate.Write},
		emf.Metric{Name: outcome.MetricBatchDuration, Unit: "Milliseconds", Value: took.Milliseconds()},
	)
	err := emf.Write(o.Metrics, emf.Line{
		Namespace:  o.MetricsNamespace,
		Dimensions: outcome.MetricDimensions(o.Consumer, o.Region),
		LevelKey:   slog.LevelKey, Level: o.MetricsLevel, TimeKey: outcome.LogTimeKey,
		Metrics: metrics,
	}, time.Now())
	if err != nil {
		o.Logger.Error("metrics", slog.String("reason", err.Error()))
	}
}
