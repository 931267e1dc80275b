// Package sqsbatch turns a business function into a Lambda handler for SQS
// batches that runs each record under an idempotency.Guard and reports
// partial batch failures.
//
// Bodies are what the consumer's source delivers (contract.Delivery, from the
// contract): SNS notification envelopes or raw messages (an SNS topic, or
// producers that send to the queue), EventBridge events (NewEvents: the
// detail is the fact) or S3 event notifications (NewObjects: one fact per
// record, the message deleted once all are done). The key comes from
// the business message, through a function the handler's author supplies;
// never from the SQS message id, which SNS fan-out and producer retries renew
// for the same fact. Records run concurrently (on FIFO queues, each message
// group in order), or one after another in batch order with a Concurrency of
// 1; two records of one batch that carry the same fact run once.
// Every record ends processed, a duplicate, or reported failed with a log line
// that says why: failed records are redelivered by SQS and, after the queue's
// maxReceiveCount, moved to its dead-letter queue.
//
// Each record is judged by its age, from the earlier of the time its body
// carries (SNS publish time, EventBridge event time, S3 eventTime) and its SQS
// SentTimestamp: a message as old as the guard's business window is never
// run, since its fact's record may have left the window (outcome Expired,
// see idempotency.ErrExpired).
package sqsbatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/flight"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/verdict"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Config configures a Handler. The zero value of every field means the
// documented default.
type Config struct {
	// Concurrency bounds how many records of a batch run at once.
	//
	// With 1, the records run one after another in batch order, in the
	// goroutine that called Handle: the effect of a record starts after
	// the previous record has ended, and no goroutine is started. The
	// rules of FIFO message groups and of repeated facts hold as with any
	// bound: after a record of a FIFO group fails, the later records of its
	// group are not started (the records of other groups still run), and a
	// record whose fact an earlier record of the batch carried takes that
	// record's outcome without running it again.
	//
	// Default: all records of the batch.
	Concurrency int
	// MinRemaining is the least time before the deadline for a record to be
	// started; later records are reported failed and redelivered. The guard
	// itself starts nothing with no more than its finishing budget left, so
	// a MinRemaining below that budget gains nothing.
	// Default: contract.DefaultMinRemaining of the guard's FinishBudget (3s).
	MinRemaining time.Duration
	// MaxMessageBytes is the largest business message accepted: the message
	// as published, without the SNS envelope that may carry it (which can
	// double it: see contract.MaxEnvelopedMessageBytes); an EventBridge event's
	// detail (at most contract.MaxEventDetailBytes); an S3 record's fact (Object, as
	// JSON). Larger messages are bad input; the contract's rules (contract.Settings.Problems) say what is accepted.
	// Default: contract.DefaultMaxMessageBytes (256 KiB, what an SNS topic accepts
	// by default).
	MaxMessageBytes int
	// Delivery says how bodies are delivered. Default: contract.Auto.
	Delivery contract.Delivery
	// FIFO says the queue is a FIFO queue: the records of each message
	// group (the MessageGroupId attribute) run in order, and after a record
	// of a group fails the later records of that group in the batch are not
	// started (reported failed, so that SQS redelivers them in order). A
	// record without a MessageGroupId, which SQS never sends from a FIFO
	// queue, is taken to be of one group with every other such record of
	// the batch: they run one after another in batch order, so that no order
	// the queue meant is lost, and the batch logs a warning.
	//
	// Default: false. A record is then taken as FIFO when its event source
	// ARN ends in ".fifo" and it carries a MessageGroupId; a standard queue's
	// MessageGroupId (SQS fair queues) does not order records.
	FIFO bool
	// Consumer names the consumer in logs and metrics (sqsbatch.FromEnv gives
	// it the contract's CONSUMER_NAME, the construct's path). Default:
	// "consumer".
	Consumer string
	// MetricsNamespace is the CloudWatch namespace of the metrics.
	// Default: outcome.DefaultNamespace.
	MetricsNamespace string
	// Logger receives one line per record. Default: outcome.NewLogger on standard
	// error at INFO.
	Logger *slog.Logger
	// Metrics receives one Embedded Metric Format line per batch.
	// Default: standard output. Use io.Discard to turn metrics off.
	Metrics io.Writer
	// MetricsLevel is the "level" of the metrics line. Lambda's log-level
	// filtering takes a JSON line without one for INFO and drops it at a
	// higher application log level; a metrics line at the function's own
	// level is kept at any level. Default: "INFO".
	MetricsLevel string
	// MaxReceiveCount is the queue's maxReceiveCount: a record not started
	// on its last receive goes to the DLQ without running. Such records are
	// counted in outcome.MetricDeadLetteredUnstarted and logged at ERROR. Default:
	// 0, unknown: they are not told apart from other records not started.
	MaxReceiveCount int
	// Visibility, when set, brings a record found in progress elsewhere
	// back when the blocking lease can have ended, rather than after the
	// queue's visibility timeout (see VisibilityChanger; sqsbatch.FromEnv sets
	// it). It needs MaxReceiveCount. Default: none.
	Visibility VisibilityChanger
	// InProgressWait is the longest a record found in progress waits in
	// the invocation for the blocking lease to end, and then runs again,
	// when that leaves MinRemaining before the deadline; negative: never.
	// Default: defaultInProgressWait.
	InProgressWait time.Duration
	// BackoffBase starts the backoff of failed records (contract.Backoff): a record
	// reported failed (its effect failed, or the store did; not bad input,
	// a mismatch, an expired or an in-progress record, which keep their own
	// rules) has its message's visibility set from its
	// ApproximateReceiveCount, through Visibility, instead of coming back
	// after the queue's visibility timeout; an effect's RetryAfter sets it
	// instead, within the cap. Nothing changes on the last receive
	// (MaxReceiveCount) or when MaxReceiveCount is unknown. Negative: no
	// backoff. Default: contract.DefaultBackoffBase.
	BackoffBase time.Duration
	// BackoffCap bounds each delay: at least BackoffBase, at most
	// contract.MaxBackoff. Default: contract.DefaultBackoffCap.
	BackoffCap time.Duration
	// BackoffFIFOCap bounds each delay on a FIFO queue, where a failed
	// message holds its whole message group until it is visible again (the
	// later records of its group in the batch wait with it): at most
	// contract.MaxBackoff. Default: contract.DefaultBackoffFIFOCap.
	BackoffFIFOCap time.Duration
	// Random draws the jitter, uniform in [0, 1); it is called from the
	// batch's goroutines at once. Default: math/rand/v2's
	// Float64.
	Random func() float64
}

