package contract

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	pub "github.com/idempotent-consumer/idempotent-consumer/contract"
)

// Size limits of the path a message takes.
//
// SNS counts a message (with its attributes) against the topic's
// MaximumMessageSize, 256 KiB by default and at most 1 MiB. With raw message
// delivery the SQS body is the message. Otherwise it is an SNS envelope: a
// JSON object whose Message is the message as a JSON string, so that each
// '"' and '\\' (and each newline) of the message takes two bytes: the body
// of a message of n bytes can be 2n bytes, plus the envelope's other fields.
const (
	// MaxQueueBodyBytes is the largest SQS message body: 1 MiB.
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

// Size limits of an EventBridge event delivered to an SQS target.
//
// EventBridge counts a PutEvents entry (its Source, DetailType, Detail,
// Resources and Time) against its event size limit, which AWS raised from
// 256 KB to 1 MB on 29 January 2026 ("More room to build: serverless
// services now support payloads up to 1 MB", AWS Compute Blog). The event a
// rule delivers is larger than its entry: EventBridge adds the version, id,
// account, region and time, and the JSON keys of every field
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html).
// The target queue takes bodies of at most MaxQueueBodyBytes, so the detail
// that always reaches the queue is the body less those fields.
const (
	// maxEventEntryBytes is EventBridge's largest PutEvents entry: 1 MB.
	maxEventEntryBytes = 1 << 20
	// EventOverheadBytes bounds what an EventBridge event adds to its
	// detail: version, id, detail-type (at most 128 characters), source
	// (at most 256), account, time, region, a few resource ARNs and the
	// JSON keys.
	EventOverheadBytes = 8 << 10
	// MaxEventDetailBytes is the largest detail that always fits an SQS
	// body in the event an EventBridge rule delivers: 1 MiB − 8 KiB =
	// 1040384 bytes. An event with a larger detail (or more resources than
	// EventOverheadBytes counts) may be refused by the queue: the rule
	// retries it and then sends it to its dead-letter queue.
	MaxEventDetailBytes = min(maxEventEntryBytes, MaxQueueBodyBytes) - EventOverheadBytes
)

// Defaults of the backoff of failed records (Config.BackoffBase,
// BackoffCap, BackoffFIFOCap). With the default MaxReceiveCount of 5 a
// failing message comes back after its receives 1 to 4 at least 5m, 10m,
// 20m and 30m later (the floors of equal jitter), 65m in all: a
// downstream outage of an hour is ridden out before the dead-letter queue
// takes the message; at most 10m, 20m, 40m and 60m, 130m in all (its
// retry horizon, Backoff.Horizon).
const (
	DefaultBackoffBase    = 10 * time.Minute
	DefaultBackoffCap     = time.Hour
	DefaultBackoffFIFOCap = 15 * time.Minute
	// MaxBackoff is SQS's longest visibility timeout, the most
	// ChangeMessageVisibility takes (12 hours).
	MaxBackoff = 12 * time.Hour
)

// Backoff is the schedule on which a failed record comes back: capped
// exponential with equal jitter. After its n-th receive, the message is
// visible again after Delay(n, u) = c/2 + u·c/2, rounded up to a whole
// second, where c = min(Cap, Base·2^(n−1)) and u is uniform in [0, 1).
//
// Equal jitter rather than full jitter (u·c): full jitter spreads retries
// best, but it can bring a message back at once, which spends a receive
// (and a step towards the dead-letter queue) in the middle of the outage it
// should wait out; equal jitter keeps a floor of c/2, so that the floors
// alone give a horizon the construct can promise, and still spreads the
// retries of a batch that failed together over c/2. AWS's Architecture Blog
// post "Exponential Backoff And Jitter" (Marc Brooker, 2015) compares both:
// full jitter does slightly less work, equal jitter never waits little.
type Backoff struct {
	// Base is the first receive's c; zero or less: no backoff.
	Base time.Duration
	// Cap bounds c.
	Cap time.Duration
}

// Ceiling is the longest Delay after the n-th receive: c.
func (b Backoff) Ceiling(n int) time.Duration {
	if b.Base <= 0 || n < 1 {
		return 0
	}
	c := b.Base
	for i := 1; i < n && c < b.Cap; i++ {
		c *= 2
	}
	return RoundUp(min(c, b.Cap))
}

// Delay is how long after its n-th receive (ApproximateReceiveCount) a
// failed message becomes visible again, for u in [0, 1).
func (b Backoff) Delay(n int, u float64) time.Duration {
	c := b.Ceiling(n)
	return RoundUp(c/2 + time.Duration(u*float64(c/2)))
}

