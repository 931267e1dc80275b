package streambatch

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// The stream consumers' entry points: the contract, store, guard, logger
// and metrics that every entry point builds (package handler's options
// change how), with a stream's handler. Each refuses at init, in one line
// that names the fix, a contract of another source (a queue consumer's
// function started with StartKinesis, a Kinesis consumer's with
// StartDynamoDB): contract.Settings.CheckSource.

// KinesisFromEnv returns the Kinesis handler that runs effect once per
// fact, its key derived by key, configured from the function's environment
// (a contract of source contract.SourceKinesis).
func KinesisFromEnv[T any](key handler.KeyFunc[T], effect handler.Func[T], opts ...handler.Option) (*Kinesis[T], error) {
	guard, cfg, err := load(build.Resolve(opts), contract.SourceKinesis, nil)
	if err != nil {
		return nil, err
	}
	return NewKinesis(guard, key, effect, cfg), nil
}

// KinesisFromEnvTx is KinesisFromEnv for a transactional effect (see
// sqsbatch.FromEnvTx).
func KinesisFromEnvTx[T, W any](key handler.KeyFunc[T], effect handler.TxFunc[T, W], opts ...handler.Option) (*Kinesis[T], error) {
	guard, cfg, err := load(build.Resolve(opts), contract.SourceKinesis, build.AcceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return NewKinesisTx(guard, key, effect, cfg), nil
}

// DynamoDBFromEnv returns the DynamoDB Streams handler that runs effect
// once per fact, configured from the function's environment (a contract of
// source contract.SourceDynamoDBStreams, which says the images asked for
// and what REMOVE records do).
func DynamoDBFromEnv[T any](key handler.KeyFunc[Change[T]], effect handler.Func[Change[T]], opts ...handler.Option) (*DynamoDB[T], error) {
	guard, cfg, err := load(build.Resolve(opts), contract.SourceDynamoDBStreams, nil)
	if err != nil {
		return nil, err
	}
	return NewDynamoDB(guard, key, effect, cfg)
}

// DynamoDBFromEnvTx is DynamoDBFromEnv for a transactional effect.
func DynamoDBFromEnvTx[T, W any](key handler.KeyFunc[Change[T]], effect handler.TxFunc[Change[T], W], opts ...handler.Option) (*DynamoDB[T], error) {
	guard, cfg, err := load(build.Resolve(opts), contract.SourceDynamoDBStreams, build.AcceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return NewDynamoDBTx(guard, key, effect, cfg)
}

// StartKinesis builds the handler with KinesisFromEnv and runs it under the
// Lambda runtime; it does not return.
func StartKinesis[T any](key handler.KeyFunc[T], effect handler.Func[T], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := KinesisFromEnv(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// StartKinesisTx is StartKinesis for a transactional effect.
func StartKinesisTx[T, W any](key handler.KeyFunc[T], effect handler.TxFunc[T, W], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := KinesisFromEnvTx(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// StartDynamoDB builds the handler with DynamoDBFromEnv and runs it under
// the Lambda runtime; it does not return.
func StartDynamoDB[T any](key handler.KeyFunc[Change[T]], effect handler.Func[Change[T]], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := DynamoDBFromEnv(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// StartDynamoDBTx is StartDynamoDB for a transactional effect.
func StartDynamoDBTx[T, W any](key handler.KeyFunc[Change[T]], effect handler.TxFunc[Change[T], W], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := DynamoDBFromEnvTx(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// load builds the guard and the stream adapter's configuration from a
// contract of source.
func load(o *build.Options, source contract.Source, checkTx func(idempotency.TxStore) error) (*idempotency.Guard, Config, error) {
	env, err := build.Load(o, source, "streambatch."+map[contract.Source]string{contract.SourceKinesis: "StartKinesis", contract.SourceDynamoDBStreams: "StartDynamoDB"}[source], checkTx)
	if err != nil {
		return nil, Config{}, err
	}
	cfg := ConfigOf(env.Settings)
	cfg.Logger, cfg.Metrics, cfg.MetricsLevel = env.Logger, env.Metrics, env.MetricsLevel
	return env.Guard, cfg, nil
}
