// Package handler starts an idempotent SQS consumer in one call.
//
// Start reads the runtime contract that the IdempotentConsumer construct
// wrote into the function's environment (package contract), builds the
// DynamoDB client, the store, the guard and the batch adapter from it, and
// hands the adapter to the Lambda runtime:
//
//	func main() {
//		handler.Start(orderKey, charge)
//	}
//
// The consumer's source is the contract's (MESSAGE_DELIVERY): Start for an
// SNS topic or producers that send to the queue, StartEvents for an
// EventBridge rule (Event), StartObjects for an S3 bucket's notifications
// (Object); an entry point of another source refuses to start.
//
// A configuration the handler cannot run with (a setting that breaks a rule,
// a contract version other than its library's) ends the init with one JSON
// log line at FATAL that says why, naming the variable, and exit status 1:
// Lambda reports the init error and the messages stay in the queue. The
// contract's settings become the guard's and the adapter's configuration
// through contract.Settings.GuardConfig and BatchConfig.
//
// Every line of the default logger carries a "level" that Lambda names and
// a "timestamp" in RFC 3339 (outcome.NewLogger), so that Lambda's advanced
// logging controls keep each line at its level. The store is over a table of
// the construct's design (partition key "pk", TTL on "ttl") unless the
// contract describes the shared table's own (NewStore). A transactional handler
// whose contract declares the tables its effect writes (TxTables) refuses,
// before any request, a write to another table (ErrUndeclaredTable): a
// store error that fails the whole invocation, which the errors alarm sees.
package handler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Option changes how New and Start build the consumer.
type Option func(*options)

type options struct {
	getenv    func(string) string
	store     idempotency.Store
	awsConfig *aws.Config
	logger    *slog.Logger
	metrics   io.Writer
	secrets   SecretReader // http.go
	// visibility is WithVisibility's; visibility.go.
	visibility sqsbatch.VisibilityChanger
}

// WithStore uses store instead of the DynamoDB table the contract names (a
// test's storetest.MemoryStore, or a store of your own).
func WithStore(store idempotency.Store) Option {
	return func(o *options) { o.store = store }
}

// WithAWSConfig builds the DynamoDB client from cfg instead of the default
// configuration, which reads only the environment Lambda provides (region,
// the role's credentials, endpoint and client settings; no files, profiles,
// SSO, web identity or metadata credentials: see lambdaConfig), for example
// to add middleware, or the full chain of config.LoadDefaultConfig outside
// Lambda. The client's HTTP settings are then yours.
func WithAWSConfig(cfg aws.Config) Option {
	return func(o *options) { o.awsConfig = &cfg }
}

// WithLogger writes the records' lines, and an init failure's, to logger
// instead of JSON on standard error.
func WithLogger(logger *slog.Logger) Option {
	return func(o *options) { o.logger = logger }
}

// WithMetrics writes the batches' Embedded Metric Format lines to w instead
// of standard output (io.Discard turns them off).
func WithMetrics(w io.Writer) Option {
	return func(o *options) { o.metrics = w }
}

// WithGetenv reads the environment through getenv instead of os.Getenv.
func WithGetenv(getenv func(string) string) Option {
	return func(o *options) { o.getenv = getenv }
}

// New returns the batch handler that runs effect once per fact, its key
// derived by key, configured from the function's environment. The key
// function is where to refuse input that no retry can fix (return an error
// wrapping outcome.ErrBadInput): it runs before the store, so refused
// input costs no request.
func New[T any](key sqsbatch.KeyFunc[T], effect sqsbatch.Func[T], opts ...Option) (*sqsbatch.Handler[T], error) {
	guard, cfg, err := build(opts, nil)
	if err != nil {
		return nil, err
	}
	return sqsbatch.New(guard, key, effect, cfg), nil
}

// NewTx is New for a transactional effect, whose writes commit with the
// fact's record in one request (see idempotency.Guard.RunTx). The store
// must be an idempotency.TxStore, as the DynamoDB store is, and take writes
// of type W (for DynamoDB, []types.TransactWriteItem): a wrong concrete
// type is an error here, at init, not on every message (with W an
// interface type, such as any, the store checks each value it commits).
func NewTx[T, W any](key sqsbatch.KeyFunc[T], effect sqsbatch.TxFunc[T, W], opts ...Option) (*sqsbatch.Handler[T], error) {
	guard, cfg, err := build(opts, acceptsWrites[W])
	if err != nil {
		return nil, err
	}
	return sqsbatch.NewTx(guard, key, effect, cfg), nil
}