func (c Config) withDefaults(guard *idempotency.Guard) Config {
	if c.MinRemaining <= 0 {
		c.MinRemaining = contract.DefaultMinRemaining(guard.FinishBudget())
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = contract.DefaultMaxMessageBytes
	}
	if c.Delivery == "" {
		c.Delivery = contract.Auto
	}
	if c.Consumer == "" {
		c.Consumer = "consumer"
	}
	emf.Defaults(&c.MetricsNamespace, &c.Logger, &c.Metrics, &c.MetricsLevel)
	if c.InProgressWait == 0 {
		c.InProgressWait = defaultInProgressWait
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = contract.DefaultBackoffBase
	}
	if c.BackoffCap <= 0 {
		c.BackoffCap = max(contract.DefaultBackoffCap, c.BackoffBase)
	}
	if c.BackoffFIFOCap <= 0 {
		c.BackoffFIFOCap = contract.DefaultBackoffFIFOCap
	}
	if c.Random == nil {
		c.Random = defaultRandom
	}
	return c
}

// KeyFunc derives the idempotency key from the business message: the order
// id, the transaction id, a client's Idempotency-Key. An empty key or an
// error is bad input.
//
// It is also the place to refuse a message that no retry can fix (a
// negative amount, a missing field): it runs before the idempotency store,
// so such a message costs no store request on any delivery, and is reported
// as bad input until the dead-letter queue takes it. The same refusal in the
// effect costs a reservation and its release on every delivery.
type KeyFunc[T any] func(msg T) (string, error)

