// Package contract is the runtime contract between the IdempotentConsumer
// construct and the handler it deploys: one Settings value that describes a
// consumer's runtime settings, with their names, encoding, defaults, bounds
// and cross-field rules in this one place.
//
// The construct fills a Settings from its props (Defaults, then the props
// the user gave), refuses at synth what Validate refuses, and writes it into
// the function's environment with Encode. The handler reads it back with
// Decode, which applies the same rules, and maps it onto the guard's and the
// batch adapter's plain Go configuration (package handler does that wiring).
// A Settings value is always complete: a zero in it means zero (no cache,
// for CacheSize), never "the default"; defaults are applied once, by
// Defaults and by Decode for variables that are not set.
//
// The encoding: durations are Go duration strings ("24h", "1500ms"), counts
// decimal integers, lists comma-separated. Every variable carries the
// contract's Version in its own variable, so that a handler built from a
// library whose contract differs from the construct's says so at init.
package contract

import (
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Version is the version of the contract that this library writes and
// reads. It changes when a variable is removed or changes meaning, or when
// one is added that a handler of the previous version would misread by
// ignoring it; the construct stamps it into the environment and the handler
// refuses a different one at init. A variable whose absence means what the
// previous version did is added without a change: FIFOVar (an older handler
// that ignores it still orders a FIFO queue's records by their .fifo event
// source ARN, and a newer handler without it behaves as before).
const Version = 1

// Names of the environment variables. Only Encode and Decode read or write
// them; they are exported so that tools that show or rewrite an
// environment (the local run, the construct's check of user variables) can
// name them.
const (
	VersionVar          = "IDEMPOTENT_CONSUMER_CONTRACT"
	TableVar            = "IDEMPOTENCY_TABLE"
	NamespaceVar        = "IDEMPOTENCY_NAMESPACE"
	WindowVar           = "IDEMPOTENCY_WINDOW"
	TTLAfterWindowVar   = "IDEMPOTENCY_TTL_AFTER_WINDOW"
	TimeoutVar          = "IDEMPOTENCY_FUNCTION_TIMEOUT"
	LeaseMaxVar         = "IDEMPOTENCY_LEASE_MAX"
	FinishBudgetVar     = "IDEMPOTENCY_FINISH_BUDGET"
	CacheSizeVar        = "IDEMPOTENCY_CACHE_SIZE"
	PayloadIgnoreVar    = "IDEMPOTENCY_PAYLOAD_IGNORE"
	KeySecretVar        = "IDEMPOTENCY_KEY_SECRET"
	BatchSizeVar        = "BATCH_SIZE"
	BatchConcurrencyVar = "BATCH_CONCURRENCY"
	MinRemainingVar     = "BATCH_MIN_REMAINING"
	MaxMessageBytesVar  = "BATCH_MAX_MESSAGE_BYTES"
	DeliveryVar         = "MESSAGE_DELIVERY"
	FIFOVar             = "QUEUE_FIFO"
	ConsumerVar         = "CONSUMER_NAME"
	MetricsNamespaceVar = "METRICS_NAMESPACE"
	TxTablesVar         = "IDEMPOTENCY_TX_TABLES"
	MaxReceiveCountVar  = "QUEUE_MAX_RECEIVE_COUNT"
)

// Delivery says how SNS delivers messages into the queue.
type Delivery string

// Deliveries.
const (
	// Envelope: every body is an SNS notification envelope.
	Envelope Delivery = "envelope"
	// Raw: every body is the business message (raw message delivery).
	Raw Delivery = "raw"
	// Auto: detect an envelope per message (a queue fed both ways).
	Auto Delivery = "auto"
)

// Settings are a consumer's runtime settings. The comment of each field
// gives its variable, its default (from Defaults) and its rule (from
// Validate).
type Settings struct {
	// Table is the DynamoDB idempotency table's name (TableVar). Required.
	Table string
	// Namespace prefixes every key, "<namespace>#<key>" (NamespaceVar).
	// Required; no '#' and no control characters.
	Namespace string
	// Window is the business window, from a fact's completion (WindowVar).
	// Default 24h; at least LeaseMax.
	Window time.Duration
	// TTLAfterWindow is how long after the window a record becomes
	// eligible for DynamoDB TTL deletion (TTLAfterWindowVar). Default 24h;
	// at least 1s.
	TTLAfterWindow time.Duration
	// Timeout is the function's timeout (TimeoutVar). Default (for a
	// handler not deployed by the construct, which always sets it) 15m,
	// Lambda's longest; whole seconds from 1s to 15m.
	Timeout time.Duration
	// LeaseMax caps a reservation's lease (LeaseMaxVar). Default Timeout;
	// at least 1s, at most Timeout, longer than FinishBudget.
	LeaseMax time.Duration
	// FinishBudget is kept at the end of a lease to complete or release
	// (FinishBudgetVar). Default idempotency.DefaultFinishBudget (2s);
	// positive.
	FinishBudget time.Duration
	// CacheSize is how many completed keys are kept in memory
	// (CacheSizeVar). Default 0, no cache; at most idempotency.MaxCacheSize.
	CacheSize int
	// PayloadIgnore lists JSON fields left out of the payload hash
	// (PayloadIgnoreVar). Default none; no empty names, no ','.
	PayloadIgnore []string
	// KeySecret hashes record keys when set (KeySecretVar). Default none;
	// at least idempotency.MinKeySecretBytes bytes.
	KeySecret string
	// BatchSize is the event source's largest batch (BatchSizeVar). Default
	// 10; from 1 to 10,000.
	BatchSize int
	// BatchConcurrency bounds how many records of a batch run at once
	// (BatchConcurrencyVar). Default BatchSize, at most
	// DefaultMaxConcurrency; from 1 to MaxBatchConcurrency.
	BatchConcurrency int
	// MinRemaining is the least time left for a record to start
	// (MinRemainingVar). Default DefaultMinRemaining(FinishBudget); more
	// than FinishBudget, less than Timeout.
	MinRemaining time.Duration
	// MaxMessageBytes is the largest business message accepted
	// (MaxMessageBytesVar). Default 262,144; from MinMessageBytes to
	// sqsbatch.MaxQueueBodyBytes (1 MiB), and at most
	// sqsbatch.MaxEnvelopedMessageBytes unless Delivery is Raw.
	MaxMessageBytes int
	// Delivery says how bodies arrive (DeliveryVar). Default Envelope.
	Delivery Delivery
	// FIFO says the queue is a FIFO queue (FIFOVar, "true" or "false"):
	// records run in order per message group, whatever their event source
	// ARN says (see sqsbatch.Config.FIFO). Default false.
	FIFO bool
	// Consumer names the consumer in logs and metrics (ConsumerVar).
	// Default: the Lambda function's name; required.
	Consumer string
	// MetricsNamespace is the CloudWatch namespace of the metrics
	// (MetricsNamespaceVar). Default sqsbatch.DefaultMetricsNamespace;
	// required.
	MetricsNamespace string
	// TxTables are the names of the tables a transactional effect may
	// write beside the record (TxTablesVar, comma-separated): the tables
	// the construct granted the function (TransactionalTables,
	// GrantTransactionalWrites). Default none.
	TxTables []string
	// MaxReceiveCount is the queue's maxReceiveCount, how many receives
	// of a message its redrive policy allows before the dead-letter queue
	// (MaxReceiveCountVar). Default 0, not known; written only when known.
	MaxReceiveCount int
}

// Defaults and bounds that are the contract's own (the guard's and the
// adapter's are theirs).
const (
	DefaultWindow         = 24 * time.Hour
	DefaultTTLAfterWindow = 24 * time.Hour
	// DefaultTimeout is the Timeout of a handler whose environment does not
	// say it: Lambda's longest.
	DefaultTimeout   = 15 * time.Minute
	MaxTimeout       = 15 * time.Minute
	DefaultBatchSize = 10
	MaxBatchSize     = 10_000
	// DefaultMaxConcurrency caps the default BatchConcurrency: a batch of
	// thousands of records (with a batching window) runs this many at once,
	// not thousands of requests, within Lambda's 1,024 file descriptors.
	DefaultMaxConcurrency = 32
	// MaxBatchConcurrency is the largest BatchConcurrency accepted.
	MaxBatchConcurrency = 256
	// MinMessageBytes is the least MaxMessageBytes: SNS's and SQS's least
	// MaximumMessageSize.
	MinMessageBytes = 1024
)

// Defaults returns the default Settings of a consumer whose function has
// the given timeout and event source the given batch size; Table,
// Namespace and Consumer are left empty, for the caller to set.
func Defaults(timeout time.Duration, batchSize int) Settings {
	return Settings{
		Window:           DefaultWindow,
		TTLAfterWindow:   DefaultTTLAfterWindow,
		Timeout:          timeout,
		LeaseMax:         timeout,
		FinishBudget:     idempotency.DefaultFinishBudget,
		BatchSize:        batchSize,
		BatchConcurrency: DefaultConcurrency(batchSize),
		MinRemaining:     DefaultMinRemaining(idempotency.DefaultFinishBudget),
		MaxMessageBytes:  sqsbatch.DefaultMaxMessageBytes,
		Delivery:         Envelope,
		MetricsNamespace: sqsbatch.DefaultMetricsNamespace,
	}
}

// DefaultConcurrency is the default BatchConcurrency for a batch size: the
// whole batch at once, up to DefaultMaxConcurrency.
func DefaultConcurrency(batchSize int) int {
	return max(1, min(batchSize, DefaultMaxConcurrency))
}

// DefaultMinRemaining is the default MinRemaining for a finishing budget:
// the budget plus sqsbatch.DefaultEffectTime, so that a record starts only
// with at least that long for its effect.
func DefaultMinRemaining(finishBudget time.Duration) time.Duration {
	return finishBudget + sqsbatch.DefaultEffectTime
}
