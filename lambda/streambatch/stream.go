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
	"sync"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/flight"
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

func (c Config) withDefaults(guard *idempotency.Guard) Config {
	if c.MinRemaining <= 0 {
		c.MinRemaining = contract.DefaultMinRemaining(guard.FinishBudget())
	}
	if c.Consumer == "" {
		c.Consumer = "consumer"
	}
	emf.Defaults(&c.MetricsNamespace, &c.Logger, &c.Metrics, &c.MetricsLevel)
	return c
}

// KeyFunc derives the idempotency key from a record's message: the business
// fact (an order id and its version, an event id the producer wrote), never
// the stream's sequence number, which a producer's retry renews for the
// same fact. An empty key or an error is bad input.
type KeyFunc[M any] func(msg M) (string, error)

// Func is the business effect for one record, run at most once per fact.
type Func[M any] func(ctx context.Context, msg M, r idempotency.Reservation) (result string, err error)

// TxFunc computes a transactional effect for one record: the writes that
// commit atomically with the COMPLETED record (see idempotency.RunTx).
type TxFunc[M, W any] func(ctx context.Context, msg M, r idempotency.Reservation) (writes W, result string, err error)

// errNotStarted marks a record not started; it wraps
// idempotency.ErrNotStarted, so that verdict.Of says NotStarted.
var errNotStarted = fmt.Errorf("%w", idempotency.ErrNotStarted)

// errNothingJudged is returned when no record of a non-empty batch could be
// judged: a function error, so that it shows in the function's errors.
var errNothingJudged = errors.New("no record of the batch could be judged")

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
	outcome  outcome.Outcome
	skipped  string // the reason a record was acknowledged without running
	key      string
	err      error
	capacity idempotency.Capacity
	noOrigin bool
}

func (r report) succeeded() bool { return r.outcome.Succeeded() }

// core is what both handlers share: the guard, the key function, the
// effect, and the batch rules.
type core[M any] struct {
	guard      *idempotency.Guard
	key        KeyFunc[M]
	run        func(ctx context.Context, f idempotency.Fact, msg M) (idempotency.Result, error)
	cfg        Config
	originName string // what the origin time is, for an expired record's line
	groupName  string // what the ordering key is, for a not-started record's line
}

func newCore[M any](guard *idempotency.Guard, key KeyFunc[M], fn Func[M], cfg Config) *core[M] {
	c := &core[M]{guard: guard, key: key, cfg: cfg.withDefaults(guard)}
	c.run = func(ctx context.Context, f idempotency.Fact, msg M) (idempotency.Result, error) {
		return guard.Run(ctx, f, func(ctx context.Context, r idempotency.Reservation) (string, error) {
			return fn(ctx, msg, r)
		})
	}
	return c
}

func newTxCore[M, W any](guard *idempotency.Guard, key KeyFunc[M], fn TxFunc[M, W], cfg Config) *core[M] {
	c := &core[M]{guard: guard, key: key, cfg: cfg.withDefaults(guard)}
	c.run = func(ctx context.Context, f idempotency.Fact, msg M) (idempotency.Result, error) {
		return guard.RunTx(ctx, f, func(ctx context.Context, r idempotency.Reservation) (any, string, error) {
			return fn(ctx, msg, r)
		})
	}
	return c
}

