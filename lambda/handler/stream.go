package handler

import (
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/streambatch"
)

// The stream consumers' entry points: the same contract, store, guard,
// logger and metrics as New and Start, with the stream adapter
// (package streambatch) in place of the queue's. Each refuses at init, in
// one line that names the fix, a contract of another source (a queue
// consumer's function started with StartKinesis, a Kinesis consumer's with
// Start): contract.Settings.CheckSource.

// NewKinesis returns the Kinesis handler that runs effect once per fact,
// its key derived by key, configured from the function's environment (a
// contract of source contract.SourceKinesis).
func NewKinesis[T any](key streambatch.KeyFunc[T], effect streambatch.Func[T], opts ...Option) (*streambatch.Kinesis[T], error) {
	guard, cfg, err := buildStream(opts, contract.SourceKinesis, "handler.NewKinesis", nil)
	if err != nil {
		return nil, err
	}
	return streambatch.NewKinesis(guard, key, effect, cfg), nil
}

// NewKinesisTx is NewKinesis for a transactional effect (see NewTx).
func NewKinesisTx[T, W any](key streambatch.KeyFunc[T], effect streambatch.TxFunc[T, W], opts ...Option) (*streambatch.Kinesis[T], error) {
	guard, cfg, err := buildStream(opts, contract.SourceKinesis, "handler.NewKinesisTx", acceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return streambatch.NewKinesisTx(guard, key, effect, cfg), nil
}

// NewDynamoDBStream returns the DynamoDB Streams handler that runs effect
// once per fact, configured from the function's environment (a contract of
// source contract.SourceDynamoDBStreams, which says the images asked for
// and what REMOVE records do).
func NewDynamoDBStream[T any](key streambatch.KeyFunc[streambatch.Change[T]], effect streambatch.Func[streambatch.Change[T]], opts ...Option) (*streambatch.DynamoDB[T], error) {
	guard, cfg, err := buildStream(opts, contract.SourceDynamoDBStreams, "handler.NewDynamoDBStream", nil)
	if err != nil {
		return nil, err
	}
	return streambatch.NewDynamoDB(guard, key, effect, cfg)
}

// NewDynamoDBStreamTx is NewDynamoDBStream for a transactional effect.
func NewDynamoDBStreamTx[T, W any](key streambatch.KeyFunc[streambatch.Change[T]], effect streambatch.TxFunc[streambatch.Change[T], W], opts ...Option) (*streambatch.DynamoDB[T], error) {
	guard, cfg, err := buildStream(opts, contract.SourceDynamoDBStreams, "handler.NewDynamoDBStreamTx", acceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return streambatch.NewDynamoDBTx(guard, key, effect, cfg)
}

// StartKinesis builds the handler with NewKinesis and runs it under the
// Lambda runtime; it does not return (see Start).
func StartKinesis[T any](key streambatch.KeyFunc[T], effect streambatch.Func[T], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewKinesis(key, effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}

// StartKinesisTx is StartKinesis for a transactional effect.
func StartKinesisTx[T, W any](key streambatch.KeyFunc[T], effect streambatch.TxFunc[T, W], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewKinesisTx(key, effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}

// StartDynamoDBStream builds the handler with NewDynamoDBStream and runs it
// under the Lambda runtime; it does not return (see Start).
func StartDynamoDBStream[T any](key streambatch.KeyFunc[streambatch.Change[T]], effect streambatch.Func[streambatch.Change[T]], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewDynamoDBStream(key, effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}

// StartDynamoDBStreamTx is StartDynamoDBStream for a transactional effect.
func StartDynamoDBStreamTx[T, W any](key streambatch.KeyFunc[streambatch.Change[T]], effect streambatch.TxFunc[streambatch.Change[T], W], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewDynamoDBStreamTx(key, effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}

// acceptsWrites checks at init that the store takes writes of type W (see
// NewTx).
func acceptsWrites[W any](store idempotency.TxStore) error {
	var zero W
	if any(zero) == nil {
		return nil // W is an interface type: the store checks each value
	}
	if err := store.AcceptsWrites(zero); err != nil {
		return fmt.Errorf("the transactional effect's writes do not fit the store: %w", err)
	}
	return nil
}

// buildStream builds the guard and the stream adapter's configuration from
// a contract of source.
func buildStream(opts []Option, source contract.Source, entry string, checkTx func(idempotency.TxStore) error) (*idempotency.Guard, streambatch.Config, error) {
	o, guard, s, err := buildGuard(opts, source, entry, checkTx)
	if err != nil {
		return nil, streambatch.Config{}, err
	}
	cfg := streambatch.ConfigOf(s)
	cfg.Logger, cfg.Metrics, cfg.MetricsLevel = o.logger, o.metrics, outcome.LevelName(LogLevel(o.getenv))
	return guard, cfg, nil
}
