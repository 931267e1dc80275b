package contract

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Problems returns every rule s breaks, one sentence each that names the
// setting, the value given, the rule and the fix; none when s is valid. The
// construct reports them at synth (beside its own, about the resources) and
// the handler at init: the same rules, in the same words.
func (s Settings) Problems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if s.Table == "" {
		bad("Table is empty; the idempotency table's name is required")
	}
	switch {
	case s.Namespace == "":
		bad("Namespace is empty; give a short name without '#' (for example \"orders\")")
	case strings.Contains(s.Namespace, "#"):
		bad("Namespace %q contains '#', the separator between namespace and key; remove the '#' (for example %q)", s.Namespace, strings.ReplaceAll(s.Namespace, "#", ""))
	case strings.IndexFunc(s.Namespace, unicode.IsControl) >= 0:
		bad("Namespace %q contains control characters; remove them", s.Namespace)
	}
	if s.Timeout < time.Second || s.Timeout > MaxTimeout || s.Timeout%time.Second != 0 {
		bad("Timeout %s is out of range: Lambda takes whole seconds from 1s to %s; give one in that range", Format(s.Timeout), Format(MaxTimeout))
	}
	if s.Window < time.Second {
		bad("Window %s is shorter than 1s; give a business window of at least 1s (default %s)", Format(s.Window), Format(DefaultWindow))
	}
	if s.TTLAfterWindow < time.Second {
		bad("TTLAfterWindow %s is shorter than 1s: the TTL must come after the end of the window; give at least 1s (default %s)", Format(s.TTLAfterWindow), Format(DefaultTTLAfterWindow))
	}
	switch {
	case s.LeaseMax < time.Second:
		bad("LeaseMax %s is shorter than 1s; give at least 1s, or leave it to its default, the function's Timeout", Format(s.LeaseMax))
	case s.Timeout > 0 && s.LeaseMax > s.Timeout:
		bad("LeaseMax %s is longer than Timeout %s: a lease never outlasts the invocation that holds it; give at most %s", Format(s.LeaseMax), Format(s.Timeout), Format(s.Timeout))
	}
	if s.Window >= time.Second && s.Window < s.LeaseMax {
		bad("Window %s is shorter than LeaseMax %s, so a record could leave its business window while its effect still runs, and a redelivery would run the effect again; give a Window of at least %s, or a shorter LeaseMax (it defaults to Timeout)",
			Format(s.Window), Format(s.LeaseMax), Format(s.LeaseMax))
	}
	switch {
	case s.FinishBudget <= 0:
		bad("FinishBudget %s must be positive: it is the time kept to complete or release a reservation (default %s)", Format(s.FinishBudget), Format(idempotency.DefaultFinishBudget))
	case s.FinishBudget >= s.LeaseMax:
		bad("FinishBudget %s leaves no time for the effect within LeaseMax %s; give a LeaseMax (default: Timeout) longer than FinishBudget, or a shorter FinishBudget", Format(s.FinishBudget), Format(s.LeaseMax))
	}
	if s.MinRemaining <= s.FinishBudget {
		bad("MinRemaining %s is not more than FinishBudget %s, so a record could start with no time for its effect; give a MinRemaining above %s (default: FinishBudget + %s)",
			Format(s.MinRemaining), Format(s.FinishBudget), Format(s.FinishBudget), Format(sqsbatch.DefaultEffectTime))
	}
	if s.MinRemaining >= s.Timeout {
		bad("MinRemaining %s is not less than Timeout %s, so no record could ever start; give a MinRemaining below Timeout, or a longer Timeout", Format(s.MinRemaining), Format(s.Timeout))
	}
	if s.CacheSize < 0 || s.CacheSize > idempotency.MaxCacheSize {
		bad("CacheSize %d is out of range; give a whole number from 0 (no cache) to %d", s.CacheSize, idempotency.MaxCacheSize)
	}
	for _, f := range s.PayloadIgnore {
		if f == "" || strings.Contains(f, ",") {
			bad("PayloadIgnore has the field name %q; give dotted JSON paths such as \"meta.sentAt\", neither empty nor containing ','", f)
			break
		}
	}
	if n := len(s.KeySecret); n > 0 && n < idempotency.MinKeySecretBytes {
		bad("KeySecret has %d bytes; give at least %d random bytes, or none to keep keys in plain text", n, idempotency.MinKeySecretBytes)
	}
	if s.BatchSize < 1 || s.BatchSize > MaxBatchSize {
		bad("BatchSize %d is out of range; give a whole number from 1 to %d", s.BatchSize, MaxBatchSize)
	}
	if s.BatchConcurrency < 1 || s.BatchConcurrency > MaxBatchConcurrency {
		bad("BatchConcurrency %d is out of range: each record in flight holds connections, and Lambda allows 1,024 file descriptors; give a whole number from 1 to %d (default: BatchSize, at most %d)",
			s.BatchConcurrency, MaxBatchConcurrency, DefaultMaxConcurrency)
	}
	switch {
	case s.MaxMessageBytes < MinMessageBytes || s.MaxMessageBytes > sqsbatch.MaxQueueBodyBytes:
		bad("MaxMessageBytes %d is out of range; give a whole number of bytes from %d to %d (default %d)", s.MaxMessageBytes, MinMessageBytes, sqsbatch.MaxQueueBodyBytes, sqsbatch.DefaultMaxMessageBytes)
	case s.Delivery != Raw && s.MaxMessageBytes > sqsbatch.MaxEnvelopedMessageBytes:
		bad("MaxMessageBytes %d is more than %d, the largest message that always fits the queue's 1 MiB body in an SNS envelope (JSON escaping can double a message); set RawMessageDelivery to deliver larger messages, or give at most %d",
			s.MaxMessageBytes, sqsbatch.MaxEnvelopedMessageBytes, sqsbatch.MaxEnvelopedMessageBytes)
	}
	switch s.Delivery {
	case Envelope, Raw, Auto:
	default:
		bad("Delivery %q is not one of %q, %q or %q", s.Delivery, Envelope, Raw, Auto)
	}
	if s.Consumer == "" {
		bad("Consumer is empty; it names the consumer in logs and metrics")
	}
	if s.MetricsNamespace == "" {
		bad("MetricsNamespace is empty; give one, or leave it to its default %q", sqsbatch.DefaultMetricsNamespace)
	}
	return out
}

// Validate returns an error listing every problem of s, or nil.
func (s Settings) Validate() error {
	problems := s.Problems()
	if len(problems) == 0 {
		return nil
	}
	return errors.New("invalid settings:\n  - " + strings.Join(problems, "\n  - "))
}

// Format writes d as the shortest Go duration string in whole units ("24h",
// "90s", "1500ms"), which time.ParseDuration reads back exactly.
func Format(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	case d%time.Microsecond == 0:
		return fmt.Sprintf("%dus", d/time.Microsecond)
	default:
		return fmt.Sprintf("%dns", int64(d))
	}
}
