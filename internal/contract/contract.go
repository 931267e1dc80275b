// Package contract is the runtime contract between the IdempotentConsumer
// construct and the handler it deploys: one Settings value that describes a
// consumer's runtime settings, with their names, encoding, defaults, bounds
// and cross-field rules in this one place.
//
// Every setting is one entry of one list (Fields, in fields.go): its
// variable, encoding, default, an example and the construct prop that sets
// it. Encode, Decode, Names, Defaults and the construct's mapping of props
// to variables are derived from that list, so that a new setting is a field
// of Settings and one entry. The rules across settings are code, in
// Problems, built on the guard's own rules (package guardrules, which
// idempotency.Config.Problems applies too).
//
// The construct fills a Settings from its props (Defaults, then the props
// the user gave), refuses at synth what Validate refuses, and writes it into
// the function's environment with Encode. The handler reads it back with
// Decode, which applies the same rules, and maps it onto the guard's and the
// sources' plain Go configuration (guardconfig.Of, and each source's own
// mapping of its part). The names and values that a user's code needs (the
// variables, the table's defaults, the typed choices) are the public
// package contract's (public.go); this package imports no package of the
// runtime (lambda/) or of the constructs.
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

	"github.com/idempotent-consumer/idempotent-consumer/internal/guardrules"
)