// Func is the business effect for one message, run at most once per fact.
// It returns a small result that duplicates get back.
type Func[T any] func(ctx context.Context, msg T, r idempotency.Reservation) (result string, err error)

// TxFunc computes a transactional effect for one message: the writes that
// commit atomically with the COMPLETED record (see idempotency.RunTx). It
// must not have effects of its own.
//
// W is the type of the writes, the one the store commits (for DynamoDB,
// []types.TransactWriteItem): sqsbatch.FromEnvTx checks it at init.
type TxFunc[T, W any] func(ctx context.Context, msg T, r idempotency.Reservation) (writes W, result string, err error)

// Handler is a Lambda handler for SQS batches of messages of type T
// (decoded from JSON). It is safe for concurrent use.
type Handler[T any] struct {
	guard  *idempotency.Guard
	key    KeyFunc[T]
	run    func(ctx context.Context, f idempotency.Fact, msg T) (idempotency.Result, error)
	decode func(it *item, out *T) error // the business message from a fact's payload
	cfg    Config
}

// item is one fact of a message: the payload the adapter hashes and
// decodes, and the origin time its body carries. A message carries one,
// but for an S3 notification: one per record.
type item struct {
	payload   []byte
	published time.Time // the origin time in the body (SNS Timestamp, EventBridge time, S3 eventTime); zero when none
	source    string    // what published is, for the expired line
	event     eventMeta // an EventBridge event's other fields
	err       error     // an S3 record that cannot be read: bad input, that record alone
}

// decodeJSON decodes a fact's payload into T.
func decodeJSON[T any](it *item, out *T) error { return json.Unmarshal(it.payload, out) }

// New returns a Handler that runs fn once per fact under guard.
func New[T any](guard *idempotency.Guard, key KeyFunc[T], fn Func[T], cfg Config) *Handler[T] {
	h := &Handler[T]{guard: guard, key: key, decode: decodeJSON[T], cfg: cfg.withDefaults(guard)}
	h.run = func(ctx context.Context, f idempotency.Fact, msg T) (idempotency.Result, error) {
		return guard.Run(ctx, f, func(ctx context.Context, r idempotency.Reservation) (string, error) {
			return fn(ctx, msg, r)
		})
	}
	return h
}

// NewTx returns a Handler whose effect is transactional: fn's writes commit
// with the COMPLETED record in one request. guard's store must be an
// idempotency.TxStore.
func NewTx[T, W any](guard *idempotency.Guard, key KeyFunc[T], fn TxFunc[T, W], cfg Config) *Handler[T] {
	h := &Handler[T]{guard: guard, key: key, decode: decodeJSON[T], cfg: cfg.withDefaults(guard)}
	h.run = func(ctx context.Context, f idempotency.Fact, msg T) (idempotency.Result, error) {
		return guard.RunTx(ctx, f, func(ctx context.Context, r idempotency.Reservation) (any, string, error) {
			return fn(ctx, msg, r)
		})
	}
	return h
}

// errEmptyKey is the bad input of a key function that returned "".
var errEmptyKey = fmt.Errorf("%w: %w: the key function returned an empty key. "+
	"Keys come from the business message (an order id, a client's Idempotency-Key), never from the transport's ids: "+
	"check that the field it reads is in the message as its producer publishes it "+
	"(a key function that reads a message id field the business message does not carry returns an empty key)",
	outcome.ErrBadInput, idempotency.ErrInvalidKey)

// errNothingJudged is returned when no record of a non-empty batch could be
// judged (every one met an idempotency.ErrStore or the deadline): a
// function error, so that it shows in the function's error metrics.
var errNothingJudged = errors.New("no record of the batch could be judged")

// report is what happened to one record.
type report struct {
	outcome  outcome.Outcome
	key      string
	err      error
	capacity idempotency.Capacity // what its store requests consumed
	noOrigin bool                 // run without the age check: no origin time (errNoOrigin)
	replay   *Replay              // an operator's replay (ReplayAttribute)
	// An S3 notification's: its records' reports (outcome is then the
	// message's: outcome.Processed when every record succeeded), or that it is
	// S3's test event.
	records   []report
	testEvent bool
}

