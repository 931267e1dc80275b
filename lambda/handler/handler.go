// Package handler holds the options of every entry point of the runtime
// library, and the function types of the batch sources' key and effect
// (KeyFunc, Func, TxFunc). Each source package starts its handler from the runtime contract
// that the construct wrote into the function's environment, in one call:
//
//	func main() {
//		sqsbatch.Start(orderKey, charge)
//	}
//
// Entry points, one package per source: sqsbatch.Start and StartTx (an
// SQS queue: SNS envelopes or raw messages), eventbridge.Start (an
// EventBridge rule), s3event.Start (an S3 bucket's notifications),
// kinesis.Start and StartTx (a Kinesis data stream), dynamodbstream.Start
// and StartTx (a DynamoDB table's stream), endpoint.Start (an HTTP endpoint
// or webhook), step.Start (a saga step on Step Functions); each has a
// FromEnv twin that builds the handler without starting the runtime, for
// tests and custom mains. An entry point of another source than the
// contract's refuses to start.
//
// A configuration the handler cannot run with (a setting that breaks a
// rule, a contract version other than its library's) ends the init with
// one JSON log line at FATAL that says why, naming the variable, and exit
// status 1: Lambda reports the init error and the messages stay in the
// queue. Every entry point sets the garbage collector for the function's
// memory first (TuneGC).
package handler

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// Option changes how an entry point builds the handler: the With functions
// of this package and of the source packages (sqsbatch.WithVisibility,
// endpoint.WithSecrets) make them.
type Option func(*options)

// options are what the options set, the entry points' own.
type options = build.Options

// WithStore uses store instead of the DynamoDB table the contract names (a
// test's storetest.MemoryStore, or a store of your own).
func WithStore(store idempotency.Store) Option {
	return func(o *build.Options) { o.Store = store }
}

// WithAWSConfig builds the AWS clients from cfg instead of the default
// configuration, which reads only the environment Lambda provides (region,
// the role's credentials, endpoint and client settings; no files, profiles,
// SSO, web identity or metadata credentials), for example to add
// middleware, or the full chain of config.LoadDefaultConfig outside Lambda.
// The clients' HTTP settings are then yours.
func WithAWSConfig(cfg aws.Config) Option {
	return func(o *build.Options) { o.AWSConfig = &cfg }
}

// WithLogger writes the records' lines, and an init failure's, to logger
// instead of JSON on standard error (outcome.NewLogger at the function's
// application log level).
func WithLogger(logger *slog.Logger) Option {
	return func(o *build.Options) { o.Logger = logger }
}

// WithMetrics writes the Embedded Metric Format lines to w instead of
// standard output (io.Discard turns them off).
func WithMetrics(w io.Writer) Option {
	return func(o *build.Options) { o.Metrics = w }
}

// WithGetenv reads the environment through getenv instead of os.Getenv.
func WithGetenv(getenv func(string) string) Option {
	return func(o *build.Options) { o.Getenv = getenv }
}

// TuneGC sets the garbage collector for a Lambda function, as every entry
// point does before it builds the handler: a main that builds with a FromEnv
// and starts the runtime itself calls it first, with the same options. It
// sets the target to 400 (GOGC, unless set) and a soft memory limit of
// three quarters of the function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE;
// GOMEMLIMIT, unless set), read through WithGetenv's function when given:
// see DESIGN.md, "What a consumer process costs".
func TuneGC(opts ...Option) { build.TuneGC(build.Resolve(opts).Getenv) }

// AWSConfig is the AWS configuration of the handler's own default clients:
// the environment Lambda provides, read as the SDK reads it, and nothing
// else (no files, profiles or metadata providers). An effect that writes to
// a table of its own, such as the example's outbox, builds its client from
// it.
func AWSConfig() (aws.Config, error) { return build.LambdaConfig() }

