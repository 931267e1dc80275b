// Package build is the one place where an entry point of the runtime
// library turns the contract into what a source runs on: it reads the
// contract from the environment, refuses one of another source, builds the
// DynamoDB client, the store and the guard, the logger and the metrics
// writer, tunes the garbage collector, and starts the Lambda runtime. Each
// source package (sqsbatch, kinesis, dynamodbstream, endpoint, step) holds
// its entry points and calls Load and Run; the options users pass are
// package handler's.
package build

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

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/guardconfig"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Options are what the options of package handler, and a source's own
// (sqsbatch.WithVisibility, endpoint.WithSecrets), set. Zero fields mean
// the defaults: os.Getenv, the contract's DynamoDB table, the AWS
// configuration Lambda's environment gives, JSON lines on standard error,
// metrics on standard output.
type Options struct {
	Getenv    func(string) string
	Store     idempotency.Store
	AWSConfig *aws.Config
	Logger    *slog.Logger
	Metrics   io.Writer
	// Source holds a source's own option values, by the source's key.
	Source map[string]any
}

// Resolve applies opts over the defaults.
func Resolve[O ~func(*Options)](opts []O) *Options {
	o := &Options{Getenv: os.Getenv, Source: map[string]any{}}
	for _, opt := range opts {
		opt(o)
	}
	if o.Logger == nil {
		o.Logger = outcome.NewLogger(os.Stderr, LogLevel(o.Getenv))
	}
	if region := Region(o.Getenv); region != "" {
		// Every line says which Region wrote it: a fact delivered in two
		// Regions is logged in both.
		o.Logger = o.Logger.With(slog.String("region", region))
	}
	return o
}

// Env is what a source's entry point builds on: the contract's settings,
// the guard over the store, and the logger and metrics of its records.
type Env struct {
	Settings     contract.Settings
	Guard        *idempotency.Guard
	Logger       *slog.Logger
	Metrics      io.Writer
	MetricsLevel string
	// Region is the Region the function runs in (Region), the metrics'
	// second dimension.
	Region string
	Opts   *Options
}

// AWSConfig is the AWS configuration of the source's clients other than
// the store's (an SQS client, a Secrets Manager client): the caller's
// (handler.WithAWSConfig), the one the store was built on, or the one
// Lambda's environment gives.
func (e *Env) AWSConfig() (aws.Config, error) { return awsConfigOf(e.Opts) }

// Load reads the contract through o, refuses one of another source than
// the entry point's (source, entry), and builds the guard. For a
// transactional effect (checkTx not nil) the store must be a TxStore that
// checkTx accepts (AcceptsWrites), and it refuses writes to tables the
// contract does not declare (Settings.TxTables).
func Load(o *Options, source contract.Source, entry string, checkTx func(idempotency.TxStore) error) (*Env, error) {
	s, err := contract.Decode(o.Getenv, o.Getenv("AWS_LAMBDA_FUNCTION_NAME"))
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if err := s.CheckSource(source, entry); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	store := o.Store
	if store == nil {
		if store, err = dynamoStore(o, s); err != nil {
			return nil, err
		}
	}
	if checkTx != nil {
		if store, err = txStore(o, s, store, checkTx); err != nil {
			return nil, err
		}
	}
	guard, err := idempotency.NewGuard(store, guardconfig.Of(s))
	if err != nil {
		return nil, err
	}
	return &Env{Settings: s, Guard: guard, Logger: o.Logger, Metrics: o.Metrics, MetricsLevel: outcome.LevelName(LogLevel(o.Getenv)), Region: Region(o.Getenv), Opts: o}, nil
}