// RetryAfter is how long after its n-th receive a failed message comes back
// when its effect asked to be tried again after d (a provider's
// Retry-After): d rounded up to a whole second, at most Ceiling(n). The
// effect chooses within the receive's ceiling, never beyond it, so that the
// Horizon, which the contract holds shorter than the business window,
// bounds what any effect can ask: a retry hint, which a downstream sends at
// run time, cannot carry a message past the window, where the age rule
// would dead-letter it as expired without running it.
func (b Backoff) RetryAfter(n int, d time.Duration) time.Duration {
	return min(RoundUp(d), b.Ceiling(n))
}

// Horizon is the longest a message that fails every receive spends in the
// queue before its last receive: the sum of the Ceilings after its receives
// 1 to maxReceiveCount − 1 (no backoff on the last: SQS moves it to the
// dead-letter queue after the queue's visibility timeout), whatever the
// effect asks (RetryAfter).
func (b Backoff) Horizon(maxReceiveCount int) time.Duration {
	var sum time.Duration
	for n := 1; n < maxReceiveCount; n++ {
		sum += b.Ceiling(n)
	}
	return sum
}

// Floor is the least a message that fails every receive spends in the
// queue before its last receive: half the Horizon, rounded up per receive.
func (b Backoff) Floor(maxReceiveCount int) time.Duration {
	var sum time.Duration
	for n := 1; n < maxReceiveCount; n++ {
		sum += b.Delay(n, 0)
	}
	return sum
}

// RoundUp is d rounded up to a whole second, as SQS takes a visibility
// timeout.
func RoundUp(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}

// MinMessageBytes is the least Config.MaxMessageBytes: SNS's and SQS's
// least MaximumMessageSize.
const MinMessageBytes = 1024

// Defaults of Config's zero values.
const (
	// DefaultEffectTime is the least time the effect gets by default: a
	// record starts only with the guard's finishing budget plus this left.
	DefaultEffectTime      = time.Second
	DefaultMaxMessageBytes = 256 << 10
)

// DefaultMinRemaining is the default Config.MinRemaining for a guard's
// finishing budget: the budget plus DefaultEffectTime, so that a record
// starts only with at least that long for its effect.
func DefaultMinRemaining(finishBudget time.Duration) time.Duration {
	return finishBudget + DefaultEffectTime
}

const (
	// maxReceiveCount is SQS's largest maxReceiveCount.
	maxReceiveCount = 1000
	// maxMetricsNamespaceBytes is CloudWatch's longest namespace.
	maxMetricsNamespaceBytes = 255
)

// queueProblems are the rules of a queue consumer's settings: the message
// size its delivery can carry, a known delivery, SQS's redrive count, and the
// bounds of the backoff of failed records.
func (s Settings) queueProblems() []string {
	var out []string
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	switch {
	case s.MaxMessageBytes < MinMessageBytes || s.MaxMessageBytes > MaxQueueBodyBytes:
		bad("MaxMessageBytes %d is out of range; give a whole number of bytes from %d to %d (default %d)", s.MaxMessageBytes, MinMessageBytes, MaxQueueBodyBytes, DefaultMaxMessageBytes)
	case (s.Delivery == Envelope || s.Delivery == Auto) && s.MaxMessageBytes > MaxEnvelopedMessageBytes:
		bad("MaxMessageBytes %d is more than %d, the largest message that always fits the queue's 1 MiB body in an SNS envelope (JSON escaping can double a message); set RawMessageDelivery to deliver larger messages, or give at most %d",
			s.MaxMessageBytes, MaxEnvelopedMessageBytes, MaxEnvelopedMessageBytes)
	case s.Delivery == EventBridge && s.MaxMessageBytes > MaxEventDetailBytes:
		bad("MaxMessageBytes %d is more than %d, the largest event detail that always fits the queue's 1 MiB body in the event an EventBridge rule delivers (EventBridge adds the id, source, detail-type, account, time, region and resources); give at most %d",
			s.MaxMessageBytes, MaxEventDetailBytes, MaxEventDetailBytes)
	}
	switch s.Delivery {
	case Envelope, Raw, Auto, EventBridge, S3:
	default:
		bad("Delivery %q is not one of %q, %q, %q, %q or %q", s.Delivery, Envelope, Raw, Auto, EventBridge, S3)
	}
	if s.MaxReceiveCount < 0 || s.MaxReceiveCount > maxReceiveCount {
		bad("MaxReceiveCount %d is out of range: SQS takes a maxReceiveCount from 1 to %d (0 says it is unknown); give one in that range", s.MaxReceiveCount, maxReceiveCount)
	}
	return append(append(out, s.backoffBounds()...), s.backoffProblems()...)
}

// sharedProblems are the rules every batch source shares: time for the
// effect after the finishing budget, a consumer's name, a metrics
// namespace CloudWatch takes.
func (s Settings) sharedProblems() []string {
	var out []string
	if s.MinRemaining <= s.FinishBudget {
		out = append(out, fmt.Sprintf("MinRemaining %s is not more than FinishBudget %s, so a record could start with no time for its effect; give a MinRemaining above %s (default: FinishBudget + %s)",
			Format(s.MinRemaining), Format(s.FinishBudget), Format(s.FinishBudget), Format(DefaultEffectTime)))
	}
	if s.Consumer == "" {
		out = append(out, "Consumer is empty; it names the consumer in logs and metrics")
	}
	return append(out, metricsNamespaceProblems(s.MetricsNamespace)...)
}

