// Package sqsbatch is the queue consumer of messages that an SNS topic
// delivers to an SQS queue (notification envelopes) or that producers send
// to it (raw messages): a Lambda handler for SQS batches that runs each
// message's fact under an idempotency.Guard and reports partial batch
// failures. Its Handler and Config are those of every queue-fed source
// (packages eventbridge and s3event too).
//
// The key comes from the business message, through a function the
// handler's author supplies; never from the SQS message id, which SNS
// fan-out and producer retries renew for the same fact. Records run
// concurrently (on FIFO queues, each message group in order), or one after
// another in batch order with a Concurrency of 1; two records of one batch
// that carry the same fact run once. Every record ends processed, a
// duplicate, or reported failed with a log line that says why: failed
// records are redelivered by SQS and, after the queue's maxReceiveCount,
// moved to its dead-letter queue.
//
// Each record is judged by its age, from the earlier of the SNS publish
// time its envelope carries and its SQS SentTimestamp: a message as old as
// the guard's business window is never run, since its fact's record may
// have left the window (outcome Expired, see idempotency.ErrExpired).
package sqsbatch

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
	wire "github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Handler is a Lambda handler for SQS batches of messages of type T: its
// Handle method processes a batch and returns the records to retry, and
// Inspect returns the facts a message carries, before any store request
// (for tools). It is safe for concurrent use. The other queue-fed sources
// (eventbridge, s3event) return one too.
type Handler[T any] engine[T]

// engine is the SQS transport's handler, which Handler is.
type engine[T any] = queue.Handler[T]

// Handle processes a batch and returns the records to retry. It returns an
// error only when no record could be judged, or when one met an error
// wrapping outcome.ErrMisconfigured; SQS then retries them all.
func (h *Handler[T]) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return (*engine[T])(h).Handle(ctx, ev)
}

// Inspect returns the facts the handler would judge for rec, as its own
// records would carry them (the key, the payload's hash and, for a hashed
// key, the record key), before any store request and without running the
// effect. An error is the message's bad input (it wraps
// outcome.ErrBadInput). It is for tools that tell an operator what the
// handler will do with a message (idemctl).
func (h *Handler[T]) Inspect(rec *events.SQSMessage) ([]idempotency.Fact, error) {
	return (*engine[T])(h).Inspect(rec)
}

// Config configures a Handler of any queue-fed source (sqsbatch,
// eventbridge, s3event). The zero value of every field means the
// documented default; the entry points set them from the contract.
type Config struct {
	// Batch holds the settings every batch source shares (Concurrency,
	// MinRemaining, Consumer, the logger and the metrics). On a queue,
	// Concurrency's ordering groups are FIFO message groups (see FIFO),
	// and a record not started is reported failed and redelivered.
	handler.Batch
	// MaxMessageBytes is the largest business message accepted: the
	// message as published, without the SNS envelope that may carry it
	// (which can double it); an EventBridge event's detail; an S3 record's
	// fact (s3event.Object, as JSON). Larger messages are bad input.
	// Default: 262,144 bytes (256 KiB, what an SNS topic accepts by
	// default).
	MaxMessageBytes int
	// Delivery says how bodies are delivered. Default: contract.Auto.
	Delivery contract.Delivery
	// FIFO says the queue is a FIFO queue: the records of each message
	// group (the MessageGroupId attribute) run in order, and after a record
	// of a group fails the later records of that group in the batch are not
	// started (reported failed, so that SQS redelivers them in order). A
	// record without a MessageGroupId, which SQS never sends from a FIFO
	// queue, is taken to be of one group with every other such record of
	// the batch: they run one after another in batch order, and the batch
	// logs a warning.
	//
	// Default: false. A record is then taken as FIFO when its event source
	// ARN ends in ".fifo" and it carries a MessageGroupId; a standard
	// queue's MessageGroupId (SQS fair queues) does not order records.
	FIFO bool
	// MaxReceiveCount is the queue's maxReceiveCount: a record not started
	// on its last receive goes to the DLQ without running. Such records are
	// counted in outcome.MetricDeadLetteredUnstarted and logged at ERROR.
	// Default: 0, unknown: they are not told apart from other records not
	// started.
	MaxReceiveCount int
	// Visibility, when set, brings a record found in progress elsewhere
	// back when the blocking lease can have ended, and a failed record back
	// on the backoff, rather than after the queue's visibility timeout
	// (NewVisibility; every queue source's FromEnv sets it). It needs
	// MaxReceiveCount. Default: none.
	Visibility handler.VisibilityChanger
	// InProgressWait is the longest a record found in progress waits in
	// the invocation for the blocking lease to end, and then runs again,
	// when that leaves MinRemaining before the deadline; negative: never.
	// Default: 5s.
	InProgressWait time.Duration
	// BackoffBase starts the backoff of failed records: a record reported
	// failed (its effect failed, or the store did; not bad input, a
	// mismatch, an expired or an in-progress record, which keep their own
	// rules) has its message's visibility set from its
	// ApproximateReceiveCount, through Visibility, to a capped exponential
	// delay with equal jitter (BackoffBase doubled per receive, up to
	// BackoffCap; the delay is between half that and all of it), instead
	// of coming back after the queue's visibility timeout; an effect's
	// RetryAfter sets it instead, within the cap. Nothing changes on the
	// last receive (MaxReceiveCount) or when MaxReceiveCount is unknown.
	// Negative: no backoff. Default: 10m.
	BackoffBase time.Duration
	// BackoffCap bounds each delay: at least BackoffBase, at most 12h
	// (SQS's longest visibility timeout). Default: 1h.
	BackoffCap time.Duration
	// BackoffFIFOCap bounds each delay on a FIFO queue, where a failed
	// message holds its whole message group until it is visible again (the
	// later records of its group in the batch wait with it): at most 12h.
	// Default: 15m.
	BackoffFIFOCap time.Duration
	// Random draws the jitter, uniform in [0, 1); it is called from the
	// batch's goroutines at once. Default: math/rand/v2's Float64.
	Random func() float64
}

