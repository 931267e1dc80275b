package contract

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/format"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Problems returns every rule s breaks, one sentence each that names the
// setting, the value given, the rule and the fix; none when s is valid. The
// construct reports them at synth (beside its own, about the resources) and
// the handler at init: the same rules, in the same words. The guard's rules
// are the guard's own (idempotency.Config.Problems of GuardConfig), so that
// NewGuard, the construct and the handler refuse a setting in one voice.
//
// When the only settings about time that s changes from their defaults is
// Timeout, and it is too short for a record to start, the one problem about
// it says the shortest Timeout that works ("Timeout 2s is too short: …
// give at least 4s"), not the settings derived from it.
func (s Settings) Problems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if s.Table == "" {
		bad("Table is empty; the idempotency table's name is required")
	}
	guard := s.GuardConfig()
	timeoutOK := s.Timeout >= time.Second && s.Timeout <= MaxTimeout && s.Timeout%time.Second == 0
	if !timeoutOK {
		bad("Timeout %s is out of range: Lambda takes whole seconds from 1s to %s; give one in that range", Format(s.Timeout), Format(MaxTimeout))
	}
	if least, short := s.shortTimeout(); timeoutOK && short {
		bad("Timeout %s is too short: a record starts only with %s left before the deadline (%s to complete its record, %s for its effect); give at least %s",
			Format(s.Timeout), Format(s.MinRemaining), Format(s.FinishBudget), Format(s.MinRemaining-s.FinishBudget), Format(least))
		guard.LeaseMax = least // the other rules, as they stand with the fix
	} else {
		if s.LeaseMax >= time.Second && timeoutOK && s.LeaseMax > s.Timeout {
			bad("LeaseMax %s is longer than Timeout %s: a lease never outlasts the invocation that holds it; give at most %s", Format(s.LeaseMax), Format(s.Timeout), Format(s.Timeout))
		}
		if s.MinRemaining >= s.Timeout {
			bad("MinRemaining %s is not less than Timeout %s, so no record could ever start; give a MinRemaining below Timeout, or a longer Timeout", Format(s.MinRemaining), Format(s.Timeout))
		}
	}
	out = append(out, guard.Problems()...)
	if s.MinRemaining <= s.FinishBudget {
		bad("MinRemaining %s is not more than FinishBudget %s, so a record could start with no time for its effect; give a MinRemaining above %s (default: FinishBudget + %s)",
			Format(s.MinRemaining), Format(s.FinishBudget), Format(s.FinishBudget), Format(sqsbatch.DefaultEffectTime))
	}
	for _, t := range s.TxTables {
		if t == "" || strings.Contains(t, ",") {
			bad("TxTables has the table name %q; give table names, neither empty nor containing ','", t)
			break
		}
	}
	if s.BatchConcurrency < 1 || s.BatchConcurrency > MaxBatchConcurrency {
		bad("BatchConcurrency %d is out of range: each record in flight holds connections, and Lambda allows 1,024 file descriptors; give a whole number from 1 to %d (default: the batch size, at most %d)",
			s.BatchConcurrency, MaxBatchConcurrency, DefaultMaxConcurrency)
	}
	switch {
	case s.MaxMessageBytes < MinMessageBytes || s.MaxMessageBytes > sqsbatch.MaxQueueBodyBytes:
		bad("MaxMessageBytes %d is out of range; give a whole number of bytes from %d to %d (default %d)", s.MaxMessageBytes, MinMessageBytes, sqsbatch.MaxQueueBodyBytes, sqsbatch.DefaultMaxMessageBytes)
	case s.Delivery != sqsbatch.Raw && s.MaxMessageBytes > sqsbatch.MaxEnvelopedMessageBytes:
		bad("MaxMessageBytes %d is more than %d, the largest message that always fits the queue's 1 MiB body in an SNS envelope (JSON escaping can double a message); set RawMessageDelivery to deliver larger messages, or give at most %d",
			s.MaxMessageBytes, sqsbatch.MaxEnvelopedMessageBytes, sqsbatch.MaxEnvelopedMessageBytes)
	}
	switch s.Delivery {
	case sqsbatch.Envelope, sqsbatch.Raw, sqsbatch.Auto:
	default:
		bad("Delivery %q is not one of %q, %q or %q", s.Delivery, sqsbatch.Envelope, sqsbatch.Raw, sqsbatch.Auto)
	}
	if s.MaxReceiveCount < 0 || s.MaxReceiveCount > maxReceiveCount {
		bad("MaxReceiveCount %d is out of range: SQS takes a maxReceiveCount from 1 to %d (0 says it is unknown); give one in that range (default %d)", s.MaxReceiveCount, maxReceiveCount, DefaultMaxReceiveCount)
	}
	if s.Consumer == "" {
		bad("Consumer is empty; it names the consumer in logs and metrics")
	}
	out = append(out, metricsNamespaceProblems(s.MetricsNamespace)...)
	return out
}

// shortTimeout reports whether Timeout is what makes the settings about
// time fail while the others (LeaseMax, FinishBudget, MinRemaining) are
// their defaults for it, and the shortest Timeout that would work: a
// whole number of seconds more than MinRemaining.
func (s Settings) shortTimeout() (least time.Duration, short bool) {
	derived := s.LeaseMax == s.Timeout && s.FinishBudget == idempotency.DefaultFinishBudget && s.MinRemaining == sqsbatch.DefaultMinRemaining(s.FinishBudget)
	if !derived || s.MinRemaining < s.Timeout {
		return 0, false
	}
	return s.MinRemaining.Truncate(time.Second) + time.Second, true
}

// metricsNamespaceProblems checks a CloudWatch namespace by PutMetricData's
// rules.
func metricsNamespaceProblems(ns string) []string {
	var problem string
	switch {
	case ns == "":
		problem = fmt.Sprintf("MetricsNamespace is empty; give one, or leave it to its default %q", sqsbatch.DefaultMetricsNamespace)
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

// Validate returns an error listing every problem of s, or nil.
func (s Settings) Validate() error {
	problems := s.Problems()
	if len(problems) == 0 {
		return nil
	}
	return errors.New("invalid settings:\n  - " + strings.Join(problems, "\n  - "))
}

// Format writes d as the shortest Go duration string in whole units ("24h",
// "90s", "1500ms"), which time.ParseDuration reads back exactly: the way
// every message of the library and the construct writes a duration.
func Format(d time.Duration) string { return format.Duration(d) }