// metricsNamespaceProblems checks a CloudWatch namespace by PutMetricData's
// rules: 1 to 255 ASCII characters, not starting with ':', and not "AWS/",
// which AWS keeps for its own.
func metricsNamespaceProblems(ns string) []string {
	var problem string
	switch {
	case ns == "":
		problem = fmt.Sprintf("MetricsNamespace is empty; give one, or leave it to its default %q", pub.DefaultMetricsNamespace)
	case len(ns) > maxMetricsNamespaceBytes:
		problem = fmt.Sprintf("MetricsNamespace of %d characters is longer than CloudWatch's %d; give a shorter one", len(ns), maxMetricsNamespaceBytes)
	case strings.IndexFunc(ns, func(r rune) bool { return r > unicode.MaxASCII || unicode.IsControl(r) }) >= 0:
		problem = fmt.Sprintf("MetricsNamespace %q holds characters other than printable ASCII, which CloudWatch refuses; give one in ASCII", ns)
	case strings.HasPrefix(ns, "AWS/"):
		problem = fmt.Sprintf("MetricsNamespace %q starts with \"AWS/\", which CloudWatch keeps for AWS's own metrics; give one of your own (for example %q)", ns, strings.TrimPrefix(ns, "AWS/"))
	case strings.HasPrefix(ns, ":"):
		problem = fmt.Sprintf("MetricsNamespace %q starts with ':', which CloudWatch refuses; remove it", ns)
	default:
		return nil
	}
	return []string{problem}
}

// backoffBounds are the bounds of the backoff of failed records: delays
// of whole seconds that ChangeMessageVisibility takes (at most MaxBackoff,
// SQS's 12 hours), a cap no shorter than the base. A BackoffBase of zero or
// less turns it off, and nothing else is judged.
func (s Settings) backoffBounds() []string {
	if s.BackoffBase <= 0 {
		return nil
	}
	var out []string
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	d := Format
	if s.BackoffBase < time.Second {
		bad("BackoffBase %s is shorter than 1s, the least visibility timeout SQS sets in whole seconds; give at least 1s (default %s), or 0 to turn the backoff off", d(s.BackoffBase), d(DefaultBackoffBase))
	}
	if s.BackoffCap < s.BackoffBase {
		bad("BackoffCap %s is shorter than BackoffBase %s; give a cap of at least %s (default %s)", d(s.BackoffCap), d(s.BackoffBase), d(s.BackoffBase), d(DefaultBackoffCap))
	}
	for _, v := range []struct {
		name string
		d    time.Duration
		def  time.Duration
	}{{"BackoffCap", s.BackoffCap, DefaultBackoffCap}, {"BackoffFIFOCap", s.BackoffFIFOCap, DefaultBackoffFIFOCap}} {
		switch {
		case v.d > MaxBackoff:
			bad("%s %s is longer than %s, the longest visibility timeout SQS's ChangeMessageVisibility takes; give at most %s (default %s)", v.name, d(v.d), d(MaxBackoff), d(MaxBackoff), d(v.def))
		case v.d < time.Second:
			bad("%s %s is shorter than 1s; give a whole number of seconds from 1s to %s (default %s)", v.name, d(v.d), d(MaxBackoff), d(v.def))
		}
	}
	return out
}

// streamProblems are the rules of a stream consumer's settings: the
// choice for REMOVE records that a DynamoDB stream needs.
func (s Settings) streamProblems() []string {
	var out []string
	switch s.StreamRemoves {
	case RemoveRun, RemoveSkip, RemoveSkipExpired:
	case "":
		if s.Source == SourceDynamoDBStreams {
			out = append(out, fmt.Sprintf("StreamRemoves is not set: a DynamoDB stream delivers a REMOVE record for each deleted item (TTL deletions too), and the consumer must say what to do with them; give %q (hand them to the function, Change.Event Remove), %q (acknowledge them without running, counted as skipped) or %q (acknowledge TTL expiries so, run a caller's deletes)", RemoveRun, RemoveSkip, RemoveSkipExpired))
		}
	default:
		out = append(out, fmt.Sprintf("StreamRemoves %q is not one of %q, %q or %q", s.StreamRemoves, RemoveRun, RemoveSkip, RemoveSkipExpired))
	}
	switch s.StreamImages {
	case ImagesNew, ImagesNewAndOld:
	default:
		out = append(out, fmt.Sprintf("StreamImages %q is not one of %q or %q", s.StreamImages, ImagesNew, ImagesNewAndOld))
	}
	return out
}
