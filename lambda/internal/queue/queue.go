// Package queue is the SQS transport every queue-fed source runs on: a
// Lambda handler for SQS batches that runs each fact of a message under an
// idempotency.Guard (through the batch engine, package batch) and reports
// partial batch failures. A source (package sqsbatch: SNS envelopes and raw
// messages; eventbridge; s3event) gives it a Body, which reads a message's
// facts; the rules of the queue are here: FIFO message groups, the same
// message twice in a batch, the age of a message from its body's time and
// its SentTimestamp, visibility for a fact in progress elsewhere, the
// backoff of failed messages, the last receive before the dead-letter
// queue, an operator's replay, and the reports (batchItemFailures).
//
// The key comes from the business message, through a function the
// handler's author supplies; never from the SQS message id, which SNS
// fan-out and producer retries renew for the same fact. Every record ends
// processed, a duplicate, or reported failed with a log line that says
// why: failed records are redelivered by SQS and, after the queue's
// maxReceiveCount, moved to its dead-letter queue. A message as old as the
// guard's business window is never run, since its fact's record may have
// left the window (outcome Expired, see idempotency.ErrExpired).
package queue

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/replay"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Config configures a Handler. The zero value of every field means the
// documented default. Its public twin, with the users' documentation, is
// sqsbatch.Config, which converts to it field for field: a field added here
// is added there (sqsbatch.New does not compile otherwise).
type Config struct {
	// Batch holds the settings every batch source shares (Concurrency,
	// MinRemaining, Consumer, the logger and the metrics). On a queue,
	// Concurrency's ordering groups are FIFO message groups (see FIFO),
	// and a record not started is reported failed and redelivered.
	handler.Batch
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
	// the queue meant is lost, and the batch logs a warning; after one fails,
	// the later ones are not started and come back with it, as a message
	// group's do (the same visibility: its backoff, or its lease's end).
	//
	// Default: false. A record is then taken as FIFO when its event source
	// ARN ends in ".fifo" and it carries a MessageGroupId; a standard queue's
	// MessageGroupId (SQS fair queues) does not order records.
	FIFO bool
	// MaxReceiveCount is the queue's maxReceiveCount: a record not started
	// on its last receive goes to the DLQ without running. Such records are
	// counted in outcome.MetricDeadLetteredUnstarted and logged at ERROR; a
	// record found in progress elsewhere on its last receive goes there too
	// and is logged at ERROR, saying so (not counted: its fact may still
	// complete under the worker that holds it). Default: 0, unknown: they are
	// not told apart from other records not started or in progress.
	MaxReceiveCount int
	// Visibility, when set, brings a record found in progress elsewhere
	// back when the blocking lease can have ended, rather than after the
	// queue's visibility timeout (see VisibilityChanger; every queue source's
	// FromEnv sets it). It needs MaxReceiveCount. Default: none.
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
	// instead, within the receive's ceiling (contract.Backoff.RetryAfter), so
	// that no retry time an effect asks for carries the record past the
	// retry horizon the contract holds shorter than the business window.
	// Nothing changes on the last receive
	// (MaxReceiveCount) or when MaxReceiveCount is unknown. Negative: no
	// backoff. Default: contract.DefaultBackoffBase.
	BackoffBase time.Duration
	// BackoffCap bounds each delay: at least BackoffBase, at most
	// contract.MaxBackoff. Each delay is also kept within what is left of
	// its receipt's 12 hours, which SQS counts from the receive: 12h less up
	// to twice the queue's visibility timeout and a minute (DESIGN.md,
	// "Failed records come back on a backoff"). Default:
	// contract.DefaultBackoffCap.
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

func (c Config) withDefaults() Config {
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = contract.DefaultMaxMessageBytes
	}
	if c.Delivery == "" {
		c.Delivery = contract.Auto
	}
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

// Handler is a Lambda handler for SQS batches whose facts are messages of
// type T. It is safe for concurrent use.
type Handler[T any] struct {
	e       batch.Engine[T]
	body    Body[T]
	one     Message[T] // body, when its messages carry one fact
	records Records[T] // body, when they carry several
	cfg     Config     // the transport's own settings; the shared ones, with their defaults, are e's
	// now is the transport's clock (time.Now; a test's, through
	// export_test.go): when a batch starts, and when a changed visibility
	// ends.
	now func() time.Time
}

// New returns a Handler that runs fn once per fact of the messages body
// reads, under guard.
func New[T any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.Func[T], cfg Config, body Message[T]) *Handler[T] {
	h := newHandler(guard, key, batch.Effect(guard, fn), cfg, body)
	h.one = body
	return h
}

// NewTx is New for a transactional effect: fn's writes commit with the
// COMPLETED record in one request.
func NewTx[T, W any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.TxFunc[T, W], cfg Config, body Message[T]) *Handler[T] {
	h := newHandler(guard, key, batch.TxEffect(guard, fn), cfg, body)
	h.one = body
	return h
}

// NewRecords returns a Handler that runs fn once per record of the
// messages body reads, under guard.
func NewRecords[T any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.Func[T], cfg Config, body Records[T]) *Handler[T] {
	h := newHandler(guard, key, batch.Effect(guard, fn), cfg, body)
	h.records = body
	return h
}

func newHandler[T any](guard *idempotency.Guard, key handler.KeyFunc[T], run batch.RunFunc[T], cfg Config, body Body[T]) *Handler[T] {
	h := &Handler[T]{body: body, cfg: cfg.withDefaults(), now: time.Now}
	h.e = batch.NewEngine(guard, key, run, expiredReason, cfg.Batch)
	return h
}

// report is what happened to one record.
type report struct {
	batch.Report
	replay *replay.Replay // an operator's replay (replay.Attribute)
	// A message of several facts' (Records): its records' reports
	// (Outcome is then the message's: outcome.Processed when every record
	// succeeded), or why it was acknowledged without a fact (skip).
	records []report
	skip    string
}

// Handle processes a batch and returns the records to retry. It returns an
// error only when no record could be judged, or when one met an error
// wrapping outcome.ErrMisconfigured; SQS then retries them all.
func (h *Handler[T]) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	start := time.Now()
	reports := make([]report, len(ev.Records))
	copyOf := copies(ev.Records)
	if copyOf != nil {
		h.logCopies(ctx, ev.Records, copyOf)
	}
	grouped, ungrouped := groups(ev.Records, h.cfg.FIFO, copyOf)
	if ungrouped > 0 {
		h.e.Logger.LogAttrs(ctx, slog.LevelWarn, "fifo",
			slog.String("consumer", h.e.Consumer),
			slog.Int("records", ungrouped),
			slog.String("reason", "records without a MessageGroupId on a FIFO consumer: run one after another in batch order, as one message group"))
	}
	r := &round[T]{h: h, invoked: h.now()}
	r.deadline, _ = ctx.Deadline()
	r.b.Engine, r.b.Waiter = &h.e, r
	batch.Run(grouped, h.e.Concurrency, func(i int, failed bool) bool {
		reports[i] = r.next(ctx, &ev.Records[i], failed)
		return reports[i].Outcome.Succeeded()
	})
	return h.respond(ctx, ev.Records, reports, copyOf, time.Since(start))
}