// txStore is the store of a transactional effect: a TxStore that checkTx
// accepts, refusing writes to tables the contract does not declare.
func txStore(o *Options, s contract.Settings, store idempotency.Store, checkTx func(idempotency.TxStore) error) (idempotency.Store, error) {
	txs, ok := store.(idempotency.TxStore)
	if !ok {
		return nil, fmt.Errorf("%w: %T", idempotency.ErrNoTransactions, store)
	}
	if err := checkTx(txs); err != nil {
		return nil, err
	}
	if len(s.TxTables) > 0 {
		return declareTables(txs, s.Table, s.TxTables), nil
	}
	if o.Store == nil { // a store of the caller's (a test's) is the caller's to check
		o.Logger.LogAttrs(context.Background(), slog.LevelWarn, "init",
			slog.String("consumer", s.Consumer),
			slog.String("reason", fmt.Sprintf("%s is not set, so the transactional effect's writes are not checked against the tables the function may write: a write to a table its role cannot write fails every record with AccessDenied; declare the tables with the construct's TransactionalTables prop (or set %s to their names, comma-separated)", contract.TxTablesVar, contract.TxTablesVar)))
	}
	return txs, nil
}

// Run is every entry point's start: it tunes the garbage collector
// (TuneGC), builds the handler with build and hands it to the Lambda
// runtime; it does not return. A configuration it cannot run with is
// logged as one JSON line at FATAL (so that Lambda keeps it at any
// application log level) and ends the process with status 1.
func Run[H any](o *Options, build func() (H, error)) {
	TuneGC(o.Getenv)
	h, err := build()
	if err != nil {
		o.Logger.LogAttrs(context.Background(), levelFatal, "init", slog.String("reason", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h)
}

// GCPercent is the garbage collector's target that TuneGC sets: a
// collection when the heap has grown by four times what was live after the
// last one, where Go's default (GOGC=100) is once.
const GCPercent = 400

// TuneGC sets the garbage collector for a Lambda function, reading the
// environment through getenv; every entry point (Run) calls it first. A consumer's live heap is small (a few MiB), so
// at Go's default target it collects every few MiB allocated, and every
// DynamoDB request through the AWS SDK allocates tens of KiB: measured end
// to end (bench/), collection and sweeping took about a third of the CPU
// per record. TuneGC sets the target to GCPercent, unless GOGC is set, and
// bounds the heap with a soft memory limit of three quarters of the
// function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), unless GOMEMLIMIT is
// set, so that the higher target never grows the heap past what the
// function has: near the limit the collector runs as often as it must.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	mb, err := strconv.ParseInt(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"), 10, 64)
	if getenv("GOMEMLIMIT") == "" && err == nil && mb > 0 {
		debug.SetMemoryLimit(mb << 20 / 4 * 3)
	}
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
func dynamoStore(o *Options, s contract.Settings) (idempotency.Store, error) {
	var optFns []func(*dynamodb.Options)
	cfg := o.AWSConfig
	if cfg == nil {
		loaded, err := LambdaConfig()
		if err != nil {
			return nil, fmt.Errorf("aws configuration: %w", err)
		}
		cfg = &loaded
		o.AWSConfig = cfg // the other clients' too (Env.AWSConfig)
		base, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
		if !ok || base == nil {
			base = awshttp.NewBuildableClient()
		}
		client := pooled(base, s.BatchConcurrency)
		optFns = append(optFns, func(d *dynamodb.Options) { d.HTTPClient, d.EndpointResolverV2 = client, newCachedEndpoints() })
	}
	return dynamostore.FromEnv(dynamodb.NewFromConfig(*cfg, optFns...), o.Getenv)
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

// AcceptsWrites checks at init that the store takes a transactional
// effect's writes of type W (for DynamoDB, []types.TransactWriteItem): a
// wrong concrete type is an error at init, not on every record; with W an
// interface type, such as any, the store checks each value it commits.
func AcceptsWrites[W any](store idempotency.TxStore) error {
	var zero W
	if any(zero) == nil {
		return nil // W is an interface type: the store checks each value
	}
	if err := store.AcceptsWrites(zero); err != nil {
		return fmt.Errorf("the transactional effect's writes do not fit the store: %w", err)
	}
	return nil
}
