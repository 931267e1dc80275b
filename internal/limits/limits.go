// Package limits holds the guard's defaults and bounds: the values of
// idempotency.Config's zero fields, the largest values it accepts, and the
// DynamoDB key, item and transaction sizes they follow from; and the other
// services' limits that a rule of the family follows (DESIGN.md, "The
// services' limits", lists every limit and where it is enforced). The guard
// and the store apply them, and the runtime contract and the constructs
// check a deployment against them; each is written once, here, in a leaf
// that imports nothing, so that a CDK app links no runtime code for a
// number.
//
// Users read them in idempotency.Config's documentation, which gives every
// value; they are not part of the library's API.
package limits

import (
	"strings"
	"time"
	"unicode"
)

// Defaults of idempotency.Config's zero values.
const (
	// DefaultWindow is the default business window: 24h.
	DefaultWindow = 24 * time.Hour
	// DefaultTTLAfterWindow is the default time from the end of the window
	// to the record's TTL: 24h.
	DefaultTTLAfterWindow = 24 * time.Hour
	// DefaultLeaseMax is the default cap on a reservation's lease: 15m,
	// Lambda's longest timeout.
	DefaultLeaseMax = 15 * time.Minute
	// DefaultFinishBudget is the default time kept at the end of a lease to
	// complete or release its reservation: 2s.
	DefaultFinishBudget = 2 * time.Second
	// DefaultMaxResultBytes is the largest result the guard stores with a
	// completed record and returns to duplicates, unless
	// Config.MaxResultBytes says otherwise: 4,096 bytes. Results are meant
	// to be small (a receipt id, a resource id), so that records stay cheap
	// to write and read, and the completed-key cache keeps no larger one.
	DefaultMaxResultBytes = 4096
)

// Bounds of idempotency.Config.
const (
	// LargestResultBytes bounds Config.MaxResultBytes: 350,000 bytes, what
	// a DynamoDB item (400 KB with its attribute names) holds beside the
	// record's other attributes (a key of at most MaxKeyBytes, the hashes,
	// the owner, the times). Writing or reading a record costs a capacity
	// unit per KB of it: an HTTP endpoint's stored response is the use.
	LargestResultBytes = 350_000
	// MaxCacheSize is the largest Config.CacheSize accepted: 1,000,000
	// keys. The cache also evicts to stay within 64 MiB, whatever its size.
	MaxCacheSize = 1_000_000
	// CacheLifetime is how long an execution environment answers a fact
	// from its cache of completed keys before it asks the store again: 1m
	// (within the fact's business window; the cache compares whole
	// seconds, as the window does, so up to a second more). It bounds the
	// time within which a record deleted by an operator (idemctl forget) is
	// forgotten by every warm environment, so that the fact's next delivery
	// runs its effect. A repeat of a hot key costs one store request per
	// environment and lifetime.
	CacheLifetime = time.Minute
	// MinKeySecretBytes is the shortest Config.KeySecret: 32 bytes, the
	// size of an HMAC-SHA-256 output.
	MinKeySecretBytes = 32
	// ClockSkewMargin is taken off the business window before the age of a
	// fact's message (Fact.Sent) is compared with it: 1s. It covers the
	// skew between the clock of the service that stamped the message (SNS,
	// SQS) and the clocks of the functions that reserve the fact
	// (milliseconds on AWS, whose hosts keep time with the Amazon Time Sync
	// Service), and it is the least margin by which an operator's forget
	// must follow the end of a lease.
	ClockSkewMargin = time.Second
)

// How the DynamoDB store answers ReplicatedWriteConflictException, which a
// multi-Region strongly consistent (MRSC) global table returns for a write
// to an item that a request in another Region is modifying: the request was
// rejected, not applied, and may be sent again; the Go SDK's standard
// retryer does not retry it (DESIGN.md, "Two Regions: the runtime"). The
// store sends the write again after a backoff with full jitter (a random
// wait up to min(ConflictBackoffCap, ConflictBackoffBase·2^n)), at most
// ConflictAttempts times in all, and never past the deadline of the write's
// context: the reserve's ends the finishing budget before the lease, and a
// complete's or release's is the finishing budget itself. The waits' caps
// add up to 1.775s, within the default finishing budget of 2s.
const (
	// ConflictAttempts is the most times one write is sent while another
	// Region's request conflicts: 8.
	ConflictAttempts = 8
	// ConflictBackoffBase is the first retry's cap: 25ms, the base delay
	// the SDK's DynamoDB client gives its own retries.
	ConflictBackoffBase = 25 * time.Millisecond
	// ConflictBackoffCap bounds every wait: 500ms.
	ConflictBackoffCap = 500 * time.Millisecond
)

