package consumer_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// resource returns the template's resource of a construct's default child.
func resource(t *testing.T, f *fixture, c interface{ Node() constructs.Node }) map[string]any {
	t.Helper()
	var template map[string]any
	cdktest.Must(t, func() { template = *f.template.ToJSON() })
	r, _ := template["Resources"].(map[string]any)[id(f, c)].(map[string]any)
	if r == nil {
		t.Fatalf("no resource %s", id(f, c))
	}
	return r
}

// properties returns a resource's Properties as JSON, for messages.
func properties(r map[string]any) (map[string]any, string) {
	p, _ := r["Properties"].(map[string]any)
	b, _ := json.Marshal(p)
	return p, string(b)
}

// TestFifoTopicGivesFifoQueues: a FIFO topic, created or given or declared,
// gets a FIFO queue, a FIFO dead-letter queue and a FIFO subscription
// dead-letter queue, none with content-based deduplication; the handler is
// told it is FIFO; the event source takes batches of 10 and no window.
func TestFifoTopicGivesFifoQueues(t *testing.T) {
	f := fifos(t)
	for _, name := range []string{"ApplyPayment", "ShipOrder", "RefundOrder"} {
		t.Run(name, func(t *testing.T) {
			c := f.consumers[name]
			for _, q := range []struct {
				name  string
				queue interface{ Node() constructs.Node }
			}{{"queue", c.Queue()}, {"dead-letter queue", c.DeadLetterQueue()}, {"subscription dead-letter queue", c.SubscriptionDeadLetterQueue()}} {
				p, js := properties(resource(t, f, q.queue))
				if p["FifoQueue"] != true || p["ContentBasedDeduplication"] != nil || p["QueueName"] != nil {
					t.Errorf("%s: %s; want FifoQueue, no ContentBasedDeduplication, a name CloudFormation generates", q.name, js)
				}
			}
			if !*c.Queue().Fifo() || !*c.DeadLetterQueue().Fifo() || !*c.SubscriptionDeadLetterQueue().Fifo() {
				t.Error("CDK does not see the queues as FIFO")
			}
			has(t, f, "AWS::SQS::Queue", map[string]any{
				"FifoQueue":     true,
				"RedrivePolicy": map[string]any{"deadLetterTargetArn": arn(id(f, c.DeadLetterQueue())), "maxReceiveCount": 5},
			})
			has(t, f, "AWS::SNS::Subscription", map[string]any{
				"Endpoint":      arn(id(f, c.Queue())),
				"RedrivePolicy": map[string]any{"deadLetterTargetArn": arn(id(f, c.SubscriptionDeadLetterQueue()))},
			})
			p, js := properties(resource(t, f, c.Function()))
			if env, _ := p["Environment"].(map[string]any)["Variables"].(map[string]any); env[contract.FIFOVar] != "true" {
				t.Errorf("function: %s; want %s=true", js, contract.FIFOVar)
			}
			cdktest.Must(t, func() {
				f.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
					"EventSourceArn":                 arn(id(f, c.Queue())),
					"BatchSize":                      10,
					"MaximumBatchingWindowInSeconds": assertions.Match_Absent(),
					"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
				})
			})
		})
	}
}

// TestFifoTopicTheConstructCreates: a FIFO topic whose name ends in ".fifo",
// with content-based deduplication (a topic setting), under the same
// construct ids as a standard consumer's resources.
func TestFifoTopicTheConstructCreates(t *testing.T) {
	f := fifos(t)
	c := f.consumers["ApplyPayment"]
	p, js := properties(resource(t, f, c.Topic()))
	name, _ := p["TopicName"].(string)
	if p["FifoTopic"] != true || p["ContentBasedDeduplication"] != true || !strings.HasSuffix(name, ".fifo") || p["MaximumMessageSize"] != float64(262144) {
		t.Errorf("topic: %s; want a FIFO topic named *.fifo with content-based deduplication and the handler's size", js)
	}
	for want, got := range map[string]constructs.Node{
		"Fifo/ApplyPayment/Topic":                       c.Topic().Node(),
		"Fifo/ApplyPayment/Queue":                       c.Queue().Node(),
		"Fifo/ApplyPayment/DeadLetterQueue":             c.DeadLetterQueue().Node(),
		"Fifo/ApplyPayment/SubscriptionDeadLetterQueue": c.SubscriptionDeadLetterQueue().Node(),
	} {
		if *got.Path() != want {
			t.Errorf("construct path %s, want %s", *got.Path(), want)
		}
	}
	// The topic of the app is left as it is.
	p, js = properties(resource(t, f, f.topic))
	if p["ContentBasedDeduplication"] != nil {
		t.Errorf("the app's topic: %s; the construct must not change it", js)
	}
}

// TestStandardQueueUnderAFifoTopic: the explicit choice gives standard
// queues, a handler not told FIFO, and the standard event source's batches.
func TestStandardQueueUnderAFifoTopic(t *testing.T) {
	f := fifos(t)
	c := f.consumers["AuditOrder"]
	for _, q := range []interface{ Node() constructs.Node }{c.Queue(), c.DeadLetterQueue(), c.SubscriptionDeadLetterQueue()} {
		if p, js := properties(resource(t, f, q)); p["FifoQueue"] != nil {
			t.Errorf("%s; want a standard queue", js)
		}
	}
	p, js := properties(resource(t, f, c.Function()))
	if env, _ := p["Environment"].(map[string]any)["Variables"].(map[string]any); env[contract.FIFOVar] != "false" {
		t.Errorf("function: %s; want %s=false", js, contract.FIFOVar)
	}
	cdktest.Must(t, func() {
		f.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"EventSourceArn":                 arn(id(f, c.Queue())),
			"BatchSize":                      100,
			"MaximumBatchingWindowInSeconds": 5,
		})
	})
}

