package consumer_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// The fixtures of package consumertest's sources other than a topic.
func eventBridge(t *testing.T) *fixture { return load(t, "EventBridge") }
func buckets(t *testing.T) *fixture     { return load(t, "Bucket") }
func direct(t *testing.T) *fixture      { return load(t, "Direct") }

// TestSourceSnapshots pins each source's template (-update rewrites the
// golden files; asset hashes are masked).
func TestSourceSnapshots(t *testing.T) {
	for name, f := range map[string]func(*testing.T) *fixture{"EventBridge": eventBridge, "Bucket": buckets, "Direct": direct} {
		t.Run(name, func(t *testing.T) {
			cdktest.Snapshot(t, cdktest.Template(t, f(t).stack), "testdata/"+name+".template.json")
		})
	}
}

// resources are the template's resources, by logical id.
func resources(t *testing.T, f *fixture) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for id, r := range cdktest.Template(t, f.stack)["Resources"].(map[string]any) {
		out[id] = r.(map[string]any)
	}
	return out
}

// props is a resource's Properties.
func props(r map[string]any) map[string]any { p, _ := r["Properties"].(map[string]any); return p }

// statements are the statements of a policy resource's document (a queue
// policy's PolicyDocument, a key's KeyPolicy) that name principal.
func statements(r map[string]any, principal string) []map[string]any {
	doc, _ := props(r)["PolicyDocument"].(map[string]any)
	if doc == nil {
		doc, _ = props(r)["KeyPolicy"].(map[string]any)
	}
	var out []map[string]any
	for _, s := range doc["Statement"].([]any) {
		st := s.(map[string]any)
		if p, ok := st["Principal"].(map[string]any); ok && p["Service"] == principal {
			out = append(out, st)
		}
	}
	return out
}

// policyOf is the queue policy resource of the queue with logicalID.
func policyOf(t *testing.T, rs map[string]map[string]any, queueID string) map[string]any {
	t.Helper()
	for _, r := range rs {
		if r["Type"] == "AWS::SQS::QueuePolicy" && reflect.DeepEqual(props(r)["Queues"], []any{ref(queueID)}) {
			return r
		}
	}
	t.Fatalf("no queue policy for %s", queueID)
	return nil
}

// variables are the function's environment of consumer c.
func variables(t *testing.T, f *fixture, c consumer.IdempotentConsumer) map[string]any {
	t.Helper()
	fn := resources(t, f)[id(f, c.Function())]
	return props(fn)["Environment"].(map[string]any)["Variables"].(map[string]any)
}

