// Package batch is the engine every batch-shaped source of the library runs
// on (an SQS queue's raw messages, SNS envelopes, EventBridge events and S3
// notifications; a Kinesis or DynamoDB stream): a source reads each of its
// records into facts, and the engine runs them under the guard with the
// rules every batch keeps.
//
//   - Order: the records of one group (a FIFO message group, a partition
//     key, an item key) run one after another; after one fails, the later
//     ones are not started. Groups run on at most Concurrency workers, and
//     with a Concurrency of 1 every record runs in batch order on the
//     caller's goroutine (Run).
//   - Same-batch duplicates: a fact an earlier record of the batch carries
//     runs once; the later record takes its outcome (Batch.Start).
//   - Age and time: an expired fact is never run, and none is started too
//     close to the deadline.
//   - Reports: one outcome per fact (the outcome vocabulary), its log
//     line's level (Level), the batch's metrics line and the invocation's
//     error (Tally).
//
// A source keeps what is its own: how it decodes a record, how it names
// one in logs, how it reports failures to its event source (SQS's
// batchItemFailures, a stream's checkpoint) and what it does with a fact
// found in progress (Batch.Waiter). The guard knows nothing of sources,
// and a source knows nothing of the store.
package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/flight"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/verdict"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// defaults fills the zero fields of o: MinRemaining from minRemaining,
// Consumer, and the logger and metrics from emf.Defaults.
func defaults(o *handler.Batch, minRemaining time.Duration) {
	if o.MinRemaining <= 0 {
		o.MinRemaining = minRemaining
	}
	if o.Consumer == "" {
		o.Consumer = "consumer"
	}
	emf.Defaults(&o.MetricsNamespace, &o.Logger, &o.Metrics, &o.MetricsLevel)
}

// Of is the contract's settings every batch source shares, without what
// is the handler's to choose (Logger, Metrics, MetricsLevel): the one
// place where they become handler.Batch.
func Of(s contract.Settings) handler.Batch {
	return handler.Batch{Concurrency: s.BatchConcurrency, MinRemaining: s.MinRemaining, Consumer: s.Consumer, MetricsNamespace: s.MetricsNamespace}
}

// RunFunc runs a fact's effect under the guard: Effect or TxEffect.
type RunFunc[M any] func(ctx context.Context, f idempotency.Fact, msg M) (idempotency.Result, error)

// Effect runs fn under guard.Run.
func Effect[M any](guard *idempotency.Guard, fn func(context.Context, M, idempotency.Reservation) (string, error)) RunFunc[M] {
	return func(ctx context.Context, f idempotency.Fact, msg M) (idempotency.Result, error) {
		return guard.Run(ctx, f, func(ctx context.Context, r idempotency.Reservation) (string, error) {
			return fn(ctx, msg, r)
		})
	}
}

// TxEffect runs fn under guard.RunTx: its writes commit with the COMPLETED
// record.
func TxEffect[M, W any](guard *idempotency.Guard, fn func(context.Context, M, idempotency.Reservation) (W, string, error)) RunFunc[M] {
	return func(ctx context.Context, f idempotency.Fact, msg M) (idempotency.Result, error) {
		return guard.RunTx(ctx, f, func(ctx context.Context, r idempotency.Reservation) (any, string, error) {
			return fn(ctx, msg, r)
		})
	}
}

// Engine runs the facts of a source whose messages are of type M. It is
// safe for concurrent use.
type Engine[M any] struct {
	Guard *idempotency.Guard
	Key   func(M) (string, error) // the author's key function
	Run   RunFunc[M]
	// Explain adds to an error wrapping idempotency.ErrExpired what the
	// fact's origin time is and the source's fix.
	Explain func(err error, origin string) error
	handler.Batch
}

// NewEngine returns the engine of a source whose key function is key,
// whose effect run runs under guard, and whose expired facts explain
// explains; o's zero fields take their defaults (MinRemaining: the guard's
// finishing budget and contract.DefaultEffectTime).
func NewEngine[M any](guard *idempotency.Guard, key handler.KeyFunc[M], run RunFunc[M], explain func(err error, origin string) error, o handler.Batch) Engine[M] {
	defaults(&o, contract.DefaultMinRemaining(guard.FinishBudget()))
	return Engine[M]{Guard: guard, Key: key, Run: run, Explain: explain, Batch: o}
}

