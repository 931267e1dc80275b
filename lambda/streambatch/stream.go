// Package streambatch turns a business function into a Lambda handler for
// Kinesis Data Streams and DynamoDB Streams batches that runs each record
// under an idempotency.Guard and reports the stream's partial batch
// response.
//
// On a stream, duplicates are the rule, not the exception: Lambda
// checkpoints a shard at a sequence number, and after a failure it resumes
// from the checkpoint, so every record after the failed one is delivered
// again. The guard absorbs those replays: a record whose fact was completed
// is a Duplicate, at one store request (none from the completed-key cache,
// or from an earlier record of the same batch with the same fact).
//
// The records of one ordering key run in order: a Kinesis record's
// partition key, a DynamoDB stream record's item key. Different keys run in
// parallel, Config.Concurrency at most at once. After a record of a key
// fails, the later records of that key in the batch are not started
// (NotStarted), so that no effect of a key overtakes an earlier one that
// has not happened yet. The response names one record, the failed (or not
// started) record with the lowest sequence number, compared as a number:
// Lambda resumes the shard from it (see reportedSequenceNumber).
//
// The outcomes, their names and metrics are the queue adapter's
// (outcome.Outcome, outcome.NewLogger, outcome.MetricDimension): one
// dashboard and one set of alarms read every adapter of the library.
package streambatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/verdict"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Config configures a Kinesis or DynamoDB handler. The zero value of every
// field means the documented default, but for contract.Removes, which a DynamoDB
// handler needs to be told.
type Config struct {
	// Concurrency bounds how many records of a batch run at once; records
	// of one ordering key always run one after another. With 1, every
	// record runs in batch order in the goroutine that called Handle.
	// Default: all records of the batch.
	Concurrency int
	// MinRemaining is the least time before the deadline for a record to be
	// started; later records are not started, and reported. Default:
	// contract.DefaultMinRemaining of the guard's FinishBudget.
	MinRemaining time.Duration
	// OldImage hands a DynamoDB handler's function the item's old image
	// too (Change.Old) on MODIFY records: the stream's view type must be
	// NEW_AND_OLD_IMAGES. A REMOVE record's old image, when its stream
	// carries one, is always handed over. Kinesis: not used.
	OldImage bool
	// Removes says what a DynamoDB handler does with REMOVE records (an
	// item deleted, by a caller or by TTL): contract.RemoveRun, contract.RemoveSkip or
	// contract.RemoveSkipExpired.
	// Required for a DynamoDB handler: a REMOVE is never skipped without a
	// word. Kinesis: not used.
	Removes contract.Removes
	// Consumer names the consumer in logs and metrics. Default: "consumer".
	Consumer string
	// MetricsNamespace is the CloudWatch namespace of the metrics.
	// Default: outcome.DefaultNamespace.
	MetricsNamespace string
	// Logger receives one line per record. Default: outcome.NewLogger on
	// standard error at INFO.
	Logger *slog.Logger
	// Metrics receives one Embedded Metric Format line per batch. Default:
	// standard output; io.Discard turns metrics off.
	Metrics io.Writer
	// MetricsLevel is the "level" of the metrics line. Default: "INFO".
	MetricsLevel string
}

// record is one stream record as the core runs it.
type record[M any] struct {
	seq    string    // the sequence number, as the event carries it
	group  string    // the ordering key: partition key, item key
	id     string    // what a log line names it by (event id)
	origin time.Time // when the stream took it; zero: unknown
	// decode returns the record's message and the payload whose hash is
	// its fact's, or skip (a reason) for a record acknowledged without
	// running, or an error (bad input, or an error wrapping
	// outcome.ErrMisconfigured).
	decode func() (msg M, payload []byte, skip string, err error)
}

// report is what happened to one record.
type report struct {
	batch.Report
	skipped string // the reason a record was acknowledged without running
}

// core is what both handlers share: the batch engine and the stream's
// names.
type core[M any] struct {
	e          batch.Engine[M]
	cfg        Config
	originName string // what the origin time is, for an expired record's line
	groupName  string // what the ordering key is, for a not-started record's line
}

