// Package contract names what a CDK app and a handler agree on: the
// environment variables that the constructs (IdempotentConsumer,
// IdempotentStreamConsumer, IdempotentEndpoint, IdempotentStep) write into
// a consumer function's environment and that the handler's entry point
// reads at init, the idempotency table's default key and TTL attribute,
// and the typed values of the choices a user makes (what feeds the
// consumer, what the queue's bodies are, what a DynamoDB stream consumer
// does with REMOVE records).
//
// It is the light half that both sides import, in the shape of
// database/sql/driver: it depends on nothing beyond the standard library,
// so that a CDK app links no AWS SDK and a handler links no CDK for these
// names. The rules of the settings (bounds, defaults that depend on
// other settings, the messages that refuse them) are the library's own:
// the construct applies them at synth and the handler at init.
//
// A handler deployed by other means than the constructs, or run by a
// local runner or a test, reads the same variables: NewEnv builds the
// environment of a consumer with every setting at its default, the one a
// construct writes with no other props, and Env.Getenv hands it to the
// handler (handler.WithGetenv). Every variable that is absent takes its
// default; the encoding of a value is the construct's: durations are Go
// duration strings ("24h", "1500ms"), counts decimal integers, lists
// comma-separated, booleans "true" or "false".
package contract

import "strconv"

// Version is the version of the contract that this library writes and
// reads, in VersionVar. It changes when a variable is removed or changes
// meaning, or when one is added that a handler of the previous version
// would misread by ignoring it: a handler refuses, at init, an environment
// written for another version.
const Version = 1

