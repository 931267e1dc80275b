package consumer

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/env"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Defaults of the props, as documented on IdempotentConsumerProps.
const (
	defaultMaxReceiveCount  = 5
	defaultMemorySize       = 256
	defaultTimeout          = 30 * time.Second
	defaultWindow           = 24 * time.Hour
	defaultTTLAfterWindow   = 24 * time.Hour
	defaultMaxMessageBytes  = 256 * 1024
	minMessageBytes         = 1024 // the least MaximumMessageSize of a topic or a queue
	defaultMetricsNamespace = "IdempotentConsumer"
	defaultBatchSize        = 10
	defaultOldestMessageAge = 15 * time.Minute
	visibilityTimeoutFactor = 6
	maxVisibilityTimeout    = 12 * time.Hour
)

// contractProps maps each variable of the configuration contract to the prop
// that sets it, for the message that refuses it in Environment.
var contractProps = map[string]string{
	env.Table:            "Table",
	env.Namespace:        "Namespace",
	env.Window:           "Window",
	env.TTLAfterWindow:   "TTLAfterWindow",
	env.LeaseMax:         "LeaseMax",
	env.FinishBudget:     "FinishBudget",
	env.CacheSize:        "CacheSize",
	env.PayloadIgnore:    "PayloadIgnore",
	env.KeySecret:        "HashKeys",
	env.Concurrency:      "BatchConcurrency",
	env.MinRemaining:     "MinRemaining",
	env.MaxMessageBytes:  "MaxMessageBytes",
	env.Delivery:         "RawMessageDelivery",
	env.Consumer:         "the construct id",
	env.MetricsNamespace: "MetricsNamespace",
}

// settings are the props with their defaults applied and durations in Go
// form, computed once by resolve.
type settings struct {
	namespace         string
	timeout           time.Duration
	visibilityTimeout time.Duration
	maxReceiveCount   float64
	memorySize        float64
	batchSize         float64
	batchConcurrency  float64
	window            time.Duration
	ttlAfterWindow    time.Duration
	leaseMax          time.Duration
	finishBudget      time.Duration
	minRemaining      time.Duration
	maxMessageBytes   float64
	cacheSize         float64
	metricsNamespace  string
	oldestMessageAge  time.Duration
}

// Validate reports every problem of the props for a consumer with the given
// construct id, in one error, or nil. NewIdempotentConsumer calls it and
// panics with its error (the way CDK constructs fail at synth time); call it
// first to handle the error yourself. It does not build Entry.
func (p *IdempotentConsumerProps) Validate(id *string) error {
	_, err := p.resolve(id)
	return err
}

