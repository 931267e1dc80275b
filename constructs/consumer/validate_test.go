package consumer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestValidateRefuses: the rules of validate.go (and of the shared table, constructs/internal/table, which it applies).
func TestValidateRefuses(t *testing.T) {
	failsWhen(t, []refusal{{
		name:   "max concurrency is 1",
		change: func(p *consumer.IdempotentConsumerProps) { p.MaxConcurrency = jsii.Number(1) },
		want:   []string{"MaxConcurrency 1 is out of range", "from 2 to 1000"},
	}, {
		name:   "max concurrency is above 1000",
		change: func(p *consumer.IdempotentConsumerProps) { p.MaxConcurrency = jsii.Number(1001) },
		want:   []string{"MaxConcurrency 1001 is out of range", "from 2 to 1000"},
	}, {
		name: "environment overrides a contract variable",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Environment = &map[string]*string{contract.TableVar: jsii.String("mine"), "OTHER": jsii.String("fine")}
		},
		want: []string{"Environment sets IDEMPOTENCY_TABLE", "remove it from Environment and use Table instead"},
	}, {
		name:   "entry is missing",
		change: func(p *consumer.IdempotentConsumerProps) { p.Entry = nil },
		want:   []string{"Entry is required"},
	}, {
		name: "reserved concurrency is below max concurrency",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.ReservedConcurrentExecutions = jsii.Number(2)
			p.MaxConcurrency = jsii.Number(5)
		},
		want: []string{"ReservedConcurrentExecutions 2 is below MaxConcurrency 5", "give ReservedConcurrentExecutions at least 5"},
	}, {
		name:   "batch size over 10 without a batching window",
		change: func(p *consumer.IdempotentConsumerProps) { p.BatchSize = jsii.Number(50) },
		want:   []string{"BatchSize 50 needs a MaxBatchingWindow", "set MaxBatchingWindow"},
	}, {
		name: "batching window over 5 minutes",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.BatchSize = jsii.Number(50)
			p.MaxBatchingWindow = awscdk.Duration_Minutes(jsii.Number(10))
		},
		want: []string{"MaxBatchingWindow 10m is above the SQS event source's maximum of 5m"},
	}, {
		name: "the given topic accepts larger messages than the handler",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.RawMessageDelivery = jsii.Bool(true)
			p.MaxMessageBytes = jsii.Number(65536)
			p.Topic = awssns.NewTopic(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Big"), nil)
			p.Topic.Node().DefaultChild().(awssns.CfnTopic).SetMaximumMessageSize(jsii.Number(1048576))
		},
		want: []string{"Topic accepts messages of up to 1048576 bytes (its MaximumMessageSize), more than MaxMessageBytes 65536", "set MaxMessageBytes to 1048576"},
	}, {
		name: "the given topic keeps SNS's default size, larger than the handler's",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.MaxMessageBytes = jsii.Number(65536)
			p.Topic = awssns.NewTopic(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Default"), nil)
		},
		want: []string{"Topic accepts messages of up to 262144 bytes"},
	}, {
		name:   "a shared table without a namespace",
		change: func(p *consumer.IdempotentConsumerProps) { p.Table = sharedTable("pk", nil) },
		want:   []string{"Table is given (shared-table mode), so Namespace is required"},
	}, {
		name: "a shared table keyed on a record's attribute",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = sharedTable("status", nil), jsii.String("refund")
		},
		want: []string{`TablePartitionKey "status" is an attribute of the idempotency record (package schema)`, "give the table's partition key its own name"},
	}, {
		name: "a replicated table",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = sharedTable("pk", jsii.Strings("eu-west-1")), jsii.String("refund")
		},
		want: []string{"Table Shared/Table is a global table in multi-Region eventual consistency (MREC) across 2 Regions (eu-west-1, us-east-1): DynamoDB checks a conditional write against the local Region's copy only", "last writer wins", "its effect runs twice", "fix: make the table multi-Region strongly consistent (MultiRegionConsistency STRONG on its TableV2, or GlobalTable on the construct), or set SingleWritingRegion"},
	}, {
		name: "several props are wrong",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.MaxReceiveCount = jsii.Number(0)
			p.MemorySize = jsii.Number(64)
			p.CacheSize = jsii.Number(-1)
		},
		want: []string{"MaxReceiveCount 0 is out of range", "MemorySize 64 is out of range", "CacheSize -1 is out of range"},
	}})
}

// TestTheDefaultNamespaceDropsWhatTheContractRefuses: the default
// Namespace, from the construct id, drops every character the contract
// refuses in a namespace ('#', '*', '?', control characters), so that an
// id like "Reserve*Stock" is valid (before, it was refused for a
// Namespace prop the user never set); an id of such characters alone says
// that the id gives no namespace and to set Namespace, once.
func TestTheDefaultNamespaceDropsWhatTheContractRefuses(t *testing.T) {
	for _, id := range []string{"Reserve*Stock", "Ask?", "Order#Paid", "Tab\tbed"} {
		if err := validProps().Validate(jsii.String(id)); err != nil {
			t.Errorf("id %q: %v", id, err)
		}
	}
	for _, id := range []string{"*?#", ""} {
		err := validProps().Validate(jsii.String(id))
		if err == nil {
			t.Fatalf("id %q: accepted", id)
		}
		msg := err.Error()
		if want := fmt.Sprintf("the construct id %q gives no namespace", id); !strings.Contains(msg, want) || !strings.Contains(msg, "set Namespace") {
			t.Errorf("id %q: %v; want it to say %q and to set Namespace", id, err, want)
		}
		if strings.Contains(msg, "Namespace is empty") {
			t.Errorf("id %q: %v; want the contract's rule, about a Namespace never set, left out", id, err)
		}
	}
	// A Namespace set is the user's: refused as given.
	err := (&consumer.IdempotentConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir), Namespace: jsii.String("a*b")}}).Validate(jsii.String("C"))
	if err == nil || !strings.Contains(err.Error(), `Namespace "a*b" contains '*' or '?'`) {
		t.Errorf("Namespace a*b: %v; want the contract's refusal", err)
	}
}