// TestEventBridgeRuleTargetsTheQueueWithADeadLetterQueueAndRetries: the
// rule's target is the queue, with the target's own (standard) dead-letter
// queue and the retry policy (EventBridge's defaults, or the props), a FIFO
// queue's message group id, and content-based deduplication on that queue.
func TestEventBridgeRuleTargetsTheQueueWithADeadLetterQueueAndRetries(t *testing.T) {
	f := eventBridge(t)
	rs := resources(t, f)
	for name, want := range map[string]struct {
		attempts, age float64
		group         string
		fifo          bool
	}{
		"BookOrder":  {185, 86400, "", false},
		"AuditOrder": {185, 86400, "", false},
		"ShipOrder":  {10, 7200, "$.detail.customerId", true},
	} {
		c := f.consumers[name]
		if c.Topic() != nil || c.SubscriptionDeadLetterQueue() != nil || c.Alarms().SubscriptionDeadLetterQueue != nil {
			t.Errorf("%s: a topic's resources on an EventBridge consumer", name)
		}
		rule := props(rs[id(f, c.Rule())])
		targets := rule["Targets"].([]any)
		if len(targets) != 1 {
			t.Fatalf("%s: %d targets, want 1", name, len(targets))
		}
		target := targets[0].(map[string]any)
		queue, dlq := id(f, c.Queue()), id(f, c.EventDeadLetterQueue())
		if !reflect.DeepEqual(target["Arn"], arn(queue)) || !reflect.DeepEqual(target["DeadLetterConfig"], map[string]any{"Arn": arn(dlq)}) {
			t.Errorf("%s: target %v, want the queue %s with the dead-letter queue %s", name, target, queue, dlq)
		}
		if got := target["RetryPolicy"]; !reflect.DeepEqual(got, map[string]any{"MaximumRetryAttempts": want.attempts, "MaximumEventAgeInSeconds": want.age}) {
			t.Errorf("%s: RetryPolicy %v, want %v attempts over %vs", name, got, want.attempts, want.age)
		}
		if got, _ := target["SqsParameters"].(map[string]any); (want.group == "") != (got == nil) || (got != nil && got["MessageGroupId"] != want.group) {
			t.Errorf("%s: SqsParameters %v, want MessageGroupId %q", name, got, want.group)
		}
		q, d := props(rs[queue]), props(rs[dlq])
		if (q["FifoQueue"] == true) != want.fifo || (q["ContentBasedDeduplication"] == true) != want.fifo {
			t.Errorf("%s: queue FifoQueue %v ContentBasedDeduplication %v, want both %t", name, q["FifoQueue"], q["ContentBasedDeduplication"], want.fifo)
		}
		if d["FifoQueue"] != nil || d["MaximumMessageSize"] != float64(1048576) {
			t.Errorf("%s: the target's dead-letter queue %v, want a standard queue of 1 MiB", name, d)
		}
		if got := variables(t, f, c)[contract.DeliveryVar]; got != "eventbridge" {
			t.Errorf("%s: %s = %v, want eventbridge", name, contract.DeliveryVar, got)
		}
	}
	if got := variables(t, f, f.consumers["ShipOrder"])[contract.FIFOVar]; got != "true" {
		t.Errorf("ShipOrder: %s = %v, want true", contract.FIFOVar, got)
	}
}

// TestEventBridgePoliciesAreConditionedOnTheRule: both queues' policies let
// events.amazonaws.com send from the consumer's rule only, with a
// customer-managed key too (aws-cdk's SqsQueue target drops the condition
// then, #11158); the key lets EventBridge use it from the account's rules.
func TestEventBridgePoliciesAreConditionedOnTheRule(t *testing.T) {
	f := eventBridge(t)
	rs := resources(t, f)
	for _, name := range []string{"BookOrder", "ShipOrder", "AuditOrder"} {
		c := f.consumers[name]
		for _, q := range []awssqs.IQueue{c.Queue(), c.EventDeadLetterQueue()} {
			sts := statements(policyOf(t, rs, id(f, q)), "events.amazonaws.com")
			want := map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": arn(id(f, c.Rule()))}}
			if len(sts) != 1 || sts[0]["Action"] != "sqs:SendMessage" || !reflect.DeepEqual(sts[0]["Condition"], want) {
				t.Errorf("%s: %s's statements for EventBridge %v, want one sqs:SendMessage conditioned on %v", name, *q.Node().Path(), sts, want)
			}
		}
	}
	sts := statements(rs[id(f, f.key)], "events.amazonaws.com")
	want := map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": ref("AWS::AccountId")}}
	if len(sts) != 1 || !reflect.DeepEqual(sts[0]["Condition"], want) || !reflect.DeepEqual(sts[0]["Action"], []any{"kms:Decrypt", "kms:GenerateDataKey*"}) {
		t.Errorf("key statements for EventBridge %v, want kms:Decrypt and kms:GenerateDataKey* conditioned on %v", sts, want)
	}
	if cycle := dependencyCycle(rs); cycle != nil {
		t.Errorf("the template has a dependency cycle: %s", strings.Join(cycle, " → "))
	}
}