// Handle processes a batch and returns the records to retry. It returns an
// error only when no record could be judged, or when one met an error
// wrapping outcome.ErrMisconfigured; SQS then retries them all.
func (h *Handler[T]) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	start := time.Now()
	reports := make([]report, len(ev.Records))
	b := &batch[T]{h: h}
	limit := h.cfg.Concurrency
	if limit <= 0 || limit > len(ev.Records) {
		limit = max(len(ev.Records), 1)
	}
	b.slots = make(chan struct{}, limit)

	copyOf := copies(ev.Records)
	if copyOf != nil {
		h.logCopies(ctx, ev.Records, copyOf)
	}
	grouped, ungrouped := groups(ev.Records, h.cfg.FIFO, copyOf)
	if ungrouped > 0 {
		h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "fifo",
			slog.String("consumer", h.cfg.Consumer),
			slog.Int("records", ungrouped),
			slog.String("reason", "records without a MessageGroupId on a FIFO consumer: run one after another in batch order, as one message group"))
	}
	if limit == 1 {
		// One after another in batch order, here: what a Concurrency of 1
		// promises, and all a batch of one record needs.
		groupOf := make([]int, len(ev.Records))
		for g, group := range grouped {
			for _, i := range group {
				groupOf[i] = g
			}
		}
		failed := make([]bool, len(grouped))
		for i := range ev.Records {
			reports[i] = b.next(ctx, &ev.Records[i], &failed[groupOf[i]])
		}
	} else {
		var wg sync.WaitGroup
		for _, group := range grouped {
			wg.Go(func() {
				failed := false
				for _, i := range group {
					reports[i] = b.next(ctx, &ev.Records[i], &failed)
				}
			})
		}
		wg.Wait()
	}

	var resp events.SQSEventResponse
	var t tally
	for i, r := range reports {
		if copyOf != nil && copyOf[i] >= 0 {
			continue // the same message as an earlier record: reported once, as that record
		}
		rec := &ev.Records[i]
		switch {
		case r.testEvent:
			h.logTestEvent(ctx, rec)
			t.judged = true
		case r.records != nil: // an S3 notification: counted and logged per record, reported once
			for j, rr := range r.records {
				h.log(ctx, rec, rr, t.add(h, rec, rr), j)
			}
		default:
			h.log(ctx, rec, r, t.add(h, rec, r), -1)
		}
		if !r.outcome.Succeeded() {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	h.emitMetrics(t.counts, t.unstarted, t.capacity, time.Since(start))
	if err := misconfigured(reports); err != nil {
		return events.SQSEventResponse{}, err
	}
	if len(ev.Records) > 0 && !t.judged {
		return events.SQSEventResponse{}, fmt.Errorf("%w: %w", errNothingJudged, firstErr(reports))
	}
	return resp, nil
}

// tally is what a batch's reports add up to: the metrics' counts, and
// whether any fact was judged.
type tally struct {
	counts    [verdict.Count]int
	capacity  [verdict.Count]idempotency.Capacity
	unstarted int
	judged    bool
}

// add counts one fact's report, and returns whether it is a record not
// started on its message's last receive.
func (t *tally) add(h interface{ lastReceive(*events.SQSMessage) bool }, rec *events.SQSMessage, r report) (last bool) {
	t.counts[r.outcome]++
	t.capacity[r.outcome].Add(r.capacity)
	last = r.outcome == outcome.NotStarted && h.lastReceive(rec)
	if last {
		t.unstarted++
	}
	if r.outcome != outcome.NotStarted && !errors.Is(r.err, idempotency.ErrStore) {
		t.judged = true
	}
	return last
}

// firstErr is the error of the batch's first fact.
func firstErr(reports []report) error {
	r := reports[0]
	if len(r.records) > 0 {
		return r.records[0].err
	}
	return r.err
}

// groups returns the indexes of the records in the order they must run: one
// group per record on a standard queue, one per message group, in order, on a
// FIFO queue. On a FIFO consumer (fifo) the records without a MessageGroupId
// form one group of their own; ungrouped counts them. The copies of an
// earlier record (copyOf, see copies) are left out: they do not run.
func groups(records []events.SQSMessage, fifo bool, copyOf []int) (out [][]int, ungrouped int) {
	byGroup := make(map[string]int)
	for i, r := range records {
		if copyOf != nil && copyOf[i] >= 0 {
			continue
		}
		gid, hasGroup := r.Attributes["MessageGroupId"]
		switch {
		case fifo && !hasGroup:
			// A key no MessageGroupId can take: SQS allows 1 to 128
			// characters, so the empty string is never one.
			gid = ""
			ungrouped++
		case !hasGroup || !fifo && !strings.HasSuffix(r.EventSourceARN, ".fifo"):
			out = append(out, []int{i})
			continue
		}
		g, ok := byGroup[gid]
		if !ok {
			g = len(out)
			byGroup[gid] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], i)
	}
	return out, ungrouped
}

