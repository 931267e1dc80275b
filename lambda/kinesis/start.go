package kinesis

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/stream"
)

// entry is the entry point a contract of another source is told to use
// instead, or that a Kinesis contract names to another source's.
const entry = "kinesis.Start"

// FromEnv returns the Handler that runs effect once per fact, its key
// derived by key, configured from the function's environment: a contract of
// source contract.SourceKinesis (another source's is refused at init, in
// one line that names its entry point), the store, guard, logger and
// metrics every entry point builds, changed by opts.
func FromEnv[T any](key handler.KeyFunc[T], effect handler.Func[T], opts ...handler.Option) (*Handler[T], error) {
	env, o, err := stream.Load(opts, contract.SourceKinesis, entry, nil)
	if err != nil {
		return nil, err
	}
	return New(env.Guard, key, effect, o), nil
}

// FromEnvTx is FromEnv for a transactional effect: the store must take
// writes of type W (checked at init).
func FromEnvTx[T, W any](key handler.KeyFunc[T], effect handler.TxFunc[T, W], opts ...handler.Option) (*Handler[T], error) {
	env, o, err := stream.Load(opts, contract.SourceKinesis, entry, build.AcceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return NewTx(env.Guard, key, effect, o), nil
}

// Start builds the handler with FromEnv and runs it under the Lambda
// runtime; it does not return. A configuration it cannot run with ends the
// init with one line at FATAL that says why (see package handler).
func Start[T any](key handler.KeyFunc[T], effect handler.Func[T], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnv(key, effect, opts...)
		return h.Handle, err
	})
}

// StartTx is Start for a transactional effect.
func StartTx[T, W any](key handler.KeyFunc[T], effect handler.TxFunc[T, W], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnvTx(key, effect, opts...)
		return h.Handle, err
	})
}
