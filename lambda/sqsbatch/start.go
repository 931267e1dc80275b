package sqsbatch

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
)

// The entry points of a queue consumer of an SNS topic or of producers
// that send to the queue: each reads the runtime contract that the
// IdempotentConsumer construct wrote into the function's environment,
// builds the DynamoDB client, the store, the guard and the Handler from it
// (package handler's options change how), and, for Start and StartTx,
// hands it to the Lambda runtime. A contract of another delivery
// (MESSAGE_DELIVERY: an EventBridge rule's, an S3 bucket's) or source
// refuses to start: see packages eventbridge and s3event.

// FromEnv returns the Handler that runs effect once per fact, its key
// derived by key, configured from the function's environment. The key
// function is where to refuse input that no retry can fix (return an error
// wrapping outcome.ErrBadInput): it runs before the store, so refused input
// costs no request.
func FromEnv[T any](key handler.KeyFunc[T], effect handler.Func[T], opts ...handler.Option) (*Handler[T], error) {
	guard, cfg, err := load(build.Resolve(opts), nil)
	if err != nil {
		return nil, err
	}
	return New(guard, key, effect, cfg), nil
}

// FromEnvTx is FromEnv for a transactional effect, whose writes commit with
// the fact's record in one request (see idempotency.Guard.RunTx). The store
// must be an idempotency.TxStore, as the DynamoDB store is, and take writes
// of type W (for DynamoDB, []types.TransactWriteItem): a wrong concrete
// type is an error here, at init, not on every message. A contract that
// declares the tables the effect writes (TxTables) refuses, before any
// request, a write to another table: a store error wrapping
// outcome.ErrMisconfigured that fails the whole invocation.
func FromEnvTx[T, W any](key handler.KeyFunc[T], effect handler.TxFunc[T, W], opts ...handler.Option) (*Handler[T], error) {
	guard, cfg, err := load(build.Resolve(opts), build.AcceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return NewTx(guard, key, effect, cfg), nil
}

// Start builds the handler with FromEnv and runs it under the Lambda
// runtime; it does not return.
func Start[T any](key handler.KeyFunc[T], effect handler.Func[T], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnv(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// StartTx is Start for a transactional effect (see FromEnvTx).
func StartTx[T, W any](key handler.KeyFunc[T], effect handler.TxFunc[T, W], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnvTx(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// load reads the contract of a consumer of SNS envelopes or raw messages
// (queue.Load).
func load(o *build.Options, checkTx func(idempotency.TxStore) error) (*idempotency.Guard, Config, error) {
	guard, cfg, err := queue.Load(o, checkTx, "sqsbatch.FromEnv", "")
	if err == nil && (cfg.Delivery == contract.EventBridge || cfg.Delivery == contract.S3) {
		err = fmt.Errorf("configuration: %s: the contract's delivery is %q: use the entry point of the consumer's source (eventbridge.Start for an EventBridge rule, s3event.Start for an S3 bucket)", contract.DeliveryVar, cfg.Delivery)
	}
	return guard, Config(cfg), err
}

// WithVisibility brings records found in progress, and failed records on
// the backoff, back through v instead of the SQS client that the entry
// points build (Config.Visibility), on every queue-fed source.
func WithVisibility(v handler.VisibilityChanger) handler.Option { return queue.WithVisibility(v) }

// NewVisibility returns the handler.VisibilityChanger that the entry points build,
// over the SQS API of cfg (Config.Visibility, for a Handler built with
// New): it finds a queue's URL and visibility timeout once per queue, then
// calls ChangeMessageVisibility. The construct's role grants both on the
// consumer's queue.
func NewVisibility(cfg aws.Config) handler.VisibilityChanger { return queue.NewVisibility(cfg) }
