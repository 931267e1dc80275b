// Package ops is the operator command of an idempotent consumer: it finds a
// consumer's table, namespace, table design, queue and dead-letter queue,
// and shows a fact's record, forgets one (a conditional delete, audited),
// redrives the dead-letter queue and counts the outcomes of a period.
//
// The command is idemctl (ops/cmd/idemctl), which knows the consumer's
// rules for keys (the guard's Key, hashed with the consumer's secret) but
// not its key function: give it a business key. To show or forget a fact
// by its message, and to have the redrive's dry run judge each message,
// build the command with the consumer's own key function, in a main
// package of the consumer's module:
//
//	func main() { os.Exit(ops.Main(os.Args[1:], ops.WithKey(orders.Key))) }
//
// The AWS clients (DynamoDB, SQS, Lambda, Secrets Manager, CloudWatch,
// STS) come from the SDK's default configuration (credentials, region),
// with --endpoint-url for an emulator. They live in this module only, so
// that the library module's graph stays what a handler needs.
package ops

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Option changes how Main runs.
type Option func(*options)

type options struct {
	inspector func(getenv func(string) string, store idempotency.Store, d contract.Delivery) (inspectFunc, error)
	awsConfig *aws.Config
	stdout    io.Writer
	stderr    io.Writer
	now       func() time.Time
}

// inspectFunc returns the facts the consumer's handler would judge for a
// message (sqsbatch.Handler.Inspect): one, or an S3 notification's, one
// per record.
type inspectFunc func(rec *events.SQSMessage) ([]idempotency.Fact, error)

// WithKey gives the command the consumer's own key function, with the type
// of its messages: show and forget then take a message (--body, --file)
// as well as a business key, and the redrive's dry run says per message
// what the handler will do with it. Messages are read exactly as the
// consumer's handler reads them (its Inspect), built from the consumer's
// contract by its source's entry point: an SNS envelope or a raw body
// decoded into T (sqsbatch), an EventBridge event whose detail is T
// (eventbridge: key reads the detail), or an S3 notification's records
// (s3event: T must be s3event.Object).
func WithKey[T any](key handler.KeyFunc[T]) Option {
	return func(o *options) {
		o.inspector = func(getenv func(string) string, store idempotency.Store, d contract.Delivery) (inspectFunc, error) {
			opts := []handler.Option{handler.WithGetenv(getenv), handler.WithStore(store),
				handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard)}
			switch d {
			case contract.EventBridge:
				h, err := eventbridge.FromEnv(func(e eventbridge.Event[T]) (string, error) { return key(e.Detail) }, nil, opts...)
				return inspectOf(h, err)
			case contract.S3:
				k, ok := any(key).(handler.KeyFunc[s3event.Object])
				if !ok {
					return nil, fmt.Errorf("the consumer's delivery is %q: give ops.WithKey a key function over s3event.Object (s3event.ObjectKey, or your own)", d)
				}
				h, err := s3event.FromEnv(k, nil, opts...)
				return inspectOf(h, err)
			}
			h, err := sqsbatch.FromEnv(key, nil, opts...)
			return inspectOf(h, err)
		}
	}
}

// inspectOf is h's Inspect, or err.
func inspectOf[T any](h *sqsbatch.Handler[T], err error) (inspectFunc, error) {
	if err != nil {
		return nil, err
	}
	return h.Inspect, nil
}

// withAWSConfig makes the clients from cfg instead of the SDK's default
// configuration (config.LoadDefaultConfig).
func withAWSConfig(cfg aws.Config) Option {
	return func(o *options) { o.awsConfig = &cfg }
}

// withOutput writes the command's output to stdout and its errors and
// progress to stderr, instead of the process's.
func withOutput(stdout, stderr io.Writer) Option {
	return func(o *options) { o.stdout, o.stderr = stdout, stderr }
}

// Exit statuses of Main.
const (
	// exitOK: done.
	exitOK = 0
	// exitRefused: the command refused to change something (forget of a
	// live lease, a redrive while a move task runs): nothing changed.
	exitRefused = 1
	// exitUsage: bad input (an unknown consumer, a table without the
	// layout, a key the consumer's rules refuse, a bad flag): nothing
	// changed.
	exitUsage = 2
)

// errRefused marks an error of a command that refused to change anything.
var errRefused = errors.New("refused")

// usage is the command's help.
const usage = `idemctl: operate an idempotent consumer.

Usage:
  idemctl show     [flags] KEY | --body JSON | --file PATH
  idemctl forget   [flags] --reason TEXT [--dry-run] [--margin 30s] KEY | --body JSON | --file PATH
  idemctl redrive  [flags] [--dry-run] [--method move|copy] [--rate N] [--max N]
  idemctl redrive  [flags] --replay-expired --reason TEXT [--message-id ID]... [--max N]
  idemctl stats    [flags] [--since 24h]

The consumer: --stack NAME [--consumer PATH] (the stack's function whose
environment holds the contract), or --function NAME (its environment is
the contract; its event source is the queue, whose redrive policy names
the DLQ), or --table and
--namespace (and --queue-url, --dlq-url, --consumer, --env VAR=VALUE for
the rest of the contract). Run "idemctl COMMAND -h" for every flag.
`

// Main runs the command with args (without the program's name) and returns
// the process's exit status: exitOK, exitRefused or exitUsage.
func Main(args []string, opts ...Option) int {
	o := &options{stdout: os.Stdout, stderr: os.Stderr, now: time.Now}
	for _, opt := range opts {
		opt(o)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(o.stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	commands := map[string]func(context.Context, *options, []string) error{
		"show": runShow, "forget": runForget, "redrive": runRedrive, "stats": runStats,
	}
	run, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(o.stderr, "idemctl: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	err := run(context.Background(), o, args[1:])
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errRefused):
		fmt.Fprintf(o.stderr, "idemctl %s: %v\n", args[0], err)
		return exitRefused
	}
	fmt.Fprintf(o.stderr, "idemctl %s: %v\n", args[0], err)
	return exitUsage
}

// envFlag collects --env VAR=VALUE.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want VAR=VALUE, a variable of the contract (IDEMPOTENCY_TABLE_PARTITION_KEY=PK)", v)
	}
	e[name] = value
	return nil
}