// copies returns, for each record, the index of the earlier record of the
// batch with the same MessageId, or -1; nil when every id is distinct, as
// SQS nearly always sends them. The same message twice in one batch (an
// at-least-once receive) is one message to SQS: it is run once and reported
// once, whatever its outcome, since batchItemFailures names messages by id.
func copies(records []events.SQSMessage) []int {
	var copyOf []int
	mark := func(i, j int) {
		if copyOf == nil {
			copyOf = make([]int, len(records))
			for k := range copyOf {
				copyOf[k] = -1
			}
		}
		copyOf[i] = j
	}
	if len(records) <= 16 {
		// A batch of SQS's usual size: compare, allocate nothing.
		for i := 1; i < len(records); i++ {
			for j := range i {
				if records[i].MessageId == records[j].MessageId { // j, the first match, is no copy
					mark(i, j)
					break
				}
			}
		}
		return copyOf
	}
	first := make(map[string]int, len(records))
	for i := range records {
		if j, ok := first[records[i].MessageId]; ok {
			mark(i, j)
			continue
		}
		first[records[i].MessageId] = i
	}
	return copyOf
}

// logCopies writes one warning for the messages of the batch delivered
// more than once in it.
func (h *Handler[T]) logCopies(ctx context.Context, records []events.SQSMessage, copyOf []int) {
	var ids []string
	for i, j := range copyOf {
		if j >= 0 {
			ids = append(ids, records[i].MessageId)
		}
	}
	h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "duplicate_message_id",
		slog.String("consumer", h.cfg.Consumer),
		slog.Any("message_ids", ids),
		slog.String("reason", "the same SQS message (one message id) more than once in the batch: run, reported and counted once, as its first record"))
}

// lastReceive reports whether the record's message is on its last receive:
// not deleted now, SQS moves it to the dead-letter queue.
func (h *Handler[T]) lastReceive(rec *events.SQSMessage) bool {
	if h.cfg.MaxReceiveCount <= 0 {
		return false
	}
	n, err := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	return err == nil && n >= h.cfg.MaxReceiveCount
}

// batch is the state shared by the records of one batch.
type batch[T any] struct {
	h       *Handler[T]
	slots   chan struct{}
	mu      sync.Mutex
	flights flight.Set // by namespaced key
	// groupBack is when each FIFO group whose record was found in progress
	// (visibility.go), or failed and was delayed (backoff.go), comes back.
	groupBack map[string]groupWait
}

// next runs the next record of a group, unless an earlier record of the
// group failed (failed, which it updates): on a FIFO queue the rest of the
// group is then reported failed without running, so that SQS redelivers it
// in order.
func (b *batch[T]) next(ctx context.Context, rec *events.SQSMessage, failed *bool) report {
	if *failed {
		r := report{outcome: outcome.NotStarted, err: fmt.Errorf("%w: an earlier message of its FIFO group failed", verdict.ErrNotStarted)}
		b.follow(ctx, rec, &r) // back with it, when it was in progress (visibility.go)
		return r
	}
	r := b.one(ctx, rec)
	*failed = !r.outcome.Succeeded()
	if r.outcome == outcome.Failed {
		b.backoff(ctx, rec, &r) // back on the schedule, not at the queue's timeout (backoff.go)
	}
	return r
}

