// Package env is the configuration contract between the IdempotentConsumer
// construct and the handler it deploys.
//
// The construct configures a handler only through the environment variables
// named here, and the runtime library reads them only by these names, so the
// two halves cannot drift apart. Durations are Go duration strings ("24h",
// "90s"); counts are decimal integers; an unset or empty variable means the
// library's documented default.
package env

import (
	"fmt"
	"strconv"
	"time"
)

// Names of the environment variables, with the meaning of their values.
const (
	// Table is the name of the DynamoDB idempotency table. Required by
	// handlers that use the DynamoDB store.
	Table = "IDEMPOTENCY_TABLE"

	// Namespace prefixes every key ("<namespace>#<key>") so that several
	// consumers, or business data, can share one table. It must not contain
	// '#'. Required: the guard refuses an empty namespace, and the construct
	// always sets one.
	Namespace = "IDEMPOTENCY_NAMESPACE"

	// Window is the business window: how long a completed fact suppresses
	// duplicates. Compared by the library itself, never left to DynamoDB TTL.
	// Default: 24h.
	Window = "IDEMPOTENCY_WINDOW"

	// TTLAfterWindow is how long after the end of the business window a record
	// becomes eligible for DynamoDB TTL deletion (clean-up only). Default: 24h.
	TTLAfterWindow = "IDEMPOTENCY_TTL_AFTER_WINDOW"

	// LeaseMax caps the lease of an IN_PROGRESS reservation. The lease is the
	// invocation's deadline, capped by this value. Default: 15m.
	LeaseMax = "IDEMPOTENCY_LEASE_MAX"

	// FinishBudget is the time kept at the end of a lease to complete or
	// release the reservation: the effect's context ends this long before
	// the lease. Default: 2s.
	FinishBudget = "IDEMPOTENCY_FINISH_BUDGET"

	// CacheSize is the number of completed keys kept in the execution
	// environment's memory, so repeats skip the store. 0 disables the cache.
	// Default: 0.
	CacheSize = "IDEMPOTENCY_CACHE_SIZE"

	// PayloadIgnore is a comma-separated list of JSON fields (dotted paths
	// such as "meta.sentAt") left out of the payload hash. Default: none.
	PayloadIgnore = "IDEMPOTENCY_PAYLOAD_IGNORE"

	// KeySecret, when set, is the secret under which record keys are hashed
	// (HMAC-SHA-256), so that the table and the logs hold no business key
	// in plain text (idempotency.Config.KeySecret says what it costs). At
	// least 32 bytes, used as they are; it must not change while records
	// live. Default: none, keys are stored as they are. The construct sets
	// it, from a secret it generates in AWS Secrets Manager, when HashKeys
	// is on.
	KeySecret = "IDEMPOTENCY_KEY_SECRET"

	// Concurrency bounds how many records of one batch run at once.
	// Default: the batch size.
	Concurrency = "BATCH_CONCURRENCY"

	// MinRemaining is the least time left before the deadline for a record to
	// be started; records not started are reported failed and redelivered.
	// Default: the finishing budget plus 1s.
	MinRemaining = "BATCH_MIN_REMAINING"

	// MaxMessageBytes is the largest business message accepted, in bytes:
	// the message as published, without the SNS envelope that may carry it.
	// Larger messages are bad input. Default: 262144 (256 KiB, what an SNS
	// topic accepts by default).
	MaxMessageBytes = "BATCH_MAX_MESSAGE_BYTES"

	// Delivery says how SNS delivers into the queue: "raw", "envelope" or
	// "auto" (detect per message). Default: auto.
	Delivery = "MESSAGE_DELIVERY"

	// Consumer names the consumer in logs and as the metrics dimension.
	// Default: the Lambda function name.
	Consumer = "CONSUMER_NAME"

	// MetricsNamespace is the CloudWatch namespace of the Embedded Metric
	// Format lines. Default: "IdempotentConsumer".
	MetricsNamespace = "METRICS_NAMESPACE"
)

// Size limits of the path a message takes, which the construct and the
// handler agree on.
//
// SNS counts a message (with its attributes) against the topic's
// MaximumMessageSize, 256 KiB by default and at most 1 MiB. With raw message
// delivery the SQS body is the message. Otherwise it is an SNS envelope: a
// JSON object whose Message is the message as a JSON string, so that each
// '"' and '\\' (and each newline) of the message takes two bytes: the body
// of a message of n bytes can be 2n bytes, plus the envelope's other fields.
const (
	// MaxQueueBodyBytes is the largest SQS message body: 1 MiB. The
	// construct sets every queue's MaximumMessageSize to it, so that a queue
	// never refuses what the topic delivers.
	MaxQueueBodyBytes = 1 << 20

	// EnvelopeOverheadBytes bounds what an SNS envelope adds to its escaped
	// Message: type, ids, topic ARN, subject, timestamp, signature,
	// certificate and unsubscribe URLs, and the structure of a few message
	// attributes.
	EnvelopeOverheadBytes = 8 << 10

	// MaxEnvelopedMessageBytes is the largest message that always fits an
	// SQS body in an SNS envelope, whatever its content: (1 MiB − 8 KiB) / 2
	// = 520192 bytes. Larger messages need raw message delivery.
	MaxEnvelopedMessageBytes = (MaxQueueBodyBytes - EnvelopeOverheadBytes) / 2
)

// Duration reads the positive Go duration in the variable name through
// getenv (usually os.Getenv); 0 when it is unset or empty.
func Duration(getenv func(string) string, name string) (time.Duration, error) {
	s := getenv(name)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive Go duration such as \"24h\"", name, s)
	}
	return d, nil
}

// Int reads the non-negative decimal integer in the variable name through
// getenv; 0 when it is unset or empty.
func Int(getenv func(string) string, name string) (int, error) {
	s := getenv(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number, 0 or more", name, s)
	}
	return n, nil
}
