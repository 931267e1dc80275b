// Package sqsbatch is the queue consumer of messages that an SNS topic
// delivers to an SQS queue (notification envelopes) or that producers send
// to it (raw messages): a Lambda handler for SQS batches that runs each
// message's fact under an idempotency.Guard and reports partial batch
// failures. Its Handler and Config are the SQS transport's, which the other
// queue-fed sources share (packages eventbridge and s3event).
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
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Handler is a Lambda handler for SQS batches of messages of type T: its
// Handle method processes a batch and returns the records to retry, and
// Inspect returns the facts a message carries, before any store request
// (for tools). It is safe for concurrent use.
type Handler[T any] = queue.Handler[T]

// Config configures a Handler. The zero value of every field means the
// documented default.
type Config = queue.Config

// VisibilityChanger changes the visibility timeout of a received message
// (Config.Visibility): what brings a record found in progress elsewhere,
// or failed on the backoff, back sooner than the queue's visibility
// timeout.
type VisibilityChanger = queue.VisibilityChanger

// New returns a Handler that runs fn once per fact under guard: each
// body is an SNS envelope or a raw message, as cfg.Delivery says.
func New[T any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.Func[T], cfg Config) *Handler[T] {
	return queue.New(guard, key, fn, cfg, body[T]{cfg.Delivery})
}

// NewTx returns a Handler whose effect is transactional: fn's writes commit
// with the COMPLETED record in one request. guard's store must be an
// idempotency.TxStore.
func NewTx[T, W any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.TxFunc[T, W], cfg Config) *Handler[T] {
	return queue.NewTx(guard, key, fn, cfg, body[T]{cfg.Delivery})
}

// body reads SNS envelopes and raw messages (queue.Body).
type body[T any] struct{ delivery contract.Delivery }

// MaxBody is the largest body that can carry a message of at most n bytes:
// an SNS envelope can double the message and adds its own fields.
func (body[T]) MaxBody(n int) int {
	if n > (math.MaxInt-contract.EnvelopeOverheadBytes)/2 {
		return math.MaxInt
	}
	return 2*n + contract.EnvelopeOverheadBytes
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
	return e.err.Error() + " (retry after " + contract.RoundUp(e.d).String() + ")"
}
func (e *retryAfter) Unwrap() error             { return e.err }
func (e *retryAfter) RetryAfter() time.Duration { return e.d }