func newCore[M any](guard *idempotency.Guard, key handler.KeyFunc[M], run batch.RunFunc[M], cfg Config) *core[M] {
	c := &core[M]{cfg: cfg}
	c.e = batch.Engine[M]{Guard: guard, Key: key, Run: run, Explain: expiredReason, Options: batch.Options{
		Consumer: cfg.Consumer, MinRemaining: cfg.MinRemaining, Logger: cfg.Logger,
		Metrics: cfg.Metrics, MetricsNamespace: cfg.MetricsNamespace, MetricsLevel: cfg.MetricsLevel,
	}}
	c.e.Defaults(contract.DefaultMinRemaining(guard.FinishBudget()))
	return c
}

// handle runs a batch and returns the sequence number to report (empty:
// the whole batch succeeded), or an error that fails the invocation.
func (c *core[M]) handle(ctx context.Context, recs []record[M]) (string, error) {
	start := time.Now()
	reports := make([]report, len(recs))
	b := c.e.Batch()
	batch.Run(groupsOf(recs), c.cfg.Concurrency, func(i int, failed bool) bool {
		reports[i] = c.next(ctx, b, &recs[i], failed)
		return reports[i].Outcome.Succeeded()
	})
	var t batch.Tally
	skipped := 0
	var failedIdx []int
	for i, r := range reports {
		if r.skipped != "" {
			skipped++
			t.Judged()
		} else {
			t.Add(r.Report, i)
		}
		c.log(ctx, &recs[i], r)
		if !r.Outcome.Succeeded() {
			failedIdx = append(failedIdx, i)
		}
	}
	t.Emit(&c.e.Options, time.Since(start), emf.Metric{Name: outcome.MetricSkipped, Unit: "Count", Value: skipped})
	if err := t.Err(); err != nil {
		return "", err
	}
	if len(failedIdx) == 0 {
		return "", nil
	}
	return c.checkpoint(ctx, recs, failedIdx), nil
}

// reportedSequenceNumber returns the sequence number a stream handler
// reports for the failed records whose sequence numbers are seqs: the
// lowest, compared as a number (sequence numbers are decimal strings of up
// to 128 digits, whose lexical order is not their order: "99" < "100").
//
// Lambda's partial batch response for streams names records by sequence
// number, and "if the batchItemFailures array contains multiple items,
// Lambda uses the record with the lowest sequence number as the checkpoint.
// Lambda then retries all records starting from that checkpoint"
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html,
// and services-ddb-batchfailurereporting.html for DynamoDB Streams). So
// one item is reported, the lowest: what Lambda would take of a longer list,
// with nothing for a reader of the response to misread. A sequence number
// that is not a decimal number is an error.
func reportedSequenceNumber(seqs []string) (string, error) {
	var low *big.Int
	lowest := ""
	for _, s := range seqs {
		n, ok := parseSeq(s)
		if !ok {
			return "", fmt.Errorf("sequence number %q is not a decimal number", s)
		}
		if low == nil || n.Cmp(low) < 0 {
			low, lowest = n, s
		}
	}
	if low == nil {
		return "", errors.New("no sequence number")
	}
	return lowest, nil
}

// parseSeq reads a sequence number: decimal digits only (big.Int's
// SetString would take a sign, "0x" and underscores).
func parseSeq(s string) (*big.Int, bool) {
	if s == "" || len(s) > 256 {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(s, 10)
	return n, ok
}

// groupsOf returns the indexes of the records by ordering key, each group in
// batch order (the shard's order), the groups in the order of their first
// record.
func groupsOf[M any](recs []record[M]) [][]int {
	byGroup := make(map[string]int)
	var out [][]int
	for i, r := range recs {
		g, ok := byGroup[r.group]
		if !ok {
			g = len(out)
			byGroup[r.group] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], i)
	}
	return out
}