// Settings are a consumer's runtime settings. Each field is one entry of
// Fields, which gives its variable, encoding, default and the construct
// prop that sets it; the field's comment gives its rule (from Problems).
type Settings struct {
	// Table is the DynamoDB idempotency table's name. Required.
	Table string
	// TablePartitionKey is the name of the table's partition key attribute
	// (a string): schema.Key ("pk") for the table the construct creates, the
	// table's own on a shared table of the app's design. 1 to 255 bytes, not
	// an attribute of the record (schema.Taken), nor the sort key or the TTL
	// attribute.
	TablePartitionKey string
	// TableSortKey is the name of the table's sort key attribute (a
	// string), or empty for a table without one (the construct's). The same
	// rules as TablePartitionKey.
	TableSortKey string
	// TableRecordKeyIn says which key attribute holds the record's key
	// ("<namespace>#<key>"): KeyInPartition (the default; IAM scopes the
	// consumer to "<namespace>#*") or KeyInSort (the record key in the sort
	// key, under the partition value TableFixedKeyValue; IAM can scope the
	// consumer to that partition value only). KeyInSort needs a
	// TableSortKey.
	TableRecordKeyIn KeyPlace
	// TableFixedKeyValue is the value of the table's other key on every
	// record of the consumer: the sort key's value (KeyInPartition) or the
	// partition key's (KeyInSort). Required with a TableSortKey, and only
	// with one; valid UTF-8, at most 1,024 bytes as a sort key value, 2,048
	// as a partition key value (DynamoDB's bounds).
	TableFixedKeyValue string
	// TableTTLAttribute is the attribute the table's TTL is enabled on
	// (epoch seconds): schema.TTL ("ttl") for the table the construct
	// creates. The same rules as TablePartitionKey.
	TableTTLAttribute string
	// Namespace prefixes every key, "<namespace>#<key>". Required; valid
	// UTF-8 of at most limits.MaxNamespaceBytes (1,024) bytes, so that
	// keys fit DynamoDB's 2,048-byte partition key; no '#' (the
	// separator), no '*' or '?' (wildcards in the IAM condition
	// "<namespace>#*" on a shared table), no control characters.
	Namespace string
	// Timeout is the function's timeout: whole seconds from 1s to 15m, long
	// enough for a record to start (more than MinRemaining).
	Timeout time.Duration
	// Window is the business window, from a fact's completion: at least
	// LeaseMax.
	Window time.Duration
	// TTLAfterWindow is how long after the window a record becomes
	// eligible for DynamoDB TTL deletion: at least 1s.
	TTLAfterWindow time.Duration
	// LeaseMax caps a reservation's lease: at least 1s, at most Timeout,
	// longer than FinishBudget.
	LeaseMax time.Duration
	// FinishBudget is kept at the end of a lease to complete or release:
	// positive.
	FinishBudget time.Duration
	// MinRemaining is the least time left for a record to start: more than
	// FinishBudget, less than Timeout.
	MinRemaining time.Duration
	// CacheSize is how many completed keys are kept in memory: from 0 (no
	// cache) to limits.MaxCacheSize.
	CacheSize int
	// PayloadIgnore lists JSON fields left out of the payload hash: no
	// empty names, no ','.
	PayloadIgnore []string
	// KeySecret hashes record keys when set: at least
	// limits.MinKeySecretBytes bytes.
	KeySecret string
	// TxTables are the tables a transactional effect may write: the handler
	// refuses, before any request, a transactional write to another table
	// (a store error that fails the invocation), Table too unless it is
	// listed (its records are the store's; the effect's writes to its other
	// items need the grant that declaring it gives). Empty
	// (the variable not set, as for a handler deployed by other means, or
	// set empty): no table is checked, and a transactional handler on the
	// DynamoDB store logs a warning at init. No empty names, no ','.
	TxTables []string
	// BatchConcurrency bounds how many records of a batch run at once:
	// from 1 to MaxBatchConcurrency.
	BatchConcurrency int
	// MaxMessageBytes is the largest business message accepted: from
	// contract.MinMessageBytes to contract.MaxQueueBodyBytes (1 MiB), at most
	// contract.MaxEnvelopedMessageBytes with SNS envelopes (Envelope, Auto)
	// and contract.MaxEventDetailBytes for an EventBridge event's detail.
	MaxMessageBytes int
	// Source says what feeds the consumer: SourceQueue (the default),
	// SourceKinesis, SourceDynamoDBStreams or SourceHTTP. Each entry point
	// refuses a contract of another source at init (CheckSource). The
	// settings that only a queue consumer reads (MaxMessageBytes, Delivery,
	// FIFO, MaxReceiveCount) are neither written nor judged for a stream.
	Source Source
	// StreamImages says which images a DynamoDB stream consumer's function
	// gets: ImagesNew (the default) or ImagesNewAndOld. Other sources do
	// not read it.
	StreamImages Images
	// StreamRemoves says what a DynamoDB stream consumer does with REMOVE
	// records: contract.RemoveRun, RemoveSkip or RemoveSkipExpired;
	// required with SourceDynamoDBStreams, not read by other sources.
	StreamRemoves Removes
	// Delivery says what the queue's bodies are, from the consumer's
	// source: contract.Envelope (SNS notifications), Raw (raw SNS delivery,
	// or producers that send to the queue directly), Auto, EventBridge
	// (events of an EventBridge rule) or S3 (S3 event notifications).
	Delivery Delivery
	// FIFO says the queue is a FIFO queue: records run in order per message
	// group, whatever their event source ARN says (see
	// sqsbatch.Config.FIFO).
	FIFO bool
	// MaxReceiveCount is the queue's maxReceiveCount, its redrive count
	// (see sqsbatch.Config.MaxReceiveCount): from 1 to 1,000, or 0 when it
	// is unknown (a queue the construct imports without MaxReceiveCount).
	MaxReceiveCount int
	// BackoffBase starts the backoff of a queue's failed records
	// (contract.Backoff: capped exponential with equal jitter, from the
	// message's receive count): 0 turns it off (a failed record comes back
	// after the queue's visibility timeout), else at least 1s. The retry
	// horizon (Backoff.Horizon of MaxReceiveCount) must be shorter than
	// Window.
	BackoffBase time.Duration
	// BackoffCap bounds each delay of the backoff: at least BackoffBase, at
	// most contract.MaxBackoff (12h, SQS's longest visibility timeout).
	BackoffCap time.Duration
	// BackoffFIFOCap bounds each delay on a FIFO queue, where a failed
	// message holds its group: 1s to contract.MaxBackoff.
	BackoffFIFOCap time.Duration
	// Consumer names the consumer in logs and metrics. Required.
	Consumer string
	// MetricsNamespace is the CloudWatch namespace of the metrics: 1 to
	// 255 ASCII characters, neither starting with "AWS/" (AWS's own) nor
	// with ':' (PutMetricData's rules).
	MetricsNamespace string
	// WebhookProvider is the webhook provider of an HTTP endpoint
	// (SourceHTTP) whose signature every request must carry: one of
	// contract.Providers, or empty for the client's Idempotency-Key. With a
	// provider, WebhookSecret is required, and the Window must outlast the
	// provider's redelivery period (ProviderWindow).
	WebhookProvider string
	// WebhookSecret is the ARN of the Secrets Manager secret that holds
	// the provider's signing secrets (one, or a JSON array of them during a
	// rotation), which the handler reads at init: never the secret itself.
	WebhookSecret string
	// ClientAttribute scopes an HTTP endpoint's keys to a client attribute:
	// "iam", "claim:<name>" or "header:<name>" (read by lambda/endpoint), or
	// "none" (contract.ClientNone) for keys shared by every client. Default:
	// "iam" for an endpoint, "none" for a webhook.
	ClientAttribute string
	// ReplayHeaders are the response headers stored and replayed beside
	// the representation headers (Content-Type, Content-Encoding, Content-Language,
	// Location, Content-Location): valid
	// header names; default none.
	ReplayHeaders []string
	// HashHeaders are the request headers in the payload hash: valid header
	// names; default none.
	HashHeaders []string
	// MaxRequestBytes is the largest request body an HTTP endpoint
	// accepts: 1 to MaxRequestBytes; default contract.DefaultMaxRequestBytes.
	MaxRequestBytes int
	// StepName is a step's name (SourceStep), part of every record key:
	// required for a step, StepNameProblem's rule.
	StepName string
}