// TestEventBridgeAlarmsWatchTheRule: the rule's three failure metrics and
// its dead-letter queue's depth are alarmed (RuleName alone on the default
// bus; a custom bus's name and the rule's name, split from its Ref, on a
// custom bus), on the consumer's dashboard too.
func TestEventBridgeAlarmsWatchTheRule(t *testing.T) {
	f := eventBridge(t)
	rs := resources(t, f)
	ruleName := func(c consumer.IdempotentConsumer, custom bool) any {
		if !custom {
			return ref(id(f, c.Rule()))
		}
		return map[string]any{"Fn::Select": []any{float64(1), map[string]any{"Fn::Split": []any{"|", ref(id(f, c.Rule()))}}}}
	}
	for name, bus := range map[string]any{"BookOrder": nil, "ShipOrder": ref(id(f, f.stack.Node().FindChild(jsii.String("Orders")).(awsevents.EventBus))), "AuditOrder": "audit"} {
		c := f.consumers[name]
		a := c.Alarms()
		for metric, alarm := range map[string]string{
			"FailedInvocations":              id(f, a.EventFailedInvocations),
			"InvocationsSentToDlq":           id(f, a.EventSentToDeadLetterQueue),
			"InvocationsFailedToBeSentToDlq": id(f, a.EventFailedToDeadLetterQueue),
		} {
			p := props(rs[alarm])
			want := []any{map[string]any{"Name": "RuleName", "Value": ruleName(c, bus != nil)}}
			if bus != nil {
				want = []any{map[string]any{"Name": "EventBusName", "Value": bus}, want[0]}
			}
			if p["MetricName"] != metric || p["Namespace"] != "AWS/Events" || p["Threshold"] != float64(0) || !reflect.DeepEqual(p["Dimensions"], want) {
				t.Errorf("%s: alarm %s: %v, want %s in AWS/Events > 0 with %v", name, alarm, p, metric, want)
			}
		}
		p := props(rs[id(f, a.EventDeadLetterQueue)])
		if p["MetricName"] != "ApproximateNumberOfMessagesVisible" || !reflect.DeepEqual(p["Dimensions"], []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{id(f, c.EventDeadLetterQueue()), "QueueName"}}}}) {
			t.Errorf("%s: the target dead-letter queue's alarm %v", name, p)
		}
		if got := len(a.All()); got != 13 {
			t.Errorf("%s: %d alarms, want 13 (the queue's nine and the rule's four)", name, got)
		}
	}
	board, _ := json.Marshal(props(rs[id(f, f.consumers["ShipOrder"].Dashboard())])["DashboardBody"])
	for _, w := range []string{"InvocationsFailedToBeSentToDlq", "Rule target dead-letter queue"} {
		if !strings.Contains(string(board), w) {
			t.Errorf("ShipOrder's dashboard has no %q", w)
		}
	}
}

