package sqsbatch

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/format"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// MinMessageBytes is the least Config.MaxMessageBytes: SNS's and SQS's
// least MaximumMessageSize.
const MinMessageBytes = 1024

const (
	// maxReceiveCount is SQS's largest maxReceiveCount.
	maxReceiveCount = 1000
	// maxMetricsNamespaceBytes is CloudWatch's longest namespace.
	maxMetricsNamespaceBytes = 255
)

// Problems returns every rule that c breaks, for a guard whose finishing
// budget is finishBudget, one sentence each that names the setting, the
// value given, the rule and the fix; none when c is valid. It checks the
// fields as they are (a zero MaxMessageBytes is out of range), so call it
// on a complete Config: package contract does, so that the construct (at
// synth) and the handler (at init) refuse the adapter's settings in these
// words. New takes any Config and fills in the defaults of zero fields.
func (c Config) Problems(finishBudget time.Duration) []string {
	var out []string
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	d := format.Duration

	if c.MinRemaining <= finishBudget {
		bad("MinRemaining %s is not more than FinishBudget %s, so a record could start with no time for its effect; give a MinRemaining above %s (default: FinishBudget + %s)",
			d(c.MinRemaining), d(finishBudget), d(finishBudget), d(DefaultEffectTime))
	}
	switch {
	case c.MaxMessageBytes < MinMessageBytes || c.MaxMessageBytes > MaxQueueBodyBytes:
		bad("MaxMessageBytes %d is out of range; give a whole number of bytes from %d to %d (default %d)", c.MaxMessageBytes, MinMessageBytes, MaxQueueBodyBytes, DefaultMaxMessageBytes)
	case (c.Delivery == Envelope || c.Delivery == Auto) && c.MaxMessageBytes > MaxEnvelopedMessageBytes:
		bad("MaxMessageBytes %d is more than %d, the largest message that always fits the queue's 1 MiB body in an SNS envelope (JSON escaping can double a message); set RawMessageDelivery to deliver larger messages, or give at most %d",
			c.MaxMessageBytes, MaxEnvelopedMessageBytes, MaxEnvelopedMessageBytes)
	case c.Delivery == EventBridge && c.MaxMessageBytes > MaxEventDetailBytes:
		bad("MaxMessageBytes %d is more than %d, the largest event detail that always fits the queue's 1 MiB body in the event an EventBridge rule delivers (EventBridge adds the id, source, detail-type, account, time, region and resources); give at most %d",
			c.MaxMessageBytes, MaxEventDetailBytes, MaxEventDetailBytes)
	}
	switch c.Delivery {
	case Envelope, Raw, Auto, EventBridge, S3:
	default:
		bad("Delivery %q is not one of %q, %q, %q, %q or %q", c.Delivery, Envelope, Raw, Auto, EventBridge, S3)
	}
	if c.MaxReceiveCount < 0 || c.MaxReceiveCount > maxReceiveCount {
		bad("MaxReceiveCount %d is out of range: SQS takes a maxReceiveCount from 1 to %d (0 says it is unknown); give one in that range", c.MaxReceiveCount, maxReceiveCount)
	}
	if c.Consumer == "" {
		bad("Consumer is empty; it names the consumer in logs and metrics")
	}
	out = append(out, c.backoffProblems()...)
	out = append(out, metricsNamespaceProblems(c.MetricsNamespace)...)
	return out
}

// metricsNamespaceProblems checks a CloudWatch namespace by PutMetricData's
// rules: 1 to 255 ASCII characters, not starting with ':', and not "AWS/",
// which AWS keeps for its own.
func metricsNamespaceProblems(ns string) []string {
	var problem string
	switch {
	case ns == "":
		problem = fmt.Sprintf("MetricsNamespace is empty; give one, or leave it to its default %q", outcome.DefaultNamespace)
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

// backoffProblems are the bounds of the backoff of failed records: delays
// of whole seconds that ChangeMessageVisibility takes (at most MaxBackoff,
// SQS's 12 hours), a cap no shorter than the base. A BackoffBase of zero or
// less turns it off, and nothing else is judged.
func (c Config) backoffProblems() []string {
	if c.BackoffBase <= 0 {
		return nil
	}
	var out []string
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	d := format.Duration
	if c.BackoffBase < time.Second {
		bad("BackoffBase %s is shorter than 1s, the least visibility timeout SQS sets in whole seconds; give at least 1s (default %s), or 0 to turn the backoff off", d(c.BackoffBase), d(DefaultBackoffBase))
	}
	if c.BackoffCap < c.BackoffBase {
		bad("BackoffCap %s is shorter than BackoffBase %s; give a cap of at least %s (default %s)", d(c.BackoffCap), d(c.BackoffBase), d(c.BackoffBase), d(DefaultBackoffCap))
	}
	for _, v := range []struct {
		name string
		d    time.Duration
		def  time.Duration
	}{{"BackoffCap", c.BackoffCap, DefaultBackoffCap}, {"BackoffFIFOCap", c.BackoffFIFOCap, DefaultBackoffFIFOCap}} {
		switch {
		case v.d > MaxBackoff:
			bad("%s %s is longer than %s, the longest visibility timeout SQS's ChangeMessageVisibility takes; give at most %s (default %s)", v.name, d(v.d), d(MaxBackoff), d(MaxBackoff), d(v.def))
		case v.d < time.Second:
			bad("%s %s is shorter than 1s; give a whole number of seconds from 1s to %s (default %s)", v.name, d(v.d), d(MaxBackoff), d(v.def))
		}
	}
	return out
}