// KeyPlace says which of the table's key attributes holds the record's key
// (Settings.TableRecordKeyIn).
type KeyPlace string

// The places of the record's key.
const (
	// KeyInPartition: the record key is the partition key's value, and the
	// sort key, if any, holds TableFixedKeyValue.
	KeyInPartition KeyPlace = "partition"
	// KeyInSort: the record key is the sort key's value, under the
	// partition key value TableFixedKeyValue (the layout of the most used
	// peer library).
	KeyInSort KeyPlace = "sort"
)

// Defaults and bounds that are the contract's own (the guard's and the
// adapter's are theirs, in packages idempotency and sqsbatch).
const (
	// defaultTimeout is the Timeout of a handler whose environment does not
	// say it: Lambda's longest.
	defaultTimeout = 15 * time.Minute
	// maxTimeout is Lambda's longest timeout.
	maxTimeout = 15 * time.Minute
	// DefaultMaxConcurrency caps the default BatchConcurrency: a batch of
	// thousands of records (with a batching window) runs this many at once,
	// not thousands of requests, within Lambda's 1,024 file descriptors.
	// It is the default of a handler whose environment does not say it.
	DefaultMaxConcurrency = 32
	// MaxBatchConcurrency is the largest BatchConcurrency accepted.
	MaxBatchConcurrency = 256
	// DefaultMaxReceiveCount is the default MaxReceiveCount: the
	// construct's redrive count.
	DefaultMaxReceiveCount = 5
)

// Defaults returns the default Settings of a consumer whose function has
// the given timeout: every field at the default its entry of Fields gives,
// Table, Namespace and Consumer empty, for the caller to set. The default
// BatchConcurrency is DefaultMaxConcurrency; the construct sets it from its
// event source's batch size (DefaultConcurrency).
func Defaults(timeout time.Duration) Settings {
	return Fill(func(f Field) (any, bool) { return timeout, f.Var == TimeoutVar })
}

// DefaultConcurrency is the default BatchConcurrency for an event source's
// batch size: the whole batch at once, up to DefaultMaxConcurrency.
func DefaultConcurrency(batchSize int) int {
	return max(1, min(batchSize, DefaultMaxConcurrency))
}

// guardRules are the guard's settings of s, which its rules judge
// (guardrules, idempotency.Config.Problems): the fields that
// guardconfig.Of maps onto idempotency.Config. MaxResultBytes is left to
// its default: an adapter whose results are its answers (httpkey, step)
// gives its guard the bound it needs itself.
func (s Settings) guardRules() guardrules.Settings {
	return guardrules.Settings{
		Namespace:      s.Namespace,
		Window:         s.Window,
		TTLAfterWindow: s.TTLAfterWindow,
		LeaseMax:       s.LeaseMax,
		FinishBudget:   s.FinishBudget,
		CacheSize:      s.CacheSize,
		PayloadIgnore:  s.PayloadIgnore,
		KeySecretBytes: len(s.KeySecret),
	}
}