// Start builds the handler with New and runs it under the Lambda runtime;
// it does not return. A configuration it cannot run with is logged as one
// JSON line and ends the process with status 1. It sets the garbage
// collector for the function first (see TuneGC).
func Start[T any](key sqsbatch.KeyFunc[T], effect sqsbatch.Func[T], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := New(key, effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}

// StartTx is Start for a transactional effect (see NewTx).
func StartTx[T, W any](key sqsbatch.KeyFunc[T], effect sqsbatch.TxFunc[T, W], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewTx(key, effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}

// GCPercent is the garbage collector's target that TuneGC sets: a
// collection when the heap has grown by four times what was live after the
// last one, where Go's default (GOGC=100) is once.
const GCPercent = 400

// TuneGC sets the garbage collector for a Lambda function; Start and
// StartTx call it, and a main that builds with New and starts the runtime
// itself can call it first. A consumer's live heap is small (a few MiB), so
// at Go's default target it collects every few MiB allocated, and every
// DynamoDB request through the AWS SDK allocates tens of KiB: measured end
// to end (bench/), collection and sweeping took about a third of the CPU
// per record. TuneGC sets the target to GCPercent, unless GOGC is set, and
// bounds the heap with a soft memory limit of three quarters of the
// function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), unless GOMEMLIMIT is
// set, so that the higher target never grows the heap past what the
// function has: near the limit the collector runs as often as it must.
func TuneGC() { tuneGC(os.Getenv) }

func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	mb, err := strconv.ParseInt(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"), 10, 64)
	if getenv("GOMEMLIMIT") == "" && err == nil && mb > 0 {
		debug.SetMemoryLimit(mb << 20 / 4 * 3)
	}
}

// build reads the contract of a queue consumer and builds the guard and the
// queue adapter's configuration; for a transactional handler (checkTx not
// nil) the store must be a TxStore that checkTx accepts, and it refuses
// writes to tables the contract does not declare (Settings.TxTables).
func build(opts []Option, checkTx func(idempotency.TxStore) error) (*idempotency.Guard, sqsbatch.Config, error) {
	o, guard, s, err := buildGuard(opts, contract.SourceQueue, "handler.New", checkTx)
	if err != nil {
		return nil, sqsbatch.Config{}, err
	}
	cfg := sqsbatch.ConfigOf(s)
	cfg.Logger, cfg.Metrics, cfg.MetricsLevel = o.logger, o.metrics, outcome.LevelName(LogLevel(o.getenv))
	cfg.Visibility = visibilityOf(o) // in-progress records come back when the lease can end
	return guard, cfg, nil
}

// buildGuard reads the contract, refuses one of another source than the
// entry point's (source, entry), and builds the guard (see build).
func buildGuard(opts []Option, source contract.Source, entry string, checkTx func(idempotency.TxStore) error) (*options, *idempotency.Guard, contract.Settings, error) {
	o := resolve(opts)
	fail := func(err error) (*options, *idempotency.Guard, contract.Settings, error) {
		return nil, nil, contract.Settings{}, err
	}
	s, err := contract.Decode(o.getenv, o.getenv("AWS_LAMBDA_FUNCTION_NAME"))
	if err != nil {
		return fail(fmt.Errorf("configuration: %w", err))
	}
	if err := s.CheckSource(source, entry); err != nil {
		return fail(fmt.Errorf("configuration: %w", err))
	}
	store := o.store
	if store == nil {
		if store, err = dynamoStore(o, s); err != nil {
			return fail(err)
		}
	}
	if checkTx != nil {
		txs, ok := store.(idempotency.TxStore)
		if !ok {
			return fail(fmt.Errorf("%w: %T", idempotency.ErrNoTransactions, store))
		}
		if err := checkTx(txs); err != nil {
			return fail(err)
		}
		if len(s.TxTables) > 0 {
			store = declareTables(txs, s.Table, s.TxTables)
		} else if o.store == nil { // a store of the caller's (a test's) is the caller's to check
			o.logger.LogAttrs(context.Background(), slog.LevelWarn, "init",
				slog.String("consumer", s.Consumer),
				slog.String("reason", fmt.Sprintf("%s is not set, so the transactional effect's writes are not checked against the tables the function may write: a write to a table its role cannot write fails every record with AccessDenied; declare the tables with the construct's TransactionalTables prop (or set %s to their names, comma-separated)", contract.TxTablesVar, contract.TxTablesVar)))
		}
	}
	guard, err := idempotency.NewGuard(store, s.GuardConfig())
	if err != nil {
		return fail(err)
	}
	return o, guard, s, nil
}

// dynamoStore returns the store on the contract's table. With the default
// AWS configuration, the client keeps every connection it opened to
// DynamoDB, up to its pool's total (at least as many as records run at
// once): it talks to one host, and a connection dialled during a burst (a
// request that found none idle while another was being returned) would
// otherwise be closed as the burst ends and dialled again, with a TLS
// handshake, by the next batch (pooled). The transport is the one the
// configuration built, so that what the environment set on it
// (AWS_CA_BUNDLE) stays; a request's headers and body go out in one write
// (oneWrite), and the endpoint of a table is resolved once
// (cachedEndpoints).
func dynamoStore(o *options, s contract.Settings) (idempotency.Store, error) {
	var optFns []func(*dynamodb.Options)
	cfg := o.awsConfig
	if cfg == nil {
		loaded, err := lambdaConfig()
		if err != nil {
			return nil, fmt.Errorf("aws configuration: %w", err)
		}
		cfg = &loaded
		o.awsConfig = cfg // the SQS client's too (visibilityOf)
		base, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
		if !ok || base == nil {
			base = awshttp.NewBuildableClient()
		}
		client := pooled(base, s.BatchConcurrency)
		optFns = append(optFns, func(d *dynamodb.Options) { d.HTTPClient, d.EndpointResolverV2 = client, newCachedEndpoints() })
	}
	return NewStore(dynamodb.NewFromConfig(*cfg, optFns...), s)
}

// NewStore returns the DynamoDB store over s's table, of the table's design
// that s describes (TablePartitionKey, TableSortKey, TableRecordKeyIn,
// TableFixedKeyValue, TableTTLAttribute): the store that New and Start
// build, for a caller that brings its own client (WithStore). The record
// key goes where TableRecordKeyIn says, and the other key, if the table has
// a sort key, holds TableFixedKeyValue (dynamostore.WithSortKey or
// WithKeyInSortKey). A design the store cannot use is an error that names
// the variables that carry it; s is usually what contract.Decode returns,
// which refuses such a design already.
func NewStore(api dynamostore.API, s contract.Settings) (*dynamostore.Store, error) {
	opts := []dynamostore.Option{dynamostore.WithPartitionKey(s.TablePartitionKey), dynamostore.WithTTLAttribute(s.TableTTLAttribute)}
	if s.TableSortKey != "" {
		value := s.TableFixedKeyValue
		fixed := func(string) string { return value }
		if s.TableRecordKeyIn == contract.KeyInSort {
			opts = append(opts, dynamostore.WithKeyInSortKey(s.TableSortKey, fixed))
		} else {
			opts = append(opts, dynamostore.WithSortKey(s.TableSortKey, fixed))
		}
	}
	store := dynamostore.New(api, s.Table, opts...)
	err := store.Err()
	if err == nil && s.TableSortKey != "" && s.TableFixedKeyValue == "" {
		err = fmt.Errorf("the table's sort key %q has no value to hold", s.TableSortKey)
	}
	if err != nil {
		return nil, fmt.Errorf("the table's design (%s=%q, %s=%q, %s=%q, %s=%q, %s=%q): %w",
			contract.PartitionKeyVar, s.TablePartitionKey, contract.SortKeyVar, s.TableSortKey, contract.RecordKeyInVar, s.TableRecordKeyIn,
			contract.FixedKeyValueVar, s.TableFixedKeyValue, contract.TTLAttributeVar, s.TableTTLAttribute, err)
	}
	return store, nil
}

// pooled returns base with a pool that keeps at least conns idle
// connections, in all and to one host (the SDK's defaults are 100 and 10),
// so that a batch of conns records in flight finds its connections open at
// the next batch, and that sends a request in one write (oneWrite).
func pooled(base *awshttp.BuildableClient, conns int) aws.HTTPClient {
	return oneWrite{base.WithTransportOptions(func(t *http.Transport) {
		if t.MaxIdleConns > 0 { // 0 is no limit
			t.MaxIdleConns = max(conns, t.MaxIdleConns)
		}
		t.MaxIdleConnsPerHost = max(conns, t.MaxIdleConns, t.MaxIdleConnsPerHost)
	})}
}

func resolve(opts []Option) *options {
	o := &options{getenv: os.Getenv}
	for _, opt := range opts {
		opt(o)
	}
	if o.logger == nil {
		o.logger = outcome.NewLogger(os.Stderr, LogLevel(o.getenv))
	}
	return o
}

// LogLevelVar is the variable in which Lambda's advanced logging controls
// pass the function's application log level.
const LogLevelVar = "AWS_LAMBDA_LOG_LEVEL"

// LogLevel returns the application log level that Lambda's advanced logging
// controls set in the function's environment (LogLevelVar: TRACE, DEBUG,
// INFO, WARN, ERROR or FATAL), read through getenv; INFO when it is not
// set or not one of those. The default logger writes nothing below it, so
// that at WARN the lines of processed and duplicate records (INFO) cost
// neither their formatting nor their bytes, while every failure (WARN or
// ERROR) is still written; the metrics line carries this level, so that
// Lambda keeps it at any level.
func LogLevel(getenv func(string) string) slog.Level {
	switch strings.ToUpper(getenv(LogLevelVar)) {
	case "TRACE":
		return slog.LevelDebug - 4
	case "DEBUG":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERROR":
		return slog.LevelError
	case "FATAL":
		return levelFatal
	}
	return slog.LevelInfo
}

// levelFatal is Lambda's FATAL, the highest application log level, as a
// slog level (outcome.LevelName names it).
const levelFatal = slog.LevelError + 4

// exit logs why the handler cannot start, as one JSON line at FATAL (so
// that Lambda keeps it at any application log level), and ends the process
// with status 1.
func exit(opts []Option, err error) {
	resolve(opts).logger.LogAttrs(context.Background(), levelFatal, "init", slog.String("reason", err.Error()))
	os.Exit(1)
}