// Report is what happened to one fact.
type Report struct {
	Outcome  outcome.Outcome
	Key      string // the key as stored (hashed with a key secret), never as given
	Err      error
	Capacity idempotency.Capacity // what its store requests consumed
	NoOrigin bool                 // run without the age check: no origin time
}

// Bad is the report of a record refused before any store request: bad
// input, or, for an error wrapping outcome.ErrMisconfigured (the source
// cannot read any record: a stream without the images, a queue's body of
// another source), a failure that fails the invocation (Tally.Err).
func Bad(err error) Report {
	if errors.Is(err, outcome.ErrMisconfigured) {
		return Report{Outcome: outcome.Failed, Err: err}
	}
	return Report{Outcome: outcome.BadInput, Err: err}
}

// Behind is the report of a record not started because an earlier record
// of its group failed (Run's failed): why says which, and when it comes
// back.
func Behind(why string) Report {
	return Report{Outcome: outcome.NotStarted, Err: fmt.Errorf("%w: %s", verdict.ErrNotStarted, why)}
}

// errEmptyKey is the bad input of a key function that returned "".
var errEmptyKey = fmt.Errorf("%w: %w: the key function returned an empty key. "+
	"Keys come from the business message (an order id and its version, a client's Idempotency-Key), never from the transport's ids (message ids, sequence numbers): "+
	"check that the field it reads is in the message as its producer publishes it "+
	"(a key function that reads a message id field the business message does not carry returns an empty key)",
	outcome.ErrBadInput, idempotency.ErrInvalidKey)

// Fact reads msg's key and the guard's fact for payload, before any store
// request; a refused key (an error or "") or a key the guard refuses is a
// bad report.
func (e *Engine[M]) Fact(msg M, payload []byte) (idempotency.Fact, *Report) {
	key, err := e.Key(msg)
	if err != nil {
		return idempotency.Fact{}, &Report{Outcome: outcome.BadInput, Err: verdict.KeyRefusal(err)}
	}
	if key == "" {
		return idempotency.Fact{}, &Report{Outcome: outcome.BadInput, Err: errEmptyKey}
	}
	f, err := e.Guard.Fact(key, payload)
	if err != nil {
		pk, _ := e.Guard.Key(key)
		return idempotency.Fact{}, &Report{Outcome: outcome.BadInput, Key: pk, Err: err}
	}
	return f, nil
}

// Fact is a judged fact, ready to start.
type Fact[M any] struct {
	idempotency.Fact
	Msg    M
	Origin string    // what the fact's origin time (Sent) is, for an expired fact's line
	ID     slog.Attr // the record's id, for the takeover line
	Record any       // the source's record, for its InProgress
}

// Batch is the state the facts of one batch share: a zero Batch with its
// Engine set starts a batch.
type Batch[M any] struct {
	Engine *Engine[M]
	// Waiter, when set, hears of a fact the guard finds in progress
	// elsewhere.
	Waiter  Waiter[M]
	flights flight.Set // by namespaced key
}

// Waiter is what a source does with a fact found in progress elsewhere.
type Waiter[M any] interface {
	// InProgress is called when the guard finds f in progress elsewhere
	// (err wraps idempotency.ErrInProgress), and returns the answer to
	// report instead: the fact run again after a wait, or the error with
	// when its record comes back.
	InProgress(ctx context.Context, f Fact[M], used *idempotency.Capacity, err error) (idempotency.Result, error)
}

