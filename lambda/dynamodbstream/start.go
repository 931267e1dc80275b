package dynamodbstream

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/stream"
)

// entry is the entry point a contract of another source is told to use
// instead, or that a DynamoDB stream contract names to another source's.
const entry = "dynamodbstream.Start"

// FromEnv returns the Handler that runs effect once per fact, its key
// derived by key, configured from the function's environment: a contract of
// source contract.SourceDynamoDBStreams, which says the images asked for
// and what REMOVE records do (another source's is refused at init, in one
// line that names its entry point), and the store, guard, logger and
// metrics every entry point builds, changed by opts.
func FromEnv[T any](key handler.KeyFunc[Change[T]], effect handler.Func[Change[T]], opts ...handler.Option) (*Handler[T], error) {
	env, o, err := stream.Load(opts, contract.SourceDynamoDBStreams, entry, nil)
	if err != nil {
		return nil, err
	}
	return newHandler(stream.New(env.Guard, key, effect, o, origin, group), ownOf(env.Settings))
}

// FromEnvTx is FromEnv for a transactional effect: the store must take
// writes of type W (checked at init).
func FromEnvTx[T, W any](key handler.KeyFunc[Change[T]], effect handler.TxFunc[Change[T], W], opts ...handler.Option) (*Handler[T], error) {
	env, o, err := stream.Load(opts, contract.SourceDynamoDBStreams, entry, build.AcceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return newHandler(stream.NewTx(env.Guard, key, effect, o, origin, group), ownOf(env.Settings))
}

// ownOf is this source's own settings in s (the settings every stream
// source shares are batch.Of's): the one place where the
// contract's StreamImages and StreamRemoves reach the handler.
func ownOf(s contract.Settings) own {
	return own{oldImage: s.StreamImages == contract.ImagesNewAndOld, removes: s.StreamRemoves}
}

// Start builds the handler with FromEnv and runs it under the Lambda
// runtime; it does not return. A configuration it cannot run with ends the
// init with one line at FATAL that says why (see package handler).
func Start[T any](key handler.KeyFunc[Change[T]], effect handler.Func[Change[T]], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnv(key, effect, opts...)
		return h.Handle, err
	})
}

// StartTx is Start for a transactional effect.
func StartTx[T, W any](key handler.KeyFunc[Change[T]], effect handler.TxFunc[Change[T], W], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnvTx(key, effect, opts...)
		return h.Handle, err
	})
}