// TestBucketNotifiesTheQueueFromTheBucketOfTheAccount: the notifications
// of each consumer (its event types × its filters) go to its queue, after
// the queue's policy lets s3.amazonaws.com send from the bucket
// (aws:SourceArn) of the account (aws:SourceAccount); an imported bucket
// keeps its other notifications (Managed false); a customer-managed key
// lets S3 use it.
func TestBucketNotifiesTheQueueFromTheBucketOfTheAccount(t *testing.T) {
	f := buckets(t)
	rs := resources(t, f)
	type config struct{ events, prefix, suffix string }
	got := map[string][]config{}
	managed := map[string]any{}
	for lid, r := range rs {
		if r["Type"] != "Custom::S3BucketNotifications" {
			continue
		}
		managed[lid] = props(r)["Managed"]
		for _, qc := range props(r)["NotificationConfiguration"].(map[string]any)["QueueConfigurations"].([]any) {
			q := qc.(map[string]any)
			c := config{events: fmt.Sprint(q["Events"])}
			if fl, ok := q["Filter"].(map[string]any); ok {
				for _, fr := range fl["Key"].(map[string]any)["FilterRules"].([]any) {
					rule := fr.(map[string]any)
					if rule["Name"] == "prefix" {
						c.prefix = rule["Value"].(string)
					} else {
						c.suffix = rule["Value"].(string)
					}
				}
			}
			queue := q["QueueArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
			got[queue] = append(got[queue], c)
			if deps := fmt.Sprint(r["DependsOn"]); !strings.Contains(deps, id(f, f.consumers["ImportInvoice"].Queue().Node().FindChild(jsii.String("Policy")).(awssqs.QueuePolicy))) && queue == id(f, f.consumers["ImportInvoice"].Queue()) {
				t.Errorf("the notification to ImportInvoice's queue does not wait for its policy: DependsOn %s", deps)
			}
		}
	}
	want := map[string][]config{
		id(f, f.consumers["ImportInvoice"].Queue()): {{"[s3:ObjectCreated:*]", "invoices/", ".pdf"}},
		id(f, f.consumers["FileReceipt"].Queue()):   {{"[s3:ObjectCreated:Put]", "receipts/", ""}, {"[s3:ObjectRemoved:*]", "receipts/", ""}},
		id(f, f.consumers["ProcessImage"].Queue()):  {{"[s3:ObjectCreated:*]", "images/", ""}},
	}
	for q := range got {
		sort.Slice(got[q], func(i, j int) bool { return got[q][i].events < got[q][j].events })
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("notifications %v, want %v", got, want)
	}
	if fmt.Sprint(managed) != "map[ImagesNotifications39FDB6D1:false UploadsNotifications8DBDDF22:true]" {
		t.Errorf("Managed %v: want the imported bucket's other notifications kept (false), the app's bucket's managed", managed)
	}
	for name, bucketArn := range map[string]any{
		"ImportInvoice": arn(id(f, f.stack.Node().FindChild(jsii.String("Uploads")).(awss3.Bucket))),
		"ProcessImage":  map[string]any{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":s3:::images-123456789012"}}},
	} {
		c := f.consumers[name]
		sts := statements(policyOf(t, rs, id(f, c.Queue())), "s3.amazonaws.com")
		want := map[string]any{"ArnLike": map[string]any{"aws:SourceArn": bucketArn}, "StringEquals": map[string]any{"aws:SourceAccount": ref("AWS::AccountId")}}
		if len(sts) != 1 || sts[0]["Action"] != "sqs:SendMessage" || !reflect.DeepEqual(sts[0]["Condition"], want) {
			t.Errorf("%s: the queue's statements for S3 %v, want one sqs:SendMessage conditioned on %v", name, sts, want)
		}
		if got := variables(t, f, c)[contract.DeliveryVar]; got != "s3" {
			t.Errorf("%s: %s = %v, want s3", name, contract.DeliveryVar, got)
		}
	}
	if sts := statements(rs[id(f, f.key)], "s3.amazonaws.com"); len(sts) != 1 {
		t.Errorf("key statements for S3 %v, want one", sts)
	}
	if cycle := dependencyCycle(rs); cycle != nil {
		t.Errorf("the template has a dependency cycle: %s", strings.Join(cycle, " → "))
	}
}

