package consumer_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
)

// TestRuntimeRulesRefuse: the runtime contract's rules (contract.Settings.Problems), as the construct reports them at synth.
func TestRuntimeRulesRefuse(t *testing.T) {
	failsWhen(t, []refusal{{
		name:   "namespace contains #",
		change: func(p *consumer.IdempotentConsumerProps) { p.Namespace = jsii.String("orders#v2") },
		want:   []string{`Namespace "orders#v2" contains '#'`, `remove the '#' (for example "ordersv2")`},
	}, {
		name:   "namespace is empty",
		change: func(p *consumer.IdempotentConsumerProps) { p.Namespace = jsii.String("") },
		want:   []string{"Namespace is empty"},
	}, {
		name:   "id gives an empty namespace",
		id:     "#",
		change: func(p *consumer.IdempotentConsumerProps) {},
		want:   []string{`the construct id "#" gives no namespace`, "set Namespace"},
	}, {
		name:   "timeout is not whole seconds",
		change: func(p *consumer.IdempotentConsumerProps) { p.Timeout = awscdk.Duration_Millis(jsii.Number(1500)) },
		want:   []string{"Timeout 1500ms is out of range: Lambda takes whole seconds from 1s to 15m"},
	}, {
		name:   "batch size is 0",
		change: func(p *consumer.IdempotentConsumerProps) { p.BatchSize = jsii.Number(0) },
		want:   []string{"BatchSize 0 is out of range"},
	}, {
		name: "window is shorter than the lease",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Window = awscdk.Duration_Minutes(jsii.Number(5))
			p.LeaseMax = awscdk.Duration_Minutes(jsii.Number(15))
		},
		want: []string{"Window 5m is shorter than LeaseMax 15m", "give a Window of at least 15m"},
	}, {
		name: "window is shorter than the default lease, the timeout",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Timeout = awscdk.Duration_Minutes(jsii.Number(5))
			p.Window = awscdk.Duration_Minutes(jsii.Number(2))
		},
		want: []string{"Window 2m is shorter than LeaseMax 5m"},
	}, {
		name:   "finishing budget leaves the effect no time",
		change: func(p *consumer.IdempotentConsumerProps) { p.FinishBudget = awscdk.Duration_Seconds(jsii.Number(30)) },
		want:   []string{"FinishBudget 30s leaves no time for the effect within LeaseMax 30s", "MinRemaining 31s is not less than Timeout 30s"},
	}, {
		name:   "min remaining is within the finishing budget",
		change: func(p *consumer.IdempotentConsumerProps) { p.MinRemaining = awscdk.Duration_Millis(jsii.Number(1500)) },
		want:   []string{"MinRemaining 1500ms is not more than FinishBudget 2s", "give a MinRemaining above 2s"},
	}, {
		name:   "min remaining is the whole timeout",
		change: func(p *consumer.IdempotentConsumerProps) { p.MinRemaining = awscdk.Duration_Minutes(jsii.Number(1)) },
		want:   []string{"MinRemaining 1m is not less than Timeout 30s, so no record could ever start"},
	}, {
		name:   "cache is larger than the handler accepts",
		change: func(p *consumer.IdempotentConsumerProps) { p.CacheSize = jsii.Number(50_000_000) },
		want:   []string{"CacheSize 50000000 is out of range", "to 1000000"},
	}, {
		name:   "timeout is over 15 minutes",
		change: func(p *consumer.IdempotentConsumerProps) { p.Timeout = awscdk.Duration_Minutes(jsii.Number(20)) },
		want:   []string{"Timeout 20m is out of range: Lambda takes whole seconds from 1s to 15m"},
	}, {
		name:   "min remaining is 0",
		change: func(p *consumer.IdempotentConsumerProps) { p.MinRemaining = awscdk.Duration_Seconds(jsii.Number(0)) },
		want:   []string{"MinRemaining 0s is not more than FinishBudget 2s"},
	}, {
		name:   "TTL after the window is 0",
		change: func(p *consumer.IdempotentConsumerProps) { p.TTLAfterWindow = awscdk.Duration_Seconds(jsii.Number(0)) },
		want:   []string{"TTLAfterWindow 0s is shorter than 1s"},
	}, {
		name: "window and lease are under a second",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Window = awscdk.Duration_Millis(jsii.Number(500))
			p.LeaseMax = awscdk.Duration_Millis(jsii.Number(500))
		},
		want: []string{"Window 500ms is shorter than 1s", "LeaseMax 500ms is shorter than 1s"},
	}, {
		name:   "a thousand records at once",
		change: func(p *consumer.IdempotentConsumerProps) { p.BatchConcurrency = jsii.Number(1000) },
		want:   []string{"BatchConcurrency 1000 is out of range", "from 1 to 256"},
	}, {
		name:   "max message bytes is below what SNS and SQS allow",
		change: func(p *consumer.IdempotentConsumerProps) { p.MaxMessageBytes = jsii.Number(512) },
		want:   []string{"MaxMessageBytes 512 is out of range", "from 1024 to 1048576"},
	}, {
		name: "max message bytes is above SQS's largest body",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.MaxMessageBytes = jsii.Number(2 << 20)
			p.RawMessageDelivery = jsii.Bool(true)
		},
		want: []string{"MaxMessageBytes 2097152 is out of range", "from 1024 to 1048576"},
	}, {
		name:   "max message bytes does not fit an SNS envelope",
		change: func(p *consumer.IdempotentConsumerProps) { p.MaxMessageBytes = jsii.Number(600000) },
		want:   []string{"MaxMessageBytes 600000 is more than 520192", "set RawMessageDelivery", "give at most 520192"},
	}, {
		name:   "the backoff outlasts the window",
		change: func(p *consumer.IdempotentConsumerProps) { p.Window = awscdk.Duration_Hours(jsii.Number(2)) },
		want: []string{"the retry horizon 130m (the longest delays after receives 1 to 4 of MaxReceiveCount 5: BackoffBase 10m, doubled up to BackoffCap 1h) is not shorter than Window 2h less 1s",
			"give a Window longer than 7801s, or a smaller BackoffCap, BackoffBase or MaxReceiveCount"},
	}, {
		name: "a backoff SQS cannot set, all at once",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.BackoffCap = awscdk.Duration_Hours(jsii.Number(13))
			p.BackoffFIFOCap = awscdk.Duration_Hours(jsii.Number(24))
		},
		want: []string{"BackoffCap 13h is longer than 12h, the longest visibility timeout SQS's ChangeMessageVisibility takes; give at most 12h (default 1h)",
			"BackoffFIFOCap 24h is longer than 12h"},
	}, {
		name:   "a cap under the base",
		change: func(p *consumer.IdempotentConsumerProps) { p.BackoffCap = awscdk.Duration_Minutes(jsii.Number(5)) },
		want:   []string{"BackoffCap 5m is shorter than BackoffBase 10m; give a cap of at least 10m (default 1h)"},
	}, {
		name: "the backoff outlasts the queue's retention",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.QueueProps = &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Hours(jsii.Number(2))}
			p.Window = awscdk.Duration_Hours(jsii.Number(1))
			p.BackoffBase, p.BackoffCap = awscdk.Duration_Minutes(jsii.Number(20)), awscdk.Duration_Minutes(jsii.Number(40))
		},
		want: []string{"the retry horizon 140m", // 20m + 40m + 40m + 40m, past the hour's window
			"the queue's retention 2h (QueueProps.RetentionPeriod) is not longer than the retry horizon of the backoff and the last receive's visibility timeout (140m + 3m = 143m",
			"give the queue a retention longer than 143m"},
	}})
}