// handle runs a batch and returns the sequence number to report (empty:
// the whole batch succeeded), or an error that fails the invocation.
func (c *core[M]) handle(ctx context.Context, recs []record[M]) (string, error) {
	start := time.Now()
	reports := make([]report, len(recs))
	b := &batch[M]{c: c}
	limit := c.cfg.Concurrency
	if limit <= 0 || limit > len(recs) {
		limit = max(len(recs), 1)
	}
	b.slots = make(chan struct{}, limit)
	b.run(ctx, recs, reports, limit)

	counts := make([]int, int(verdict.Count))
	capacity := make([]idempotency.Capacity, len(counts))
	skipped := 0
	judged := false
	var failedIdx []int
	for i, r := range reports {
		if r.skipped != "" {
			skipped++
		} else {
			counts[r.outcome]++
			capacity[r.outcome].Add(r.capacity)
		}
		c.log(ctx, &recs[i], r)
		if !r.succeeded() {
			failedIdx = append(failedIdx, i)
		}
		if r.outcome != outcome.NotStarted && !errors.Is(r.err, idempotency.ErrStore) {
			judged = true
		}
	}
	c.emitMetrics(counts, skipped, capacity, time.Since(start))
	for i, r := range reports {
		if errors.Is(r.err, outcome.ErrMisconfigured) {
			return "", fmt.Errorf("record %s of the batch: %w", recs[i].seq, r.err)
		}
	}
	if len(recs) > 0 && !judged {
		return "", fmt.Errorf("%w: %w", errNothingJudged, reports[0].err)
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

// batch is the state shared by the records of one batch.
type batch[M any] struct {
	c       *core[M]
	slots   chan struct{}
	flights flight.Set // by namespaced key
}

// next runs the next record of an ordering key, unless an earlier record of
// the key failed (failed, which it updates).
func (b *batch[M]) next(ctx context.Context, rec *record[M], failed *bool) report {
	if *failed {
		return report{outcome: outcome.NotStarted, err: fmt.Errorf("%w: an earlier record of its %s failed in this batch; it runs after that record, when Lambda replays the shard from it", errNotStarted, b.c.groupName)}
	}
	r := b.one(ctx, rec)
	*failed = !r.succeeded()
	return r
}

// one runs one record. A panic in the author's code (key function,
// decoding) fails this record only.
func (b *batch[M]) one(ctx context.Context, rec *record[M]) (r report) {
	defer func() {
		if p := recover(); p != nil {
			r = report{outcome: outcome.Failed, key: r.key, err: fmt.Errorf("panic: %v", p)}
		}
	}()
	c := b.c
	msg, payload, skip, err := rec.decode()
	if err != nil {
		if errors.Is(err, outcome.ErrMisconfigured) {
			return report{outcome: outcome.Failed, err: err}
		}
		return report{outcome: outcome.BadInput, err: err}
	}
	if skip != "" {
		return report{outcome: outcome.Processed, skipped: skip}
	}
	key, err := c.key(msg)
	if err != nil {
		return report{outcome: outcome.BadInput, err: verdict.KeyRefusal(err)}
	}
	if key == "" {
		return report{outcome: outcome.BadInput, err: errEmptyKey}
	}
	fact, err := c.guard.Fact(key, payload)
	if err != nil {
		pk, _ := c.guard.Key(key)
		return report{outcome: outcome.BadInput, key: pk, err: err}
	}
	fact.Sent = rec.origin
	noOrigin := rec.origin.IsZero()

	b.slots <- struct{}{}
	defer func() { <-b.slots }()
	old := c.guard.Expired(fact)
	if old != nil {
		old = c.expiredReason(old)
	}
	if d, ok := ctx.Deadline(); ok && old == nil && time.Until(d) < c.cfg.MinRemaining {
		return report{outcome: outcome.NotStarted, key: fact.Key, noOrigin: noOrigin, err: fmt.Errorf("%w: %v before the deadline, less than %v", errNotStarted, time.Until(d).Round(time.Millisecond), c.cfg.MinRemaining)}
	}

	prior, led := b.flights.Join(fact.Key, fact.Hash, old == nil)
	if prior != nil {
		if res, err := prior.Wait(); err != nil {
			return report{outcome: verdict.Of(res, err), key: fact.Key, noOrigin: noOrigin, err: fmt.Errorf("same fact as an earlier record of the batch: %w", err)}
		}
		return report{outcome: outcome.Duplicate, key: fact.Key, noOrigin: noOrigin}
	}
	if old != nil {
		return report{outcome: outcome.Expired, key: fact.Key, err: old}
	}
	if led != nil {
		defer led.Close()
	}
	var used idempotency.Capacity
	res, err := c.run(idempotency.WithCapacity(ctx, &used), fact, msg)
	if led != nil {
		led.Set(res, err)
	}
	if res.TookOver {
		c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "takeover", slog.String("consumer", c.cfg.Consumer), slog.String("sequence_number", rec.seq), slog.String("key", fact.Key), slog.Time("lapsed_lease", res.LapsedLease), slog.String("reason", "took over the reservation of a worker whose lease ended (it crashed or ran out of time): the effect ran again, and may have run before"))
	}
	if errors.Is(err, idempotency.ErrExpired) {
		err = c.expiredReason(err)
	}
	if err == nil && res.DroppedBytes > 0 {
		err = fmt.Errorf("processed, but the result of %d bytes exceeds the default MaxResultBytes (%d): stored without it, duplicates get an empty result", res.DroppedBytes, limits.DefaultMaxResultBytes)
	}
	return report{outcome: verdict.Of(res, err), key: fact.Key, err: err, capacity: used, noOrigin: noOrigin}
}

// errEmptyKey is the bad input of a key function that returned "".
var errEmptyKey = fmt.Errorf("%w: %w: the key function returned an empty key; keys come from the business message (an order id and its version), never from the stream's sequence numbers: check that the field it reads is in the record",
	outcome.ErrBadInput, idempotency.ErrInvalidKey)

// expiredReason adds the origin and the fix to an error wrapping
// idempotency.ErrExpired.
func (c *core[M]) expiredReason(err error) error {
	return fmt.Errorf("%w; its origin time is the %s; it is reported failed until the event source's MaximumRetryAttempts or MaximumRecordAge sends it to the on-failure destination. "+
		"Fix: a Window longer than the event source's MaximumRecordAge (the stream construct refuses one that is not), or settle the record by hand from the on-failure destination", err, c.originName)
}

// log writes the record's line, at the levels of the queue adapter: a
// success INFO (WARN with a warning), a record that may still succeed WARN,
// anything an operator must see ERROR.
func (c *core[M]) log(ctx context.Context, rec *record[M], r report) {
	level := slog.LevelInfo
	name := r.outcome.String()
	switch {
	case r.skipped != "":
		name = "skipped"
	case r.outcome == outcome.InProgress || r.outcome == outcome.NotStarted:
		level = slog.LevelWarn
	case r.outcome.Succeeded():
		if r.err != nil || r.noOrigin {
			level = slog.LevelWarn
		}
	default:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("consumer", c.cfg.Consumer),
		slog.String("sequence_number", rec.seq),
		slog.String("event_id", rec.id),
		slog.String("key", r.key),
		slog.String("outcome", name),
	}
	switch {
	case r.err != nil:
		attrs = append(attrs, slog.String("reason", r.err.Error()))
	case r.skipped != "":
		attrs = append(attrs, slog.String("reason", r.skipped))
	}
	if r.noOrigin {
		attrs = append(attrs, slog.String("warning", "the record carries no origin time ("+c.originName+"): run without the age check"))
	}
	c.cfg.Logger.LogAttrs(ctx, level, "record", attrs...)
}

// emitMetrics writes the batch's Embedded Metric Format line: the queue
// adapter's outcome counts and capacity, outcome.MetricSkipped, and the duration.
func (c *core[M]) emitMetrics(counts []int, skipped int, capacity []idempotency.Capacity, took time.Duration) {
	metrics := make([]emf.Metric, 0, len(counts)+9)
	for _, o := range outcome.Outcomes() {
		metrics = append(metrics, emf.Metric{Name: o.MetricName(), Unit: "Count", Value: counts[o]})
	}
	metrics = append(metrics, emf.Metric{Name: outcome.MetricSkipped, Unit: "Count", Value: skipped})
	var total idempotency.Capacity
	for _, x := range capacity {
		total.Add(x)
	}
	for _, m := range []struct {
		name  string
		units float64
	}{
		{"ReadUnits", total.Read}, {"WriteUnits", total.Write},
		{"ProcessedReadUnits", capacity[outcome.Processed].Read}, {"ProcessedWriteUnits", capacity[outcome.Processed].Write},
		{"DuplicateReadUnits", capacity[outcome.Duplicate].Read}, {"DuplicateWriteUnits", capacity[outcome.Duplicate].Write},
	} {
		metrics = append(metrics, emf.Metric{Name: m.name, Unit: "Count", Value: m.units})
	}
	metrics = append(metrics, emf.Metric{Name: outcome.MetricBatchDuration, Unit: "Milliseconds", Value: took.Milliseconds()})
	err := emf.Write(c.cfg.Metrics, emf.Line{
		Namespace: c.cfg.MetricsNamespace,
		Dimension: outcome.MetricDimension, Value: c.cfg.Consumer,
		LevelKey: slog.LevelKey, Level: c.cfg.MetricsLevel, TimeKey: outcome.LogTimeKey,
		Metrics: metrics,
	}, time.Now())
	if err != nil {
		c.cfg.Logger.Error("metrics", slog.String("reason", err.Error()))
	}
}

// run runs the batch's records: one after another in batch order with a
// limit of 1, else each group (shard partition key, item key) in order in a
// goroutine of its own, within the batch's slots.
func (b *batch[M]) run(ctx context.Context, recs []record[M], reports []report, limit int) {
	groups := groupsOf(recs)
	if limit == 1 {
		failed := make(map[string]bool, len(groups))
		for i := range recs {
			f := failed[recs[i].group]
			reports[i] = b.next(ctx, &recs[i], &f)
			failed[recs[i].group] = f
		}
	} else {
		var wg sync.WaitGroup
		for _, g := range groups {
			wg.Go(func() {
				failed := false
				for _, i := range g {
					reports[i] = b.next(ctx, &recs[i], &failed)
				}
			})
		}
		wg.Wait()
	}
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
		c.cfg.Logger.LogAttrs(ctx, slog.LevelError, "checkpoint",
			slog.String("consumer", c.cfg.Consumer),
			slog.String("sequence_number", reported),
			slog.String("reason", err.Error()+": the batch's first record is reported, so that Lambda replays the whole batch"))
		return reported
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "checkpoint",
		slog.String("consumer", c.cfg.Consumer),
		slog.String("sequence_number", reported),
		slog.Int("failed", len(failedIdx)),
		slog.String("reason", "the lowest sequence number of the batch's failed or not started records: Lambda resumes the shard from it, and the guard absorbs the later records that had completed"))
	return reported
}