// one runs one message: its fact, or an S3 notification's, one per
// record.
func (b *batch[T]) one(ctx context.Context, rec *events.SQSMessage) report {
	if b.h.cfg.Delivery == contract.S3 {
		if err := b.h.bounded(rec); err != nil {
			return report{outcome: outcome.BadInput, err: err}
		}
		return b.objects(ctx, rec)
	}
	it, err := b.h.message(rec)
	if err != nil {
		return report{outcome: outcome.BadInput, err: err}
	}
	return b.fact(ctx, rec, &it)
}

// bounded refuses a body larger than the delivery can carry a message of at
// most MaxMessageBytes in, before it is read.
func (h *Handler[T]) bounded(rec *events.SQSMessage) error {
	if maxBody := h.cfg.bodyBound(); len(rec.Body) > maxBody {
		return fmt.Errorf("%w: body of %d bytes, more than %d, the most that can carry a message of at most %d bytes", outcome.ErrBadInput, len(rec.Body), maxBody, h.cfg.MaxMessageBytes)
	}
	return nil
}

// message reads the one fact of a message that is not an S3 notification:
// an SNS envelope's or a raw body's (parse), or an EventBridge event's
// detail.
func (h *Handler[T]) message(rec *events.SQSMessage) (item, error) {
	if err := h.bounded(rec); err != nil {
		return item{}, err
	}
	if h.cfg.Delivery == contract.EventBridge {
		return eventItem([]byte(rec.Body))
	}
	it := item{source: "SNS Timestamp"}
	var err error
	it.payload, it.published, err = parse([]byte(rec.Body), h.cfg.Delivery)
	return it, err
}

// fact judges one fact of a message and runs it. A panic in the author's
// code (key function, message decoding) fails this fact only; the guard
// already turns a panic in the effect into a released reservation.
func (b *batch[T]) fact(ctx context.Context, rec *events.SQSMessage, it *item) (r report) {
	defer func() {
		if p := recover(); p != nil {
			r = report{outcome: outcome.Failed, key: r.key, err: fmt.Errorf("panic: %v", p)}
		}
	}()
	j, bad := b.h.judge(rec, it)
	if bad != nil {
		return *bad
	}
	r = b.start(ctx, rec, j.fact, j.msg, j.source, !j.hasOrigin)
	r.replay = j.replay
	return r
}

// judged is a fact read from its message, before any store request.
type judged[T any] struct {
	fact      idempotency.Fact
	msg       T
	source    string // what the origin time is (origin)
	hasOrigin bool
	replay    *Replay // an operator's replay (ReplayAttribute)
}

// judge reads one fact of a message: its payload bounded and decoded, its
// key, the guard's Fact, its origin time. bad is the fact's bad input.
func (h *Handler[T]) judge(rec *events.SQSMessage, it *item) (j judged[T], bad *report) {
	fail := func(r report) (judged[T], *report) { return judged[T]{}, &r }
	if it.err != nil {
		return fail(report{outcome: outcome.BadInput, err: it.err})
	}
	if len(it.payload) > h.cfg.MaxMessageBytes {
		return fail(report{outcome: outcome.BadInput, err: fmt.Errorf("%w: message of %d bytes, more than %d", outcome.ErrBadInput, len(it.payload), h.cfg.MaxMessageBytes)})
	}
	if err := h.decode(it, &j.msg); err != nil {
		return fail(report{outcome: outcome.BadInput, err: fmt.Errorf("%w: decode message: %v", outcome.ErrBadInput, err)})
	}
	key, err := h.key(j.msg)
	if err != nil {
		return fail(report{outcome: outcome.BadInput, err: verdict.KeyRefusal(err)})
	}
	if key == "" {
		return fail(report{outcome: outcome.BadInput, err: errEmptyKey})
	}
	if j.fact, err = h.guard.Fact(key, it.payload); err != nil {
		pk, _ := h.guard.Key(key) // the key as stored (hashed with a key secret), never as given
		return fail(report{outcome: outcome.BadInput, key: pk, err: err})
	}
	j.fact.Sent, j.source, j.hasOrigin = origin(rec, it.published, it.source)
	if j.replay, err = replayOf(rec); err != nil {
		return fail(report{outcome: outcome.BadInput, key: j.fact.Key, err: err})
	}
	if j.replay != nil { // the operator's time, not the body's, is its origin (ReplayAttribute)
		j.fact.Sent, j.source, j.hasOrigin = origin(rec, j.replay.At, "time of the operator's replay ("+ReplayAttribute+")")
		j.fact.Replay = j.replay.Encode()
	}
	return j, nil // the guard takes the key only while the message is younger than the window (Sent)
}