// ConflictWaitCap is the most the DynamoDB store waits before the retry
// that follows attempt (1 for the first) of a write answered
// ReplicatedWriteConflictException: min(ConflictBackoffCap,
// ConflictBackoffBase·2^(attempt-1)). The wait itself is drawn at random
// up to it (full jitter). The store applies it, and the chaos simulation's
// model of the store's retry on its virtual clock.
func ConflictWaitCap(attempt int) time.Duration {
	if shift := attempt - 1; shift < 16 {
		return min(ConflictBackoffCap, ConflictBackoffBase<<shift)
	}
	return ConflictBackoffCap
}

// The sweeper's bounds (package sweep): on a table without TTL (a
// multi-Region strongly consistent global table supports none), it deletes
// the records whose TTL attribute is past, with a bounded amount of work per
// invocation (DESIGN.md, "Records leave the table without TTL: the sweeper").
const (
	// SweepSegments is how many parallel-scan segments the table is split
	// into: 16. A run starts at a random segment and walks them in turn,
	// so that a table too large to sweep in one run is still swept in full
	// over several, as long as one segment fits a run.
	SweepSegments = 16
	// SweepPageSize is how many items one Scan page reads (its Limit): 250.
	SweepPageSize = 250
	// SweepConcurrency is how many conditional deletes are in flight at
	// once: 16.
	SweepConcurrency = 16
	// SweepTimeReserve is the time a run keeps before its deadline: it
	// starts no page with less left, so that it returns (and logs what it
	// did, and where it stopped) before Lambda ends it: 10s.
	SweepTimeReserve = 10 * time.Second
)

// DynamoDB's key sizes, which keys and namespaces must respect.
const (
	// MaxKeyBytes is DynamoDB's limit on a partition key: 2,048 bytes. The
	// namespaced key ("<namespace>#<key>") must respect it.
	MaxKeyBytes = 2048
	// MaxSortKeyBytes is DynamoDB's limit on a sort key: 1,024 bytes.
	MaxSortKeyBytes = 1024
	// MaxNamespaceBytes is the longest Config.Namespace, in bytes: half of
	// MaxKeyBytes (1,024), so that every namespace leaves at least 1,023
	// bytes for the business key after "<namespace>#" (and a hashed key, 43
	// bytes, always fits).
	MaxNamespaceBytes = MaxKeyBytes / 2
)

// DynamoDB's item and transaction bounds, which the store's records and
// transactional writes must respect
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html,
// where 1 KB is 1,024 bytes;
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
const (
	// MaxItemBytes is DynamoDB's largest item: 400 KB (409,600 bytes), its
	// attribute names included. A record with the longest key and a
	// result of LargestResultBytes fits it.
	MaxItemBytes = 400 << 10
	// MaxTxActions is the most actions one TransactWriteItems takes: 100.
	MaxTxActions = 100
	// MaxTxBytes bounds the aggregate size of the items of one
	// TransactWriteItems: 4 MB (4,194,304 bytes).
	MaxTxBytes = 4 << 20
)

// How long an SQS queue keeps a message (MessageRetentionPeriod:
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html).
const (
	// MinQueueRetention is SQS's shortest retention: 60 seconds.
	MinQueueRetention = time.Minute
	// DefaultQueueRetention is the retention of a queue that sets none: 4
	// days.
	DefaultQueueRetention = 4 * 24 * time.Hour
	// MaxQueueRetention is SQS's longest retention: 14 days.
	MaxQueueRetention = 14 * 24 * time.Hour
)

// How long the streams a stream consumer reads keep a record
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html,
// https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html):
// Lambda's MaxRecordAge must end before the stream drops the record.
const (
	// DynamoDBStreamRetention is how long a DynamoDB stream keeps a
	// record: 24 hours.
	DynamoDBStreamRetention = 24 * time.Hour
	// KinesisDefaultRetention is a Kinesis data stream's retention when it
	// sets none: 24 hours.
	KinesisDefaultRetention = 24 * time.Hour
	// KinesisMaxRetention is a Kinesis data stream's longest retention:
	// 365 days (8,760 hours).
	KinesisMaxRetention = 8760 * time.Hour
)

// NamespaceWildcards are the characters a namespace may not hold besides
// '#': the wildcards of IAM's StringLike, in which the construct scopes a
// consumer's access to the keys "<namespace>#*" of a shared table.
const NamespaceWildcards = "*?"

// NamespaceAllows reports whether a namespace may hold r: not '#', the
// separator between namespace and key, nor '*' or '?', wildcards in the IAM
// condition that scopes a consumer to its keys, nor a control character.
// It is the rule idempotency.Config.Problems applies to each character of a
// namespace (a namespace must also be valid UTF-8, not empty and not too
// long): a default derived from a name (the construct's id) drops the
// characters it refuses, with strings.Map.
func NamespaceAllows(r rune) bool {
	return r != '#' && !strings.ContainsRune(NamespaceWildcards, r) && !unicode.IsControl(r)
}
