package sqsbatch

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// The entry points of a queue consumer: each reads the runtime contract
// that the IdempotentConsumer construct wrote into the function's
// environment (package contract), builds the DynamoDB client, the store,
// the guard and the Handler from it (package handler's options change
// how), and, for Start, StartTx, StartEvents and StartObjects, hands it to
// the Lambda runtime. The consumer's delivery is the contract's
// (MESSAGE_DELIVERY): FromEnv for an SNS topic or producers that send to
// the queue, EventsFromEnv for an EventBridge rule (Event), ObjectsFromEnv
// for an S3 bucket's notifications (Object); an entry point of another
// delivery or source refuses to start.

// FromEnv returns the Handler that runs effect once per fact, its key
// derived by key, configured from the function's environment. The key
// function is where to refuse input that no retry can fix (return an error
// wrapping outcome.ErrBadInput): it runs before the store, so refused input
// costs no request.
func FromEnv[T any](key handler.KeyFunc[T], effect handler.Func[T], opts ...handler.Option) (*Handler[T], error) {
	guard, cfg, err := load(build.Resolve(opts), nil, "")
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
	guard, cfg, err := load(build.Resolve(opts), build.AcceptsWrites[W], "")
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

// EventsFromEnv is FromEnv for a consumer whose source is an EventBridge
// rule (the contract's MESSAGE_DELIVERY is "eventbridge", as the construct
// writes it for a bus source): key and effect get each event with its
// detail decoded into T, and the detail alone is the fact, so that a
// producer's retry (a new event id, the same detail) runs once.
func EventsFromEnv[T any](key handler.KeyFunc[Event[T]], effect handler.Func[Event[T]], opts ...handler.Option) (*Handler[Event[T]], error) {
	guard, cfg, err := load(build.Resolve(opts), nil, contract.EventBridge)
	if err != nil {
		return nil, err
	}
	return NewEvents(guard, key, effect, cfg), nil
}

// StartEvents builds the handler with EventsFromEnv and runs it under the
// Lambda runtime, as Start does:
//
//	func main() {
//		sqsbatch.StartEvents(func(e sqsbatch.Event[Order]) (string, error) {
//			return e.Source + "/" + e.Detail.OrderID, nil
//		}, charge)
//	}
func StartEvents[T any](key handler.KeyFunc[Event[T]], effect handler.Func[Event[T]], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := EventsFromEnv(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// ObjectsFromEnv is FromEnv for a consumer whose source is an S3 bucket (the
// contract's MESSAGE_DELIVERY is "s3", as the construct writes it for a
// bucket source): effect runs once per object event, one per record of a
// notification, keyed by ObjectKey. A message is deleted only once all its
// records are done; S3's s3:TestEvent is acknowledged. For a key of your
// own, use FromEnv with T Object.
func ObjectsFromEnv(effect handler.Func[Object], opts ...handler.Option) (*Handler[Object], error) {
	guard, cfg, err := load(build.Resolve(opts), nil, contract.S3)
	if err != nil {
		return nil, err
	}
	return NewObjects(guard, effect, cfg), nil
}

// StartObjects builds the handler with ObjectsFromEnv and runs it under the
// Lambda runtime, as Start does.
func StartObjects(effect handler.Func[Object], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := ObjectsFromEnv(effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// load reads a queue consumer's contract and builds the guard and the
// adapter's configuration; want, when set, is the delivery the entry point
// reads, and a contract of another is refused.
func load(o *build.Options, checkTx func(idempotency.TxStore) error, want contract.Delivery) (*idempotency.Guard, Config, error) {
	env, err := build.Load(o, contract.SourceQueue, "sqsbatch.FromEnv", checkTx)
	if err != nil {
		return nil, Config{}, err
	}
	cfg := ConfigOf(env.Settings)
	if want != "" && cfg.Delivery != want {
		return nil, Config{}, fmt.Errorf("configuration: %s: this entry point reads bodies of delivery %q, and the contract's is %q: use the entry point of the consumer's source (Start for an SNS topic or direct producers, StartEvents for an EventBridge rule, StartObjects for an S3 bucket)",
			contract.DeliveryVar, want, cfg.Delivery)
	}
	cfg.Logger, cfg.Metrics, cfg.MetricsLevel = env.Logger, env.Metrics, env.MetricsLevel
	cfg.Visibility = visibilityOf(env) // in-progress records come back when the lease can end
	return env.Guard, cfg, nil
}