// TestDirectProducersSendToTheQueue: no topic, rule or notification; the
// producers' grant is on the queue; the handler reads raw bodies; a FIFO
// queue may deduplicate the business message by its content.
func TestDirectProducersSendToTheQueue(t *testing.T) {
	f := direct(t)
	rs := resources(t, f)
	for _, typ := range []string{"AWS::SNS::Topic", "AWS::SNS::Subscription", "AWS::Events::Rule", "Custom::S3BucketNotifications"} {
		count(t, f, typ, 0)
	}
	count(t, f, "AWS::SQS::Queue", 4)
	for name, c := range f.consumers {
		if got := variables(t, f, c)[contract.DeliveryVar]; got != "raw" {
			t.Errorf("%s: %s = %v, want raw", name, contract.DeliveryVar, got)
		}
		granted := false
		for lid, r := range rs {
			if r["Type"] != "AWS::IAM::Policy" || !strings.HasPrefix(lid, "ProducerDefaultPolicy") {
				continue
			}
			for _, st := range props(r)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				b, _ := json.Marshal(st)
				granted = granted || strings.Contains(string(b), `"sqs:SendMessage"`) && strings.Contains(string(b), `"`+id(f, c.Queue())+`"`)
			}
		}
		if !granted {
			t.Errorf("%s: the producer may not send to the queue", name)
		}
		msg, panicked := cdktest.Panics(func() { c.GrantPublish(c) })
		if !panicked || !strings.Contains(msg, "GrantSendMessages") {
			t.Errorf("%s: GrantPublish: %q, want a refusal that names GrantSendMessages", name, msg)
		}
	}
	q := props(rs[id(f, f.consumers["TakeOrderedPayment"].Queue())])
	if q["FifoQueue"] != true || q["ContentBasedDeduplication"] != true {
		t.Errorf("TakeOrderedPayment's queue %v, want FIFO with content-based deduplication", q)
	}
}

// TestConstructIDsOfTheSourcesAreStable: the ids of the sources'
// resources are part of the public contract.
func TestConstructIDsOfTheSourcesAreStable(t *testing.T) {
	c := eventBridge(t).consumers["BookOrder"]
	a := c.Alarms()
	for want, got := range map[string]string{
		"EventBridge/BookOrder/Rule":                              *c.Rule().Node().Path(),
		"EventBridge/BookOrder/EventDeadLetterQueue":              *c.EventDeadLetterQueue().Node().Path(),
		"EventBridge/BookOrder/EventFailedInvocationsAlarm":       *a.EventFailedInvocations.Node().Path(),
		"EventBridge/BookOrder/EventSentToDeadLetterQueueAlarm":   *a.EventSentToDeadLetterQueue.Node().Path(),
		"EventBridge/BookOrder/EventFailedToDeadLetterQueueAlarm": *a.EventFailedToDeadLetterQueue.Node().Path(),
		"EventBridge/BookOrder/EventDeadLetterQueueAlarm":         *a.EventDeadLetterQueue.Node().Path(),
	} {
		if got != want {
			t.Errorf("construct path %s, want %s", got, want)
		}
	}
}

// dependencyCycle returns a cycle of the template's resources (by Ref,
// Fn::GetAtt and DependsOn), or nil: CloudFormation refuses a template
// with one, and CDK's synth does not.
func dependencyCycle(rs map[string]map[string]any) []string {
	deps := map[string][]string{}
	var walk func(from string, v any)
	walk = func(from string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["Ref"].(string); ok && rs[r] != nil {
				deps[from] = append(deps[from], r)
			}
			if g, ok := v["Fn::GetAtt"].([]any); ok && len(g) > 0 {
				if r, _ := g[0].(string); rs[r] != nil {
					deps[from] = append(deps[from], r)
				}
			}
			for _, e := range v {
				walk(from, e)
			}
		case []any:
			for _, e := range v {
				walk(from, e)
			}
		}
	}
	ids := make([]string, 0, len(rs))
	for lid, r := range rs {
		ids = append(ids, lid)
		walk(lid, r["Properties"])
		switch d := r["DependsOn"].(type) {
		case string:
			deps[lid] = append(deps[lid], d)
		case []any:
			for _, e := range d {
				deps[lid] = append(deps[lid], e.(string))
			}
		}
	}
	sort.Strings(ids)
	state := map[string]int{} // 1 on the path, 2 done
	var path []string
	var visit func(string) []string
	visit = func(n string) []string {
		switch state[n] {
		case 1:
			for i, p := range path {
				if p == n {
					return append(append([]string{}, path[i:]...), n)
				}
			}
		case 2:
			return nil
		}
		state[n] = 1
		path = append(path, n)
		for _, d := range deps[n] {
			if c := visit(d); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[n] = 2
		return nil
	}
	for _, n := range ids {
		if c := visit(n); c != nil {
			return c
		}
	}
	return nil
}