// next runs a record, unless an earlier record of its ordering key failed.
// A panic in the author's code (key function, decoding) fails this record
// only.
func (c *core[M]) next(ctx context.Context, b *batch.Batch[M], rec *record[M], failed bool) (r report) {
	if failed {
		return report{Report: batch.Report{Outcome: outcome.NotStarted, Err: fmt.Errorf("%w: an earlier record of its %s failed in this batch; it runs after that record, when Lambda replays the shard from it", verdict.ErrNotStarted, c.groupName)}}
	}
	defer func() {
		if p := recover(); p != nil {
			r = report{Report: batch.Report{Outcome: outcome.Failed, Key: r.Key, Err: fmt.Errorf("panic: %v", p)}}
		}
	}()
	msg, payload, skip, err := rec.decode()
	switch {
	case err != nil && errors.Is(err, outcome.ErrMisconfigured):
		return report{Report: batch.Report{Outcome: outcome.Failed, Err: err}}
	case err != nil:
		return report{Report: batch.Bad(err)}
	case skip != "":
		return report{Report: batch.Report{Outcome: outcome.Processed}, skipped: skip}
	}
	fact, bad := c.e.Fact(msg, payload)
	if bad != nil {
		return report{Report: *bad}
	}
	fact.Sent = rec.origin
	return report{Report: b.Start(ctx, batch.Fact[M]{Fact: fact, Msg: msg, Origin: c.originName, ID: slog.String("sequence_number", rec.seq)})}
}

// expiredReason adds the origin and the fix to an error wrapping
// idempotency.ErrExpired.
func expiredReason(err error, origin string) error {
	return fmt.Errorf("%w; its origin time is the %s; it is reported failed until the event source's MaximumRetryAttempts or MaximumRecordAge sends it to the on-failure destination. "+
		"Fix: a Window longer than the event source's MaximumRecordAge (the stream construct refuses one that is not), or settle the record by hand from the on-failure destination", err, origin)
}

// log writes the record's line, at the levels every source shares
// (batch.Level); a skipped record is INFO.
func (c *core[M]) log(ctx context.Context, rec *record[M], r report) {
	level := batch.Level(r.Outcome, r.Err != nil || r.NoOrigin, false)
	name := r.Outcome.String()
	if r.skipped != "" {
		level, name = slog.LevelInfo, "skipped"
	}
	attrs := []slog.Attr{
		slog.String("consumer", c.e.Consumer),
		slog.String("sequence_number", rec.seq),
		slog.String("event_id", rec.id),
		slog.String("key", r.Key),
		slog.String("outcome", name),
	}
	switch {
	case r.Err != nil:
		attrs = append(attrs, slog.String("reason", r.Err.Error()))
	case r.skipped != "":
		attrs = append(attrs, slog.String("reason", r.skipped))
	}
	if r.NoOrigin {
		attrs = append(attrs, slog.String("warning", "the record carries no origin time ("+c.originName+"): run without the age check"))
	}
	c.e.Logger.LogAttrs(ctx, level, "record", attrs...)
}

// checkpoint is the sequence number the batch reports, from which Lambda
// resumes the shard: the lowest of the failed or not started records.
func (c *core[M]) checkpoint(ctx context.Context, recs []record[M], failedIdx []int) string {
	seqs := make([]string, len(failedIdx))
	for j, i := range failedIdx {
		seqs[j] = recs[i].seq
	}
	reported, err := reportedSequenceNumber(seqs)
	if err != nil {
		// A sequence number that is not a number (never from Lambda): the
		// batch's first record is reported, which replays all of it; the
		// guard absorbs what had completed.
		reported = recs[0].seq
		c.e.Logger.LogAttrs(ctx, slog.LevelError, "checkpoint",
			slog.String("consumer", c.e.Consumer),
			slog.String("sequence_number", reported),
			slog.String("reason", err.Error()+": the batch's first record is reported, so that Lambda replays the whole batch"))
		return reported
	}
	c.e.Logger.LogAttrs(ctx, slog.LevelWarn, "checkpoint",
		slog.String("consumer", c.e.Consumer),
		slog.String("sequence_number", reported),
		slog.Int("failed", len(failedIdx)),
		slog.String("reason", "the lowest sequence number of the batch's failed or not started records: Lambda resumes the shard from it, and the guard absorbs the later records that had completed"))
	return reported
}