// The variables of the contract. Each carries one setting; a variable that
// is absent takes the setting's default. Only TableVar and NamespaceVar are
// required (and StreamRemovesVar for a DynamoDB stream's consumer, the
// webhook's secret with a provider).
const (
	// VersionVar carries Version.
	VersionVar = "IDEMPOTENT_CONSUMER_CONTRACT"
	// TableVar is the DynamoDB idempotency table's name. Required.
	TableVar = "IDEMPOTENCY_TABLE"
	// PartitionKeyVar is the name of the table's partition key attribute.
	// Default: PartitionKey.
	PartitionKeyVar = "IDEMPOTENCY_TABLE_PARTITION_KEY"
	// SortKeyVar is the name of the table's sort key attribute. Default:
	// none, a table without a sort key.
	SortKeyVar = "IDEMPOTENCY_TABLE_SORT_KEY"
	// RecordKeyInVar says which key attribute holds the record's key:
	// "partition" (the default) or "sort".
	RecordKeyInVar = "IDEMPOTENCY_TABLE_RECORD_KEY_IN"
	// FixedKeyValueVar is the value of the table's other key on every
	// record; required with a sort key.
	FixedKeyValueVar = "IDEMPOTENCY_TABLE_FIXED_KEY_VALUE"
	// TTLAttributeVar is the attribute the table's TTL is enabled on.
	// Default: TTLAttribute.
	TTLAttributeVar = "IDEMPOTENCY_TABLE_TTL_ATTRIBUTE"
	// NamespaceVar prefixes every key, "<namespace>#<key>". Required.
	NamespaceVar = "IDEMPOTENCY_NAMESPACE"
	// WindowVar is the business window, from a fact's completion.
	WindowVar = "IDEMPOTENCY_WINDOW"
	// TTLAfterWindowVar is how long after the window a record may be
	// deleted by DynamoDB's TTL.
	TTLAfterWindowVar = "IDEMPOTENCY_TTL_AFTER_WINDOW"
	// TimeoutVar is the function's timeout.
	TimeoutVar = "IDEMPOTENCY_FUNCTION_TIMEOUT"
	// LeaseMaxVar caps a reservation's lease.
	LeaseMaxVar = "IDEMPOTENCY_LEASE_MAX"
	// FinishBudgetVar is the time kept at the end of a lease to complete
	// or release it.
	FinishBudgetVar = "IDEMPOTENCY_FINISH_BUDGET"
	// CacheSizeVar is how many completed keys are kept in memory.
	CacheSizeVar = "IDEMPOTENCY_CACHE_SIZE"
	// PayloadIgnoreVar lists the JSON fields left out of the payload hash.
	PayloadIgnoreVar = "IDEMPOTENCY_PAYLOAD_IGNORE"
	// KeySecretVar is the secret under which record keys are stored as a
	// keyed hash.
	KeySecretVar = "IDEMPOTENCY_KEY_SECRET"
	// TxTablesVar lists the tables a transactional effect may write.
	TxTablesVar = "IDEMPOTENCY_TX_TABLES"
	// BatchConcurrencyVar bounds how many records of a batch run at once.
	BatchConcurrencyVar = "BATCH_CONCURRENCY"
	// MinRemainingVar is the least time left before the deadline for a
	// record to start.
	MinRemainingVar = "BATCH_MIN_REMAINING"
	// MaxMessageBytesVar is the largest business message a queue consumer
	// accepts.
	MaxMessageBytesVar = "BATCH_MAX_MESSAGE_BYTES"
	// DeliveryVar says what a queue's bodies are: a Delivery. Default:
	// Envelope.
	DeliveryVar = "MESSAGE_DELIVERY"
	// FIFOVar says the queue is a FIFO queue: "true" or "false" (the
	// default).
	FIFOVar = "QUEUE_FIFO"
	// MaxReceiveCountVar is the queue's maxReceiveCount.
	MaxReceiveCountVar = "QUEUE_MAX_RECEIVE_COUNT"
	// BackoffBaseVar is the first delay of a failed record's backoff.
	BackoffBaseVar = "BATCH_BACKOFF_BASE"
	// BackoffCapVar is the longest delay of a failed record's backoff.
	BackoffCapVar = "BATCH_BACKOFF_CAP"
	// BackoffFIFOCapVar is the longest delay of a failed record's backoff
	// on a FIFO queue.
	BackoffFIFOCapVar = "BATCH_BACKOFF_FIFO_CAP"
	// ConsumerVar names the consumer in logs and metrics. Default: the
	// Lambda function's name.
	ConsumerVar = "CONSUMER_NAME"
	// MetricsNamespaceVar is the CloudWatch namespace of the metrics.
	// Default: DefaultMetricsNamespace.
	MetricsNamespaceVar = "METRICS_NAMESPACE"
	// SourceVar says what feeds the consumer: a Source. Default:
	// SourceQueue.
	SourceVar = "CONSUMER_SOURCE"
	// StreamImagesVar says which images a DynamoDB stream consumer's
	// function gets: "new" (the default) or "new-and-old".
	StreamImagesVar = "STREAM_IMAGES"
	// StreamRemovesVar says what a DynamoDB stream consumer does with
	// REMOVE records: a Removes. Required for SourceDynamoDBStreams.
	StreamRemovesVar = "STREAM_REMOVES"
	// WebhookProviderVar is the webhook provider whose signature every
	// request to an HTTP endpoint must carry. Default: none, the client's
	// Idempotency-Key.
	WebhookProviderVar = "HTTP_WEBHOOK_PROVIDER"
	// WebhookSecretVar is the ARN of the Secrets Manager secret that holds
	// the webhook's signing secrets; required with a provider.
	WebhookSecretVar = "HTTP_WEBHOOK_SECRET_ARN"
	// ClientAttributeVar scopes an HTTP endpoint's keys to a client
	// attribute: "iam" (an endpoint's default), "claim:<name>",
	// "header:<name>" or "none" (a webhook's default).
	ClientAttributeVar = "HTTP_CLIENT_ATTRIBUTE"
	// ReplayHeadersVar lists the response headers stored and replayed to
	// duplicates beside the representation headers.
	ReplayHeadersVar = "HTTP_REPLAY_HEADERS"
	// HashHeadersVar lists the request headers in the payload hash.
	HashHeadersVar = "HTTP_HASH_HEADERS"
	// MaxRequestBytesVar is the largest request body an HTTP endpoint
	// accepts.
	MaxRequestBytesVar = "HTTP_MAX_REQUEST_BYTES"
	// StepNameVar is a step's name, part of every record key; required for
	// SourceStep.
	StepNameVar = "STEP_NAME"
)

// The design of the table that the constructs create, which a handler
// assumes when PartitionKeyVar and TTLAttributeVar are absent: a table of
// your own design for the constructs' TableDesign, or one that a consumer
// shares, takes these names unless it says otherwise.
const (
	// PartitionKey is the name of the table's partition key attribute (a
	// string), which holds "<namespace>#<key>".
	PartitionKey = "pk"
	// TTLAttribute is the attribute the table's TTL is enabled on (epoch
	// seconds).
	TTLAttribute = "ttl"
)

// DefaultMetricsNamespace is the CloudWatch namespace of the metrics when
// MetricsNamespaceVar is absent.
const DefaultMetricsNamespace = "IdempotentConsumer"

// Env is a consumer function's environment as the contract writes it:
// variable names to values.
type Env map[string]string

// NewEnv returns the environment of a consumer of table under namespace
// with every other setting at its default: what a construct writes for a
// queue consumer with no other props (the handler reads an absent variable
// as its default). A test or a local runner sets the other variables it
// needs by name: SourceVar for another source than a queue (with
// StreamRemovesVar for a DynamoDB stream), DeliveryVar for another
// delivery, WindowVar for another window.
func NewEnv(table, namespace string) Env {
	return Env{VersionVar: strconv.Itoa(Version), TableVar: table, NamespaceVar: namespace}
}

// Getenv returns the value of the variable name, or "" when it is absent:
// the function that handler.WithGetenv takes.
func (e Env) Getenv(name string) string { return e[name] }