// TestDependencyCycleFindsACycle: the cycle check can fail.
func TestDependencyCycleFindsACycle(t *testing.T) {
	rs := map[string]map[string]any{
		"Key":    {"Properties": map[string]any{"KeyPolicy": map[string]any{"Condition": map[string]any{"ArnEquals": arn("Rule")}}}},
		"Rule":   {"Properties": map[string]any{"Targets": []any{map[string]any{"Arn": arn("Queue")}}}},
		"Queue":  {"Properties": map[string]any{"KmsMasterKeyId": arn("Key")}},
		"Policy": {"Properties": map[string]any{"Queues": []any{ref("Queue")}}, "DependsOn": []any{"Rule"}},
	}
	if got := strings.Join(dependencyCycle(rs), " → "); got != "Key → Rule → Queue → Key" {
		t.Errorf("cycle %q, want Key → Rule → Queue → Key", got)
	}
	delete(rs["Key"], "Properties")
	if got := dependencyCycle(rs); got != nil {
		t.Errorf("cycle %v in a template without one", got)
	}
}

// TestSourcesRefuse: one source, and each source's rules.
func TestSourcesRefuse(t *testing.T) {
	stack := awscdk.NewStack(nil, jsii.String("Refusals"), nil)
	orders := &awsevents.EventPattern{Source: jsii.Strings("orders")}
	bucket := awss3.Bucket_FromBucketName(stack, jsii.String("B"), jsii.String("uploads"))
	fifo := &awssqs.QueueProps{Fifo: jsii.Bool(true)}
	failsWhen(t, []refusal{{
		name: "a topic and an event pattern",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Topic = awssns.NewTopic(stack, jsii.String("T"), nil)
			p.EventPattern = orders
		},
		want: []string{"the props declare 2 sources: an SNS topic (Topic) and an EventBridge rule (EventPattern)", "give each other source an IdempotentConsumer of its own"},
	}, {
		name:   "raw delivery and a bucket",
		change: func(p *consumer.IdempotentConsumerProps) { p.RawMessageDelivery = jsii.Bool(true); p.Bucket = bucket },
		want:   []string{"an SNS topic (RawMessageDelivery) and an S3 bucket (Bucket)"},
	}, {
		name:   "direct producers and a bucket",
		change: func(p *consumer.IdempotentConsumerProps) { p.DirectProducers = jsii.Bool(true); p.Bucket = bucket },
		want:   []string{"an S3 bucket (Bucket) and direct producers (DirectProducers)"},
	}, {
		name: "a bus without a pattern",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventBus = awsevents.NewEventBus(stack, jsii.String("Bus"), nil)
		},
		want: []string{"EventBus is given without EventPattern", "set EventPattern"},
	}, {
		name: "retry attempts above 185",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern = orders
			p.EventRetryAttempts = jsii.Number(186)
		},
		want: []string{"EventRetryAttempts 186 is out of range", "0 to 185"},
	}, {
		name: "an event age under a minute",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern = orders
			p.EventMaxAge = awscdk.Duration_Seconds(jsii.Number(30))
		},
		want: []string{"EventMaxAge 30s is out of range", "from 1m to 24h"},
	}, {
		name:   "a FIFO queue without a message group",
		change: func(p *consumer.IdempotentConsumerProps) { p.EventPattern = orders; p.QueueProps = fifo },
		want:   []string{"the queue is FIFO, and EventBridge sends to a FIFO queue only with a message group id", "set EventMessageGroupId"},
	}, {
		name: "a message group on a standard queue",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern = orders
			p.EventMessageGroupId = jsii.String("$.detail.id")
		},
		want: []string{`EventMessageGroupId "$.detail.id" is given, but the queue is standard`},
	}, {
		name: "a message group that is no path EventBridge evaluates",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern, p.QueueProps = orders, fifo
			p.EventMessageGroupId = jsii.String("$.detail.*")
		},
		want: []string{`EventMessageGroupId "$.detail.*" is not a JSON path EventBridge evaluates`, "no wildcard"},
	}, {
		name: "content-based deduplication turned off on an EventBridge FIFO queue",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern, p.EventMessageGroupId = orders, jsii.String("$.detail.id")
			p.QueueProps = &awssqs.QueueProps{Fifo: jsii.Bool(true), ContentBasedDeduplication: jsii.Bool(false)}
		},
		want: []string{"QueueProps.ContentBasedDeduplication is false", "the construct sets it"},
	}, {
		name: "a FIFO queue of the app without content-based deduplication",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern, p.EventMessageGroupId = orders, jsii.String("$.detail.id")
			dlq := awssqs.NewQueue(stack, jsii.String("ShipDLQ"), &awssqs.QueueProps{Fifo: jsii.Bool(true)})
			p.Queue = awssqs.NewQueue(stack, jsii.String("Ship"), &awssqs.QueueProps{Fifo: jsii.Bool(true), VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(3)),
				DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(5)}})
		},
		want: []string{"is a FIFO queue without content-based deduplication", "set ContentBasedDeduplication on the queue"},
	}, {
		name: "alias/aws/sqs for EventBridge",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern = orders
			p.EncryptionKey = awskms.Alias_FromAliasName(stack, jsii.String("SQSKey"), jsii.String("alias/aws/sqs"))
		},
		want: []string{"EncryptionKey encrypts the queue with the AWS-managed key alias/aws/sqs", "events.amazonaws.com", "SSE-SQS (the default)"},
	}, {
		name: "KMS_MANAGED for a bucket",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Bucket = bucket
			p.QueueProps = &awssqs.QueueProps{Encryption: awssqs.QueueEncryption_KMS_MANAGED}
		},
		want: []string{"QueueProps.Encryption KMS_MANAGED encrypts the queue with the AWS-managed key alias/aws/sqs", "s3.amazonaws.com"},
	}, {
		name:   "a FIFO queue for a bucket",
		change: func(p *consumer.IdempotentConsumerProps) { p.Bucket = bucket; p.QueueProps = fifo },
		want:   []string{"S3 cannot send event notifications to a FIFO queue", "give a standard queue"},
	}, {
		name:   "no event types",
		change: func(p *consumer.IdempotentConsumerProps) { p.Bucket = bucket; p.BucketEvents = &[]awss3.EventType{} },
		want:   []string{"BucketEvents is empty"},
	}, {
		name: "filters without a bucket",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.BucketFilters = &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String("a/")}}
		},
		want: []string{"BucketFilters is given without Bucket"},
	}, {
		name: "filters that overlap",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Bucket = bucket
			p.BucketEvents = &[]awss3.EventType{awss3.EventType_OBJECT_CREATED, awss3.EventType_OBJECT_CREATED_PUT}
			p.BucketFilters = &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String("in/")}}
		},
		want: []string{`s3:ObjectCreated:* (prefix "in/", suffix "") and s3:ObjectCreated:Put (prefix "in/", suffix "")`, "S3 refuses overlapping prefixes and suffixes"},
	}, {
		name: "a filter that filters nothing",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Bucket = bucket
			p.BucketFilters = &[]*awss3.NotificationKeyFilter{{}}
		},
		want: []string{"BucketFilters[0] has neither Prefix nor Suffix"},
	}})
}