// Start runs a judged fact unless it is expired, too close to the deadline,
// or carried by an earlier fact of the batch, whose outcome it then takes.
func (b *Batch[M]) Start(ctx context.Context, f Fact[M]) Report {
	e := b.Engine
	noOrigin := f.Sent.IsZero()
	// The age is taken once the fact may start (the guard takes it again at
	// each write): an expired fact costs no store request.
	old := e.Guard.Expired(f.Fact)
	if old != nil {
		old = e.Explain(old, f.Origin)
	}
	if d, ok := ctx.Deadline(); ok && old == nil && time.Until(d) < e.MinRemaining {
		return Report{Outcome: outcome.NotStarted, Key: f.Key, NoOrigin: noOrigin, Err: fmt.Errorf("%w: %v before the deadline, less than %v", verdict.ErrNotStarted, time.Until(d).Round(time.Millisecond), e.MinRemaining)}
	}
	prior, led := b.flights.Join(f.Key, f.Hash, old == nil)
	if prior != nil {
		// An earlier fact of the batch is this one: its outcome is this
		// one's, whatever this one's age (a fact it just completed is a
		// duplicate, safely).
		if res, err := prior.Wait(); err != nil {
			return Report{Outcome: verdict.Of(res, err), Key: f.Key, NoOrigin: noOrigin, Err: fmt.Errorf("same fact as an earlier record of the batch: %w", err)}
		}
		return Report{Outcome: outcome.Duplicate, Key: f.Key, NoOrigin: noOrigin}
	}
	if old != nil {
		return Report{Outcome: outcome.Expired, Key: f.Key, Err: old}
	}
	if led != nil {
		defer led.Close()
	}
	var used idempotency.Capacity
	res, err := b.run(ctx, f, &used)
	if led != nil {
		led.Set(res, err) // the guard's answer: a later record of the fact is its duplicate
	}
	err = b.explain(ctx, f, res, err)
	return Report{Outcome: verdict.Of(res, err), Key: f.Key, Err: err, Capacity: used, NoOrigin: noOrigin}
}

// run runs the fact's effect under the guard; a fact found in progress
// elsewhere is the Waiter's.
func (b *Batch[M]) run(ctx context.Context, f Fact[M], used *idempotency.Capacity) (idempotency.Result, error) {
	res, err := b.Engine.Run(idempotency.WithCapacity(ctx, used), f.Fact, f.Msg)
	if b.Waiter != nil && errors.Is(err, idempotency.ErrInProgress) {
		res, err = b.Waiter.InProgress(ctx, f, used, err)
	}
	return res, err
}

// explain says what the source must hear of the guard's answer: a
// takeover (logged), an expiry (its origin and fix), a dropped result (a
// processed fact with a warning).
func (b *Batch[M]) explain(ctx context.Context, f Fact[M], res idempotency.Result, err error) error {
	e := b.Engine
	if res.TookOver { // a fact of its own: the effect may have run before, under the same key
		e.Logger.LogAttrs(ctx, slog.LevelWarn, "takeover", slog.String("consumer", e.Consumer), f.ID, slog.String("key", f.Key), slog.Time("lapsed_lease", res.LapsedLease), slog.String("reason", "took over the reservation of a worker whose lease ended (it crashed or ran out of time): the effect ran again, and may have run before"))
	}
	if errors.Is(err, idempotency.ErrExpired) {
		err = e.Explain(err, f.Origin) // it aged in the store's calls, or in a transactional effect
	}
	if err == nil && res.DroppedBytes > 0 {
		err = fmt.Errorf("processed, but the result of %d bytes exceeds the default MaxResultBytes (%d): stored without it, duplicates get an empty result", res.DroppedBytes, limits.DefaultMaxResultBytes)
	}
	return err
}

// Level is the level of a fact's log line: INFO for a success (WARN with a
// warning), WARN for a fact that may still succeed on its own (in
// progress elsewhere, not started; ERROR when this was its last chance:
// final), ERROR for everything an operator must see (a mismatch, bad
// input, a failure, a lost lease, an expired fact).
func Level(o outcome.Outcome, warning, final bool) slog.Level {
	switch {
	case o == outcome.InProgress || o == outcome.NotStarted:
		if final {
			return slog.LevelError
		}
		return slog.LevelWarn
	case o.Succeeded():
		if warning {
			return slog.LevelWarn
		}
		return slog.LevelInfo
	}
	return slog.LevelError
}