// KeyFunc derives the idempotency key from a business message: the order
// id, the transaction id and its version, an event id the producer wrote.
// Never the transport's ids (an SQS message id, a stream's sequence
// number), which SNS fan-out, producer retries and redrives renew for the
// same fact. An empty key or an error is bad input.
//
// It is also the place to refuse a message that no retry can fix (a
// negative amount, a missing field): it runs before the idempotency store,
// so such a message costs no store request on any delivery, and is reported
// as bad input until the dead-letter queue takes it. The same refusal in the
// effect costs a reservation and its release on every delivery.
type KeyFunc[M any] func(msg M) (string, error)

// Func is the business effect for one message, run at most once per fact.
// It returns a small result that duplicates get back.
type Func[M any] func(ctx context.Context, msg M, r idempotency.Reservation) (result string, err error)

// TxFunc computes a transactional effect for one message: the writes that
// commit atomically with the COMPLETED record (see idempotency.RunTx). It
// must not have effects of its own.
//
// W is the type of the writes, the one the store commits (for DynamoDB,
// []types.TransactWriteItem): the Tx entry points check it at init.
type TxFunc[M, W any] func(ctx context.Context, msg M, r idempotency.Reservation) (writes W, result string, err error)

// Batch holds the settings every batch source shares (sqsbatch, eventbridge,
// s3event, kinesis, dynamodbstream): each source's Config embeds it. The
// zero value of every field means its default. The entry points set them
// from the contract; a handler built with a source's New takes them as
// given.
type Batch struct {
	// Concurrency bounds how many records of a batch run at once; the
	// records of one ordering group (a FIFO message group, a partition
	// key, an item key) always run one after another, and after one fails
	// the later ones of its group are not started. With 1, every record
	// runs in batch order in the goroutine that called Handle, and no
	// goroutine is started. Default: all records of the batch.
	Concurrency int
	// MinRemaining is the least time before the deadline for a record to be
	// started; later records are not started, and reported for the event
	// source to deliver again. The guard itself starts nothing with no more
	// than its finishing budget left. Default: the guard's FinishBudget
	// and a second (3s with the guard's default).
	MinRemaining time.Duration
	// Consumer names the consumer in logs and metrics (the contract's
	// CONSUMER_NAME, the construct's path). Default: "consumer".
	Consumer string
	// Region is the AWS Region the function runs in, the metrics' second
	// dimension (outcome.RegionDimension). Default: none, the metrics then
	// have the Consumer dimension alone; the entry points set it from
	// AWS_REGION.
	Region string
	// MetricsNamespace is the CloudWatch namespace of the metrics.
	// Default: outcome.DefaultNamespace.
	MetricsNamespace string
	// Logger receives one line per record. Default: outcome.NewLogger on
	// standard error at INFO.
	Logger *slog.Logger
	// Metrics receives one Embedded Metric Format line per batch. Default:
	// standard output; io.Discard turns metrics off.
	Metrics io.Writer
	// MetricsLevel is the "level" of the metrics line. Lambda's log-level
	// filtering takes a JSON line without one for INFO and drops it at a
	// higher application log level; a metrics line at the function's own
	// level is kept at any level. Default: "INFO".
	MetricsLevel string
}

// VisibilityChanger changes the visibility timeout of a received SQS
// message: SQS's ChangeMessageVisibility, for the queue of the event source
// ARN queueARN and the message's receipt handle. The new timeout counts
// from the call. The queue-fed sources (sqsbatch, eventbridge, s3event)
// bring a record found in progress elsewhere, or failed on the backoff,
// back through it (sqsbatch.Config.Visibility, sqsbatch.WithVisibility);
// sqsbatch.NewVisibility implements it over SQS.
type VisibilityChanger interface {
	// QueueVisibility returns the visibility timeout of the queue: a
	// change to as long or longer would bring nothing back sooner.
	QueueVisibility(ctx context.Context, queueARN string) (time.Duration, error)
	// ChangeVisibility makes the message visible again after timeout.
	ChangeVisibility(ctx context.Context, queueARN, receiptHandle string, timeout time.Duration) error
}