// TestBucketNotificationsThatOverlapAnotherConsumersAreRefused: S3
// refuses overlapping notifications on one bucket, so two consumers of the
// app whose filters overlap are refused at synth, and so is a bucket of
// another Region.
func TestBucketNotificationsThatOverlapAnotherConsumersAreRefused(t *testing.T) {
	msg, panicked := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "overlap"))
		if err != nil {
			panic(err)
		}
		stack := awscdk.NewStack(app, jsii.String("S"), nil)
		bucket := awss3.Bucket_FromBucketName(stack, jsii.String("B"), jsii.String("uploads"))
		for i, prefix := range []string{"invoices/", "invoices/2026/"} {
			consumer.NewIdempotentConsumer(stack, jsii.String(fmt.Sprintf("C%d", i)), &consumer.IdempotentConsumerProps{
				Props:         core.Props{Entry: jsii.String(handlerDir)},
				Bucket:        bucket,
				BucketFilters: &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String(prefix)}},
			})
		}
	})
	if !panicked || !strings.Contains(msg, `IdempotentConsumer "C1": its notification s3:ObjectCreated:* (prefix "invoices/2026/", suffix "") on the bucket overlaps s3:ObjectCreated:* (prefix "invoices/", suffix "") of consumer S/C0`) {
		t.Errorf("two consumers with overlapping filters: %q, want the second refused", msg)
	}
	msg, panicked = cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "region"))
		if err != nil {
			panic(err)
		}
		stack := awscdk.NewStack(app, jsii.String("S"), &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("eu-west-1")}})
		bucket := awss3.Bucket_FromBucketAttributes(stack, jsii.String("B"), &awss3.BucketAttributes{BucketName: jsii.String("uploads"), Region: jsii.String("us-east-1")})
		consumer.NewIdempotentConsumer(stack, jsii.String("C"), &consumer.IdempotentConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Bucket: bucket})
	})
	if !panicked || !strings.Contains(msg, "Bucket is in Region us-east-1 and the consumer's queue in eu-west-1") {
		t.Errorf("a bucket of another Region: %q, want it refused", msg)
	}
}