// respond logs and counts the batch's reports, writes its metrics, and
// returns the messages to retry, or the invocation's error.
func (h *Handler[T]) respond(ctx context.Context, records []events.SQSMessage, reports []report, copyOf []int, took time.Duration) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	var t batch.Tally
	unstarted := 0
	for i, r := range reports {
		if copyOf != nil && copyOf[i] >= 0 {
			continue // the same message as an earlier record: reported once, as that record
		}
		rec := &records[i]
		switch {
		case r.skip != "":
			h.logSkipped(ctx, rec, r.skip)
			t.Judged()
		case r.records != nil: // several facts: counted and logged per record, reported once
			for j, rr := range r.records {
				unstarted += h.count(ctx, &t, rec, i, rr, j)
			}
		default:
			unstarted += h.count(ctx, &t, rec, i, r, -1)
		}
		if !r.Outcome.Succeeded() {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	t.Emit(&h.e.Batch, took, outcome.MetricDeadLetteredUnstarted, unstarted)
	if err := t.Err(); err != nil {
		return events.SQSEventResponse{}, err
	}
	return resp, nil
}

// count adds one fact's report to the tally and writes its line; it
// returns 1 for a fact not started on its message's last receive (it goes
// to the dead-letter queue without running), else 0.
func (h *Handler[T]) count(ctx context.Context, t *batch.Tally, rec *events.SQSMessage, i int, r report, index int) int {
	t.Add(r.Report, i)
	last := (r.Outcome == outcome.NotStarted || r.Outcome == outcome.InProgress) && h.lastReceive(rec)
	h.log(ctx, rec, r, last, index)
	if last && r.Outcome == outcome.NotStarted {
		return 1
	}
	return 0
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
		gid, ordered := orderingGroup(&r, fifo)
		if !ordered {
			out = append(out, []int{i})
			continue
		}
		if _, hasGroup := r.Attributes["MessageGroupId"]; !hasGroup {
			ungrouped++
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

// orderingGroup is the ordering group of rec, as groups forms them: its
// MessageGroupId on a FIFO queue; on a FIFO consumer (fifo), the empty
// string for a record without one, a key no MessageGroupId can take (SQS
// allows 1 to 128 characters), so that such records form one group of their
// own; none (false) on a standard queue, where each record is its own.
func orderingGroup(rec *events.SQSMessage, fifo bool) (string, bool) {
	gid, hasGroup := rec.Attributes["MessageGroupId"]
	switch {
	case fifo && !hasGroup:
		return "", true
	case !hasGroup || !fifo && !strings.HasSuffix(rec.EventSourceARN, ".fifo"):
		return "", false
	}
	return gid, true
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
	h.e.Logger.LogAttrs(ctx, slog.LevelWarn, "duplicate_message_id",
		slog.String("consumer", h.e.Consumer),
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

// round is the state shared by the records of one batch.
type round[T any] struct {
	h  *Handler[T]
	b  batch.Batch[T]
	mu sync.Mutex

	// invoked is when the batch started, on h.now, and deadline the
	// invocation's (zero without one): they bound its receipts' 12 hours
	// (receiptEnd).
	invoked, deadline time.Time
	// groupBack is when each ordering group (orderingGroup) whose record
	// was found in progress (visibility.go), or failed and was delayed
	// (backoff.go), comes back.
	groupBack map[string]groupWait
}

// next runs the next record of a group, unless an earlier record of the
// group failed: on a FIFO queue the rest of the group is then reported
// failed without running, so that SQS redelivers it in order.
func (b *round[T]) next(ctx context.Context, rec *events.SQSMessage, failed bool) report {
	if failed {
		r := report{Report: batch.Behind("an earlier message of its FIFO group failed")}
		b.follow(ctx, rec, &r) // back with it, when it was in progress (visibility.go)
		return r
	}
	r := b.one(ctx, rec)
	if r.Outcome == outcome.Failed {
		b.backoff(ctx, rec, &r) // back on the schedule, not at the queue's timeout (backoff.go)
	}
	return r
}

// one runs one message: its fact, or an S3 notification's, one per
// record.
func (b *round[T]) one(ctx context.Context, rec *events.SQSMessage) report {
	if b.h.records != nil {
		if err := b.h.bounded(rec); err != nil {
			return report{Report: batch.Bad(err)}
		}
		return b.records(ctx, rec)
	}
	it, err := b.h.message(rec)
	if err != nil {
		return report{Report: batch.Bad(err)}
	}
	return b.fact(ctx, rec, &it)
}

// bounded refuses a body larger than the source's body can carry a
// message of at most MaxMessageBytes in, before it is read.
func (h *Handler[T]) bounded(rec *events.SQSMessage) error {
	if maxBody := h.body.MaxBody(h.cfg.MaxMessageBytes); len(rec.Body) > maxBody {
		return fmt.Errorf("%w: body of %d bytes, more than %d, the most that can carry a message of at most %d bytes", outcome.ErrBadInput, len(rec.Body), maxBody, h.cfg.MaxMessageBytes)
	}
	return nil
}

// message reads the one fact of a message whose body carries one.
func (h *Handler[T]) message(rec *events.SQSMessage) (Item, error) {
	if err := h.bounded(rec); err != nil {
		return Item{}, err
	}
	return h.one.ReadFact([]byte(rec.Body))
}

// fact judges one fact of a message and runs it. A panic in the author's
// code (key function, message decoding) fails this fact only; the guard
// already turns a panic in the effect into a released reservation.
func (b *round[T]) fact(ctx context.Context, rec *events.SQSMessage, it *Item) (r report) {
	defer func() {
		if p := recover(); p != nil {
			r = report{Report: batch.Report{Outcome: outcome.Failed, Key: r.Key, Err: fmt.Errorf("panic: %v", p)}}
		}
	}()
	j, bad := b.h.judge(rec, it)
	if bad != nil {
		return report{Report: *bad}
	}
	r.Report = b.b.Start(ctx, batch.Fact[T]{Fact: j.fact, Msg: j.msg, Origin: j.source, ID: slog.String("message_id", rec.MessageId), Record: rec})
	r.replay = j.replay
	return r
}

// judged is a fact read from its message, before any store request.
type judged[T any] struct {
	fact   idempotency.Fact
	msg    T
	source string         // what the origin time is (origin)
	replay *replay.Replay // an operator's replay (replay.Attribute)
}

// judge reads one fact of a message: its payload bounded and decoded, its
// key, the guard's Fact, its origin time. bad is the fact's bad input.
func (h *Handler[T]) judge(rec *events.SQSMessage, it *Item) (j judged[T], bad *batch.Report) {
	fail := func(r batch.Report) (judged[T], *batch.Report) { return judged[T]{}, &r }
	if it.Err != nil {
		return fail(batch.Bad(it.Err))
	}
	if len(it.Payload) > h.cfg.MaxMessageBytes {
		return fail(batch.Bad(fmt.Errorf("%w: message of %d bytes, more than %d", outcome.ErrBadInput, len(it.Payload), h.cfg.MaxMessageBytes)))
	}
	if err := h.body.DecodeFact(it, &j.msg); err != nil {
		return fail(batch.Bad(fmt.Errorf("%w: decode message: %v", outcome.ErrBadInput, err)))
	}
	var err error
	if j.fact, bad = h.e.Fact(j.msg, it.Payload); bad != nil {
		return judged[T]{}, bad
	}
	j.fact.Sent, j.source, _ = origin(rec, it.Published, it.Source)
	if j.replay, err = replay.Of(rec); err != nil {
		return fail(batch.Report{Outcome: outcome.BadInput, Key: j.fact.Key, Err: err})
	}
	if j.replay != nil { // the operator's time, not the body's, is its origin (replay.Attribute)
		j.fact.Sent, j.source, _ = origin(rec, j.replay.At, "time of the operator's replay ("+replay.Attribute+")")
		j.fact.Replay = j.replay.Encode()
	}
	return j, nil // the guard takes the key only while the message is younger than the window (Sent)
}

// log writes the record's line: key, message id, outcome and, for failures,
// why; lastReceive says the record was not started, or found in progress,
// on its message's last receive (lastWords).
//
// Levels: a success is INFO (WARN with a warning: a dropped result, no
// origin time, an operator's replay: replay.Attribute); a record that SQS
// redelivers and that may still succeed is WARN (in progress elsewhere, not
// started); everything an operator must see, even at LogLevel ERROR, is
// ERROR: a mismatch, bad input, a failure, an expired message, a record not
// started or found in progress on its last receive (it goes to the DLQ
// without running here), and a lost lease (the effect ran after its lease
// ended while another worker held the fact: unless the effect is idempotent
// downstream on Reservation.Key, it may have run twice).
//
// index is the record's index in an S3 notification's Records, or -1 for a
// message of one fact: each record of an S3 message has a line of its own.
func (h *Handler[T]) log(ctx context.Context, rec *events.SQSMessage, r report, lastReceive bool, index int) {
	level := batch.Level(r.Outcome, r.Err != nil || r.NoOrigin || r.replay != nil, lastReceive)
	attrs := []slog.Attr{
		slog.String("consumer", h.e.Consumer),
		slog.String("message_id", rec.MessageId),
		slog.String("key", r.Key),
		slog.String("outcome", r.Outcome.String()),
		slog.String("receive_count", rec.Attributes["ApproximateReceiveCount"]),
	}
	if index >= 0 {
		attrs = append(attrs, slog.Int("record_index", index))
	}
	if r.Err != nil {
		reason := r.Err.Error()
		if lastReceive {
			reason += h.lastWords(r.Outcome)
		}
		attrs = append(attrs, slog.String("reason", reason))
	}
	if r.NoOrigin {
		attrs = append(attrs, slog.String("warning", errNoOrigin))
	}
	if r.replay != nil {
		attrs = append(attrs, r.replay.LogAttr())
	}
	h.e.Logger.LogAttrs(ctx, level, "record", attrs...)
}

// lastWords is what the reason of a record not started (outcome.NotStarted)
// or found in progress elsewhere (outcome.InProgress) on its message's last
// receive adds: SQS moves the message to the dead-letter queue.
func (h *Handler[T]) lastWords(o outcome.Outcome) string {
	if o == outcome.InProgress {
		return fmt.Sprintf("; this was its last receive (maxReceiveCount %d): SQS moves it to the dead-letter queue while another worker holds its fact, which that worker may still complete or release: once the lease has ended, check the fact's record (idemctl show) and redrive the message if the fact did not complete", h.cfg.MaxReceiveCount)
	}
	return fmt.Sprintf("; this was its last receive (maxReceiveCount %d): SQS moves it to the dead-letter queue without its effect ever having run", h.cfg.MaxReceiveCount)
}