// resolve applies the defaults and checks the props.
func (p *IdempotentConsumerProps) resolve(id *string) (*settings, error) {
	var name string
	if id != nil {
		name = *id
	}
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	if p == nil {
		p = &IdempotentConsumerProps{}
	}
	s := &settings{
		timeout:          durationOr(p.Timeout, defaultTimeout),
		maxReceiveCount:  numberOr(p.MaxReceiveCount, defaultMaxReceiveCount),
		memorySize:       numberOr(p.MemorySize, defaultMemorySize),
		batchSize:        numberOr(p.BatchSize, defaultBatchSize),
		window:           durationOr(p.Window, defaultWindow),
		ttlAfterWindow:   durationOr(p.TTLAfterWindow, defaultTTLAfterWindow),
		finishBudget:     durationOr(p.FinishBudget, idempotency.DefaultFinishBudget),
		maxMessageBytes:  numberOr(p.MaxMessageBytes, defaultMaxMessageBytes),
		cacheSize:        numberOr(p.CacheSize, 0),
		metricsNamespace: stringOr(p.MetricsNamespace, defaultMetricsNamespace),
		oldestMessageAge: durationOr(p.OldestMessageAlarmThreshold, defaultOldestMessageAge),
	}
	s.batchConcurrency = numberOr(p.BatchConcurrency, s.batchSize)
	s.leaseMax = durationOr(p.LeaseMax, s.timeout)
	s.minRemaining = durationOr(p.MinRemaining, s.finishBudget+sqsbatch.DefaultEffectTime)

	if p.Entry == nil || strings.TrimSpace(*p.Entry) == "" {
		bad("Entry is required: set it to the directory of the handler's main package, for example jsii.String(\"lambda/cmd/charge\")")
	}

	if p.Namespace != nil {
		s.namespace = *p.Namespace
		switch {
		case s.namespace == "":
			bad("Namespace is empty; set a short name without '#' (for example \"orders\") or leave it nil for the default, the construct id in lower case")
		case strings.Contains(s.namespace, "#"):
			bad("Namespace %q contains '#', the separator between namespace and key; remove the '#' (for example %q)", s.namespace, strings.ReplaceAll(s.namespace, "#", ""))
		}
	} else {
		s.namespace = strings.ToLower(strings.ReplaceAll(name, "#", ""))
		if s.namespace == "" {
			bad("the construct id %q gives an empty default Namespace; set Namespace", name)
		}
	}

	if s.timeout < time.Second || s.timeout%time.Second != 0 {
		bad("Timeout %s is not a whole number of seconds of at least 1s; give whole seconds (default %s)", formatDuration(s.timeout), formatDuration(defaultTimeout))
	}
	minVisibility := visibilityTimeoutFactor * s.timeout
	if p.VisibilityTimeout != nil {
		s.visibilityTimeout = toGo(p.VisibilityTimeout)
		if s.visibilityTimeout < minVisibility {
			bad("VisibilityTimeout %s is less than %d × Timeout (%s) = %s, so SQS would hand a batch to a second invocation while the first is still working on it; set VisibilityTimeout to at least %s, or leave it nil for the default (%d × Timeout)",
				formatDuration(s.visibilityTimeout), visibilityTimeoutFactor, formatDuration(s.timeout), formatDuration(minVisibility), formatDuration(minVisibility), visibilityTimeoutFactor)
		}
		if s.visibilityTimeout > maxVisibilityTimeout {
			bad("VisibilityTimeout %s is above the SQS maximum of %s; give at most %s", formatDuration(s.visibilityTimeout), formatDuration(maxVisibilityTimeout), formatDuration(maxVisibilityTimeout))
		}
	} else {
		s.visibilityTimeout = minVisibility
	}

	if !isInt(s.maxReceiveCount) || s.maxReceiveCount < 1 || s.maxReceiveCount > 1000 {
		bad("MaxReceiveCount %v is out of range; give a whole number from 1 to 1000 (default %d)", s.maxReceiveCount, defaultMaxReceiveCount)
	}
	if !isInt(s.memorySize) || s.memorySize < 128 || s.memorySize > 10240 {
		bad("MemorySize %v is out of range; give a whole number of MiB from 128 to 10240 (default %d)", s.memorySize, defaultMemorySize)
	}
	if !isInt(s.batchSize) || s.batchSize < 1 || s.batchSize > 10000 {
		bad("BatchSize %v is out of range; give a whole number from 1 to 10000 (more than 10 needs MaxBatchingWindow)", s.batchSize)
	}
	if !isInt(s.batchConcurrency) || s.batchConcurrency < 1 {
		bad("BatchConcurrency %v is out of range; give a whole number of at least 1, or leave it nil for the default (BatchSize)", s.batchConcurrency)
	}
	if p.MaxConcurrency != nil {
		if mc := *p.MaxConcurrency; !isInt(mc) || mc < 2 || mc > 1000 {
			bad("MaxConcurrency %v is out of range: the SQS event source accepts a whole number from 2 to 1000; set it in that range, or leave it nil for no limit", mc)
		}
	}
	if p.ReservedConcurrentExecutions != nil {
		rc := *p.ReservedConcurrentExecutions
		if !isInt(rc) || rc < 0 {
			bad("ReservedConcurrentExecutions %v is out of range; give a whole number of at least 0, or leave it nil for none", rc)
		}
		if p.MaxConcurrency != nil && rc < *p.MaxConcurrency {
			bad("ReservedConcurrentExecutions %v is below MaxConcurrency %v, so the event source would start invocations that are throttled (and their messages would count receives towards the dead-letter queue); give ReservedConcurrentExecutions at least %v, or lower MaxConcurrency", rc, *p.MaxConcurrency, *p.MaxConcurrency)
		}
	}
	if !isInt(s.cacheSize) || s.cacheSize < 0 || s.cacheSize > idempotency.MaxCacheSize {
		bad("CacheSize %v is out of range; give a whole number from 0 (no cache) to %d", s.cacheSize, idempotency.MaxCacheSize)
	}
	raw := p.RawMessageDelivery != nil && *p.RawMessageDelivery
	switch {
	case !isInt(s.maxMessageBytes) || s.maxMessageBytes < minMessageBytes || s.maxMessageBytes > env.MaxQueueBodyBytes:
		bad("MaxMessageBytes %s is out of range; give a whole number of bytes from %d to %d (default %d)", formatNumber(s.maxMessageBytes), minMessageBytes, env.MaxQueueBodyBytes, defaultMaxMessageBytes)
	case !raw && s.maxMessageBytes > env.MaxEnvelopedMessageBytes:
		bad("MaxMessageBytes %s is more than %d, the largest message that always fits the queue's 1 MiB body in an SNS envelope (JSON escaping can double a message); set RawMessageDelivery to deliver larger messages, or give at most %d", formatNumber(s.maxMessageBytes), env.MaxEnvelopedMessageBytes, env.MaxEnvelopedMessageBytes)
	}
	if p.Topic != nil {
		if topicMax, known := topicMaxMessageBytes(p.Topic); known && topicMax > s.maxMessageBytes {
			bad("Topic accepts messages of up to %s bytes (its MaximumMessageSize), more than MaxMessageBytes %s: a message in between would be published and then refused by the handler on every delivery, until the dead-letter queue takes it; set MaxMessageBytes to %s, or lower the topic's MaximumMessageSize", formatNumber(topicMax), formatNumber(s.maxMessageBytes), formatNumber(topicMax))
		}
	}
	if s.window <= 0 {
		bad("Window %s must be positive (default %s)", formatDuration(s.window), formatDuration(defaultWindow))
	}
	if s.leaseMax <= 0 {
		bad("LeaseMax %s must be positive (default: Timeout)", formatDuration(s.leaseMax))
	}
	if s.window > 0 && s.window < s.leaseMax {
		bad("Window %s is shorter than LeaseMax %s, so a record could leave its business window while its effect still runs, and a redelivery would run the effect again; give a Window of at least %s, or a shorter LeaseMax (it defaults to Timeout)",
			formatDuration(s.window), formatDuration(s.leaseMax), formatDuration(s.leaseMax))
	}
	if s.finishBudget <= 0 {
		bad("FinishBudget %s must be positive (default %s)", formatDuration(s.finishBudget), formatDuration(idempotency.DefaultFinishBudget))
	}
	if s.leaseMax > 0 && s.finishBudget >= s.leaseMax {
		bad("FinishBudget %s leaves no time for the effect within LeaseMax %s; give a LeaseMax (default: Timeout) longer than FinishBudget, or a shorter FinishBudget", formatDuration(s.finishBudget), formatDuration(s.leaseMax))
	}
	if s.minRemaining <= s.finishBudget {
		bad("MinRemaining %s is not more than FinishBudget %s, so a record could start with no time for its effect; give a MinRemaining above %s (default: FinishBudget + %s)",
			formatDuration(s.minRemaining), formatDuration(s.finishBudget), formatDuration(s.finishBudget), formatDuration(sqsbatch.DefaultEffectTime))
	}
	if s.minRemaining >= s.timeout {
		bad("MinRemaining %s is not less than Timeout %s, so no record could ever start; give a MinRemaining below Timeout, or a longer Timeout", formatDuration(s.minRemaining), formatDuration(s.timeout))
	}
	if s.oldestMessageAge <= 0 {
		bad("OldestMessageAlarmThreshold %s must be positive (default %s)", formatDuration(s.oldestMessageAge), formatDuration(defaultOldestMessageAge))
	}
	if s.metricsNamespace == "" {
		bad("MetricsNamespace is empty; leave it nil for the default %q", defaultMetricsNamespace)
	}
	if p.PayloadIgnore != nil {
		for _, f := range *p.PayloadIgnore {
			if f == nil || *f == "" || strings.Contains(*f, ",") {
				bad("PayloadIgnore has an empty field name or one containing ','; give dotted JSON paths such as \"meta.sentAt\"")
				break
			}
		}
	}

	if p.Environment != nil {
		var refused []string
		for k := range *p.Environment {
			if _, ok := contractProps[k]; ok {
				refused = append(refused, k)
			}
		}
		sort.Strings(refused)
		for _, k := range refused {
			bad("Environment sets %s, a variable of the configuration contract that the construct sets itself; remove it from Environment and use %s instead", k, contractProps[k])
		}
	}

	if len(problems) > 0 {
		return nil, fmt.Errorf("IdempotentConsumer %q: invalid props:\n  - %s", name, strings.Join(problems, "\n  - "))
	}
	return s, nil
}