// TestSourcePolicyUnwritableWarns: with an imported queue, an EventBridge
// source warns that the queue's policy must already let the rule send.
func TestSourcePolicyUnwritableWarns(t *testing.T) {
	app, err := cdktest.NewApp(filepath.Join(outRoot, "unwritable"))
	if err != nil {
		t.Fatal(err)
	}
	stack := awscdk.NewStack(app, jsii.String("S"), nil)
	consumer.NewIdempotentConsumer(stack, jsii.String("C"), &consumer.IdempotentConsumerProps{
		Props:             core.Props{Entry: jsii.String(handlerDir)},
		EventPattern:      &awsevents.EventPattern{Source: jsii.Strings("orders")},
		Queue:             awssqs.Queue_FromQueueArn(stack, jsii.String("Q"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:q")),
		DeadLetterQueue:   awssqs.Queue_FromQueueArn(stack, jsii.String("D"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:d")),
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(3)),
	})
	found := false
	for _, m := range *stack.Node().FindChild(jsii.String("C")).Node().Metadata() {
		if s := fmt.Sprint(m.Data); strings.Contains(s, "Queue is imported, so the construct cannot add to its policy") && strings.Contains(s, "events.amazonaws.com") {
			found = true
		}
	}
	if !found {
		t.Error("no warning that the imported queue's policy must already let EventBridge send")
	}
}

// TestEventBridgeQueueSizeTakesTheEvent: a given queue must take the
// largest event the rule delivers, the detail (MaxMessageBytes) and the
// event's other fields (contract.EventOverheadBytes).
func TestEventBridgeQueueSizeTakesTheEvent(t *testing.T) {
	stack := awscdk.NewStack(nil, jsii.String("Sizes"), nil)
	failsWhen(t, []refusal{{
		name: "a queue of the app that takes the detail but not the event",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EventPattern = &awsevents.EventPattern{Source: jsii.Strings("orders")}
			dlq := awssqs.NewQueue(stack, jsii.String("DLQ"), &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
			p.Queue = awssqs.NewQueue(stack, jsii.String("Q"), &awssqs.QueueProps{MaxMessageSizeBytes: jsii.Number(262144),
				VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(3)), DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(5)}})
		},
		want: []string{"262144", fmt.Sprint(262144 + contract.EventOverheadBytes)},
	}})
}