// start runs a judged fact once a slot is free and the record may start:
// not expired, not too close to the deadline, and not carried by an
// earlier record of the batch, whose outcome it then takes.
func (b *batch[T]) start(ctx context.Context, rec *events.SQSMessage, fact idempotency.Fact, msg T, source string, noOrigin bool) report {
	h := b.h
	b.slots <- struct{}{}
	defer func() { <-b.slots }()
	// The age is taken once the record may start (the guard takes it again
	// at each write): an expired record costs no store request.
	old := h.guard.Expired(fact)
	if old != nil {
		old = expiredReason(old, source)
	}
	if d, ok := ctx.Deadline(); ok && old == nil && time.Until(d) < h.cfg.MinRemaining {
		return report{outcome: outcome.NotStarted, key: fact.Key, noOrigin: noOrigin, err: fmt.Errorf("%w: %v before the deadline, less than %v", verdict.ErrNotStarted, time.Until(d).Round(time.Millisecond), h.cfg.MinRemaining)}
	}

	prior, led := b.flights.Join(fact.Key, fact.Hash, old == nil)
	if prior != nil {
		// An earlier record of the batch carries the fact: its outcome is
		// this one's, whatever this one's age (a fact it just completed is
		// a duplicate, safely).
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
	res, err := h.run(idempotency.WithCapacity(ctx, &used), fact, msg)
	if errors.Is(err, idempotency.ErrInProgress) { // back when the lease can end (visibility.go)
		res, err = b.inProgress(ctx, rec, fact, msg, &used, err)
	}
	if led != nil {
		led.Set(res, err)
	}
	if res.TookOver { // a fact of its own: the effect may have run before, under the same key
		h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "takeover", slog.String("consumer", h.cfg.Consumer), slog.String("message_id", rec.MessageId), slog.String("key", fact.Key), slog.Time("lapsed_lease", res.LapsedLease), slog.String("reason", "took over the reservation of a worker whose lease ended (it crashed or ran out of time): the effect ran again, and may have run before"))
	}
	if errors.Is(err, idempotency.ErrExpired) {
		err = expiredReason(err, source) // it aged in the store's calls, or in a transactional effect
	}
	if err == nil && res.DroppedBytes > 0 {
		err = fmt.Errorf("processed, but the result of %d bytes exceeds the default MaxResultBytes (%d): stored without it, duplicates get an empty result", res.DroppedBytes, limits.DefaultMaxResultBytes)
	}
	return report{outcome: verdict.Of(res, err), key: fact.Key, err: err, capacity: used, noOrigin: noOrigin}
}

// bodyBound is the largest body that can carry a message of at most
// MaxMessageBytes in c's delivery: an EventBridge event or an S3
// notification is bounded by the queue alone (the event's resources, the
// notification's records, are not the message's); an SNS envelope (or a raw
// body, which contract.Auto may find to be one) by envelopeBound.
func (c Config) bodyBound() int {
	if c.Delivery == contract.EventBridge || c.Delivery == contract.S3 {
		return contract.MaxQueueBodyBytes
	}
	return envelopeBound(c.MaxMessageBytes)
}

// envelopeBound is the largest body that can carry a message of at most n
// bytes: an SNS envelope can double the message and adds its own fields.
func envelopeBound(n int) int {
	if n > (math.MaxInt-contract.EnvelopeOverheadBytes)/2 {
		return math.MaxInt
	}
	return 2*n + contract.EnvelopeOverheadBytes
}

