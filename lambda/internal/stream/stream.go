// Package stream is the core that the stream sources of the runtime
// library (package kinesis, package dynamodbstream) run on, over the batch
// engine (lambda/internal/batch): a stream's records, their order per
// ordering key, the checkpoint a batch reports, and their log lines.
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
// parallel, handler.Batch.Concurrency at most at once. After a record of a key
// fails, the later records of that key in the batch are not started
// (NotStarted), so that no effect of a key overtakes an earlier one that
// has not happened yet. The response names one record, the failed (or not
// started) record with the lowest sequence number, compared as a number:
// Lambda resumes the shard from it (see reportedSequenceNumber).
//
// The outcomes, their names and metrics are every source's
// (outcome.Outcome, outcome.NewLogger, outcome.MetricDimension): one
// dashboard and one set of alarms read every source of the library.
package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Record is one stream record as the core runs it.
type Record[M any] struct {
	Seq    string    // the sequence number, as the event carries it
	Group  string    // the ordering key: partition key, item key
	ID     string    // what a log line names it by (event id)
	Origin time.Time // when the stream took it; zero: unknown
	// Decode returns the record's message and the payload whose hash is
	// its fact's, or skip (a reason) for a record acknowledged without
	// running, or an error (bad input, or an error wrapping
	// outcome.ErrMisconfigured).
	Decode func() (msg M, payload []byte, skip string, err error)
}

// report is what happened to one record.
type report struct {
	batch.Report
	skipped string // the reason a record was acknowledged without running
}

// Core is what every stream handler shares: the batch engine (with its
// settings) and the source's names. It is safe for concurrent use.
type Core[M any] struct {
	e      batch.Engine[M]
	origin string // what the origin time is, for an expired record's line
	group  string // what the ordering key is, for a not-started record's line
}

// New returns the core of a stream handler that keys each message with key
// and runs fn once per fact under guard. origin names the records' origin
// time ("Kinesis ApproximateArrivalTimestamp") and group their ordering key
// ("partition key"), for the log lines.
func New[M any](guard *idempotency.Guard, key handler.KeyFunc[M], fn handler.Func[M], o handler.Batch, origin, group string) *Core[M] {
	return newCore(guard, key, batch.Effect(guard, fn), o, origin, group)
}

// NewTx is New for a transactional effect: fn's writes commit with the
// COMPLETED record in one request.
func NewTx[M, W any](guard *idempotency.Guard, key handler.KeyFunc[M], fn handler.TxFunc[M, W], o handler.Batch, origin, group string) *Core[M] {
	return newCore(guard, key, batch.TxEffect(guard, fn), o, origin, group)
}

func newCore[M any](guard *idempotency.Guard, key handler.KeyFunc[M], run batch.RunFunc[M], o handler.Batch, origin, group string) *Core[M] {
	return &Core[M]{e: batch.NewEngine(guard, key, run, expiredReason, o), origin: origin, group: group}
}

// Handle runs a batch and returns the sequence number to report (empty:
// the whole batch succeeded), or an error that fails the invocation: when
// no record could be judged, or when one met an error wrapping
// outcome.ErrMisconfigured (Lambda then retries the whole batch).
func (c *Core[M]) Handle(ctx context.Context, recs []Record[M]) (string, error) {
	start := time.Now()
	reports := make([]report, len(recs))
	b := &batch.Batch[M]{Engine: &c.e}
	batch.Run(groupsOf(recs), c.e.Concurrency, func(i int, failed bool) bool {
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
	t.Emit(&c.e.Batch, time.Since(start), outcome.MetricSkipped, skipped)
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
func groupsOf[M any](recs []Record[M]) [][]int {
	byGroup := make(map[string]int)
	var out [][]int
	for i, r := range recs {
		g, ok := byGroup[r.Group]
		if !ok {
			g = len(out)
			byGroup[r.Group] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], i)
	}
	return out
}

// next runs a record, unless an earlier record of its ordering key failed.
// A panic in the author's code (key function, decoding) fails this record
// only.
func (c *Core[M]) next(ctx context.Context, b *batch.Batch[M], rec *Record[M], failed bool) (r report) {
	if failed {
		return report{Report: batch.Behind("an earlier record of its " + c.group + " failed in this batch; it runs after that record, when Lambda replays the shard from it")}
	}
	defer func() {
		if p := recover(); p != nil {
			r = report{Report: batch.Report{Outcome: outcome.Failed, Key: r.Key, Err: fmt.Errorf("panic: %v", p)}}
		}
	}()
	msg, payload, skip, err := rec.Decode()
	switch {
	case err != nil:
		return report{Report: batch.Bad(err)}
	case skip != "":
		return report{Report: batch.Report{Outcome: outcome.Processed}, skipped: skip}
	}
	fact, bad := c.e.Fact(msg, payload)
	if bad != nil {
		return report{Report: *bad}
	}
	fact.Sent = rec.Origin
	return report{Report: b.Start(ctx, batch.Fact[M]{Fact: fact, Msg: msg, Origin: c.origin, ID: slog.String("sequence_number", rec.Seq)})}
}

// expiredReason adds the origin and the fix to an error wrapping
// idempotency.ErrExpired.
func expiredReason(err error, origin string) error {
	return fmt.Errorf("%w; its origin time is the %s; it is reported failed until the event source's MaximumRetryAttempts or MaximumRecordAge sends it to the on-failure destination. "+
		"Fix: a Window longer than the event source's MaximumRecordAge (the stream construct refuses one that is not), or settle the record by hand from the on-failure destination", err, origin)
}

// log writes the record's line, at the levels every source shares
// (batch.Level); a skipped record is INFO.
func (c *Core[M]) log(ctx context.Context, rec *Record[M], r report) {
	level := batch.Level(r.Outcome, r.Err != nil || r.NoOrigin, false)
	name := r.Outcome.String()
	if r.skipped != "" {
		level, name = slog.LevelInfo, "skipped"
	}
	attrs := []slog.Attr{
		slog.String("consumer", c.e.Consumer),
		slog.String("sequence_number", rec.Seq),
		slog.String("event_id", rec.ID),
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
		attrs = append(attrs, slog.String("warning", "the record carries no origin time ("+c.origin+"): run without the age check"))
	}
	c.e.Logger.LogAttrs(ctx, level, "record", attrs...)
}

// checkpoint is the sequence number the batch reports, from which Lambda
// resumes the shard: the lowest of the failed or not started records.
func (c *Core[M]) checkpoint(ctx context.Context, recs []Record[M], failedIdx []int) string {
	seqs := make([]string, len(failedIdx))
	for j, i := range failedIdx {
		seqs[j] = recs[i].Seq
	}
	reported, err := reportedSequenceNumber(seqs)
	if err != nil {
		// A sequence number that is not a number (never from Lambda): the
		// batch's first record is reported, which replays all of it; the
		// guard absorbs what had completed.
		reported = recs[0].Seq
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