// snsDefaultMaxMessageBytes is the MaximumMessageSize of a topic that does
// not set it.
const snsDefaultMaxMessageBytes = 262144

// topicMaxMessageBytes returns the MaximumMessageSize of topic when the app
// defines the topic (an awssns.Topic, not an imported one) with a concrete
// value or none (SNS's default). known is false when it cannot be told.
func topicMaxMessageBytes(topic awssns.ITopic) (size float64, known bool) {
	cfn, ok := topic.Node().DefaultChild().(awssns.CfnTopic)
	if !ok || cfn == nil {
		return 0, false
	}
	n := cfn.MaximumMessageSize()
	switch {
	case n == nil:
		return snsDefaultMaxMessageBytes, true
	case *awscdk.Token_IsUnresolved(n):
		return 0, false
	}
	return *n, true
}

// toGo converts a concrete CDK duration to a time.Duration.
func toGo(d awscdk.Duration) time.Duration {
	return time.Duration(*d.ToMilliseconds(nil)) * time.Millisecond
}

func durationOr(d awscdk.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return toGo(d)
}

func numberOr(n *float64, def float64) float64 {
	if n == nil {
		return def
	}
	return *n
}

func stringOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// formatNumber writes f in plain decimal ("1048576", not "1.048576e+06").
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func isInt(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }

// formatDuration writes d as the shortest Go duration string in whole units
// ("24h", "90s", "1500ms"), which time.ParseDuration reads back.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	default:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
}