// log writes the record's line: key, message id, outcome and, for failures,
// why.
//
// Levels: a success is INFO (WARN with a warning: a dropped result, no origin
// time, an operator's replay: ReplayAttribute); a record that SQS redelivers and that may still succeed is WARN
// (in progress elsewhere, not started); everything an operator must see,
// even at LogLevel ERROR, is ERROR: a mismatch, bad input, a failure, an
// expired message, a record not started on its last receive (it goes to the
// DLQ without running), and a lost lease (the effect ran after its lease
// ended while another worker held the fact: unless the effect is idempotent
// downstream on Reservation.Key, it may have run twice).
//
// index is the record's index in an S3 notification's Records, or -1 for a
// message of one fact: each record of an S3 message has a line of its own.
func (h *Handler[T]) log(ctx context.Context, rec *events.SQSMessage, r report, lastReceive bool, index int) {
	level := slog.LevelInfo
	switch r.outcome {
	case outcome.InProgress, outcome.NotStarted:
		level = slog.LevelWarn
		if lastReceive {
			level = slog.LevelError
		}
	case outcome.Mismatch, outcome.BadInput, outcome.Failed, outcome.LeaseLost, outcome.Expired:
		level = slog.LevelError
	default:
		if r.err != nil || r.noOrigin || r.replay != nil { // a success with a warning, or an operator's replay
			level = slog.LevelWarn
		}
	}
	attrs := []slog.Attr{
		slog.String("consumer", h.cfg.Consumer),
		slog.String("message_id", rec.MessageId),
		slog.String("key", r.key),
		slog.String("outcome", r.outcome.String()),
		slog.String("receive_count", rec.Attributes["ApproximateReceiveCount"]),
	}
	if index >= 0 {
		attrs = append(attrs, slog.Int("record_index", index))
	}
	if r.err != nil {
		reason := r.err.Error()
		if lastReceive {
			reason += fmt.Sprintf("; this was its last receive (maxReceiveCount %d): SQS moves it to the dead-letter queue without its effect ever having run", h.cfg.MaxReceiveCount)
		}
		attrs = append(attrs, slog.String("reason", reason))
	}
	if r.noOrigin {
		attrs = append(attrs, slog.String("warning", errNoOrigin))
	}
	if r.replay != nil {
		attrs = append(attrs, r.replay.logAttr())
	}
	h.cfg.Logger.LogAttrs(ctx, level, "record", attrs...)
}

// emitMetrics writes one CloudWatch Embedded Metric Format line with the
// batch's outcome counts and the DynamoDB capacity its records consumed:
// ReadUnits and WriteUnits for all of them (the table's bill), and the
// processed and duplicate records' shares, so that a dashboard divides them
// by outcome.Processed and outcome.Duplicate for the units per record of each.
//
// The line carries "level" (Config.MetricsLevel) and "timestamp" (RFC 3339):
// Lambda's log-level filtering reads a JSON line's level only when it also
// has a valid RFC 3339 timestamp, and takes any other line for INFO, which
// it drops at a higher application log level.
func (h *Handler[T]) emitMetrics(counts [verdict.Count]int, unstarted int, capacity [verdict.Count]idempotency.Capacity, took time.Duration) {
	metrics := make([]emf.Metric, 0, verdict.Count+8)
	for _, o := range outcome.Outcomes() {
		metrics = append(metrics, emf.Metric{Name: o.MetricName(), Unit: "Count", Value: counts[o]})
	}
	metrics = append(metrics, emf.Metric{Name: outcome.MetricDeadLetteredUnstarted, Unit: "Count", Value: unstarted})
	var total idempotency.Capacity
	for _, c := range capacity {
		total.Add(c)
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
	err := emf.Write(h.cfg.Metrics, emf.Line{
		Namespace: h.cfg.MetricsNamespace,
		Dimension: outcome.MetricDimension, Value: h.cfg.Consumer,
		LevelKey: slog.LevelKey, Level: h.cfg.MetricsLevel, TimeKey: outcome.LogTimeKey,
		Metrics: metrics,
	}, time.Now())
	if err != nil {
		h.cfg.Logger.Error("metrics", slog.String("reason", err.Error()))
	}
}