// TestImportedTopicOfUnknownKind: a topic imported from a token ARN, with
// nothing said, gets a standard queue and a synth warning that says how to
// make it FIFO; the one that says FifoTopic gets no warning.
func TestImportedTopicOfUnknownKind(t *testing.T) {
	f := fifos(t)
	c := f.consumers["NotifyOrder"]
	if p, js := properties(resource(t, f, c.Queue())); p["FifoQueue"] != nil {
		t.Errorf("queue: %s; want a standard queue", js)
	}
	var warnings []string
	cdktest.Must(t, func() {
		for _, m := range *f.annotations.FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("FifoTopic"))) {
			//lint:ignore SA1019 the assertions API returns this type; there is no other (see cdktest.Findings).
			warnings = append(warnings, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
		}
	})
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "/Fifo/NotifyOrder:") || !strings.Contains(warnings[0], "set FifoTopic to true") {
		t.Fatalf("warnings %q; want one, on NotifyOrder, that says to set FifoTopic", warnings)
	}
}

// TestFifoBatchRulesReplaceTheStandardOnes: a FIFO queue's large batch is
// refused by the FIFO rule alone, never with the standard queue's fix (a
// batching window, which FIFO refuses); a standard queue under a FIFO
// topic keeps the standard rules.
func TestFifoBatchRulesReplaceTheStandardOnes(t *testing.T) {
	p := validProps()
	p.FifoTopic = jsii.Bool(true)
	p.BatchSize = jsii.Number(50)
	err := p.Validate(jsii.String("C"))
	if err == nil || !strings.Contains(err.Error(), "BatchSize 50 is more than 10") || strings.Contains(err.Error(), "needs a MaxBatchingWindow") {
		t.Fatalf("err %v; want the FIFO rule only", err)
	}
	p.StandardQueue = jsii.Bool(true)
	if err := p.Validate(jsii.String("C")); err == nil || !strings.Contains(err.Error(), "BatchSize 50 needs a MaxBatchingWindow") {
		t.Fatalf("err %v; want the standard rule", err)
	}
	p.MaxBatchingWindow = awscdk.Duration_Seconds(jsii.Number(5))
	if err := p.Validate(jsii.String("C")); err != nil {
		t.Fatalf("a standard queue under a FIFO topic may batch: %v", err)
	}
}

// A consumer of a FIFO topic the construct creates: its queues are FIFO, and
// publishers may leave MessageDeduplicationId out, since the topic
// deduplicates by content.
func ExampleIdempotentConsumerProps_fifoTopic() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Payments"), nil)
	apply := consumer.NewIdempotentConsumer(stack, jsii.String("ApplyPayment"), &consumer.IdempotentConsumerProps{
		Props:                     core.Props{Entry: jsii.String(handlerDir)},
		FifoTopic:                 jsii.Bool(true),
		ContentBasedDeduplication: jsii.Bool(true),
	})
	fmt.Println("topic:", *apply.Topic().Fifo())
	fmt.Println("queue:", *apply.Queue().Fifo())
	fmt.Println("dead-letter queues:", *apply.DeadLetterQueue().Fifo(), *apply.SubscriptionDeadLetterQueue().Fifo())
	// Output:
	// topic: true
	// queue: true
	// dead-letter queues: true true
}

// TestFifoRulesRefuse: the rules of fifo.go.
func TestFifoRulesRefuse(t *testing.T) {
	failsWhen(t, []refusal{{
		name: "a FIFO queue's batch over 10",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.FifoTopic = jsii.Bool(true)
			p.BatchSize = jsii.Number(20)
		},
		want: []string{"BatchSize 20 is more than 10, the most the event source of an SQS FIFO queue takes in one batch", "give a BatchSize of at most 10"},
	}, {
		name: "a FIFO queue's batching window",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Topic = awssns.NewTopic(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Orders"), &awssns.TopicProps{Fifo: jsii.Bool(true)})
			p.BatchSize = jsii.Number(100)
			p.MaxBatchingWindow = awscdk.Duration_Seconds(jsii.Number(5))
		},
		want: []string{"BatchSize 100 is more than 10", "MaxBatchingWindow is 5s, but the event source of an SQS FIFO queue takes no batching window", "leave MaxBatchingWindow nil"},
	}, {
		name: "FifoTopic contradicts a FIFO topic",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Topic = awssns.NewTopic(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Orders"), &awssns.TopicProps{Fifo: jsii.Bool(true)})
			p.FifoTopic = jsii.Bool(false)
		},
		want: []string{"FifoTopic is false, but Topic is a FIFO topic", "leave FifoTopic nil"},
	}, {
		name: "FifoTopic contradicts a standard topic",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Topic = awssns.Topic_FromTopicArn(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Orders"), jsii.String("arn:aws:sns:eu-west-1:123456789012:orders"))
			p.FifoTopic = jsii.Bool(true)
		},
		want: []string{"FifoTopic is true, but Topic is a standard topic"},
	}, {
		name: "content-based deduplication of a given topic",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Topic = awssns.NewTopic(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Orders"), &awssns.TopicProps{Fifo: jsii.Bool(true)})
			p.ContentBasedDeduplication = jsii.Bool(true)
		},
		want: []string{"ContentBasedDeduplication is set with a given Topic", "set it on that topic"},
	}, {
		name:   "content-based deduplication of a standard topic",
		change: func(p *consumer.IdempotentConsumerProps) { p.ContentBasedDeduplication = jsii.Bool(true) },
		want:   []string{"ContentBasedDeduplication needs a FIFO topic", "set FifoTopic to true as well"},
	}})
}
