package step

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Option configures FromEnv and Start.
type Option func(*startOptions)

type startOptions struct {
	getenv func(string) string
	store  idempotency.Store
	logger *slog.Logger
}

// WithStore uses store instead of the DynamoDB table the contract names (a
// test's store over dynalite, or a store of your own).
func WithStore(store idempotency.Store) Option {
	return func(o *startOptions) { o.store = store }
}

// WithGetenv reads the contract through getenv instead of os.Getenv.
func WithGetenv(getenv func(string) string) Option {
	return func(o *startOptions) { o.getenv = getenv }
}

// WithLogger writes the invocations' lines, and an init failure's, to
// logger instead of JSON on standard error.
func WithLogger(logger *slog.Logger) Option {
	return func(o *startOptions) { o.logger = logger }
}

func resolveStart(opts []Option) *startOptions {
	o := &startOptions{getenv: os.Getenv}
	for _, opt := range opts {
		opt(o)
	}
	if o.logger == nil {
		o.logger = sqsbatch.NewLogger(os.Stderr, handler.LogLevel(o.getenv))
	}
	return o
}

// FromEnv returns the handler of the step that the function's contract
// describes (the step construct writes it: contract.SourceStep, the step's
// name in STEP_NAME, the table and its design, the namespace, the window),
// whose effect runs once per fact, the key that key reads from the state
// input: New over a guard on the contract's table. It refuses a contract of
// another source, or one it cannot run with, naming the variable.
func FromEnv(key KeyFunc, effect Effect, opts ...Option) (Handler, error) {
	o := resolveStart(opts)
	s, err := contract.Decode(o.getenv, o.getenv("AWS_LAMBDA_FUNCTION_NAME"))
	if err == nil {
		err = s.CheckSource(contract.SourceStep, "step.Start")
	}
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	store := o.store
	if store == nil {
		cfg, err := handler.AWSConfig()
		if err != nil {
			return nil, fmt.Errorf("aws configuration: %w", err)
		}
		if store, err = handler.NewStore(dynamodb.NewFromConfig(cfg), s); err != nil {
			return nil, err
		}
	}
	guard, err := idempotency.NewGuard(store, s.GuardConfig())
	if err != nil {
		return nil, err
	}
	return New(guard, s.StepName, key, effect, Config{Logger: o.logger})
}

// Start builds the step's handler with FromEnv and runs it under the Lambda
// runtime; it does not return. A configuration it cannot run with is logged
// as one JSON line and ends the process with status 1. It sets the garbage
// collector for the function first (handler.TuneGC).
func Start(key KeyFunc, effect Effect, opts ...Option) {
	handler.TuneGC()
	h, err := FromEnv(key, effect, opts...)
	if err != nil {
		resolveStart(opts).logger.LogAttrs(context.Background(), slog.LevelError, "init", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h)
}