// New returns a Handler that runs fn once per fact under guard: each
// body is an SNS envelope or a raw message, as cfg.Delivery says.
func New[T any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.Func[T], cfg Config) *Handler[T] {
	return (*Handler[T])(queue.New(guard, key, fn, queue.Config(cfg), body[T]{cfg.Delivery}))
}

// NewTx returns a Handler whose effect is transactional: fn's writes commit
// with the COMPLETED record in one request. guard's store must be an
// idempotency.TxStore.
func NewTx[T, W any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.TxFunc[T, W], cfg Config) *Handler[T] {
	return (*Handler[T])(queue.NewTx(guard, key, fn, queue.Config(cfg), body[T]{cfg.Delivery}))
}

// body reads SNS envelopes and raw messages (queue.Body).
type body[T any] struct{ delivery contract.Delivery }

// MaxBody is the largest body that can carry a message of at most n bytes:
// an SNS envelope can double the message and adds its own fields.
func (body[T]) MaxBody(n int) int {
	if n > (math.MaxInt-wire.EnvelopeOverheadBytes)/2 {
		return math.MaxInt
	}
	return 2*n + wire.EnvelopeOverheadBytes
}

// ReadFact reads the message of an envelope or a raw body, and the envelope's
// publish time. A Config of another source's delivery fails every record
// (a misconfiguration, which fails the invocation): its bodies are read by
// its own package.
func (b body[T]) ReadFact(raw []byte) (queue.Item, error) {
	if b.delivery == contract.EventBridge || b.delivery == contract.S3 {
		return queue.Item{}, fmt.Errorf("%w: sqsbatch reads SNS envelopes and raw messages, and Config.Delivery is %q: build the handler with package eventbridge or s3event", outcome.ErrMisconfigured, b.delivery)
	}
	it := queue.Item{Source: "SNS Timestamp"}
	var err error
	it.Payload, it.Published, err = parse(raw, b.delivery)
	return it, err
}

// DecodeFact decodes the message as JSON.
func (body[T]) DecodeFact(it *queue.Item, out *T) error { return json.Unmarshal(it.Payload, out) }

// RetryAfter returns err carrying when to try again: a provider's
// Retry-After, a throttle's hint. An effect that returns it brings its
// record back after d (rounded up to a second) instead of the backoff's
// delay, within the ceiling of the message's receive n (BackoffBase
// doubled n − 1 times, at most Config.BackoffCap), so that no hint carries
// a message past the retry horizon, which the contract holds shorter than
// the business window. d ≤ 0 leaves the schedule's delay. Any error with
// a method RetryAfter() time.Duration in its chain does the same, on every
// queue-fed source.
func RetryAfter(err error, d time.Duration) error {
	return &retryAfter{err: err, d: d}
}

type retryAfter struct {
	err error
	d   time.Duration
}

func (e *retryAfter) Error() string {
	return e.err.Error() + " (retry after " + wire.RoundUp(e.d).String() + ")"
}
func (e *retryAfter) Unwrap() error             { return e.err }
func (e *retryAfter) RetryAfter() time.Duration { return e.d }
