package consumer_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

func TestDashboardShowsOutcomesQueuesAndFunction(t *testing.T) {
	f := dashboard(t)
	count(t, f, "AWS::CloudWatch::Dashboard", 1)
	var body string
	cdktest.Must(t, func() {
		for _, d := range *f.template.FindResources(jsii.String("AWS::CloudWatch::Dashboard"), nil) {
			b, _ := json.Marshal((*d)["Properties"].(map[string]any)["DashboardBody"])
			body = string(b)
		}
	})
	var titles []string
	for _, m := range regexp.MustCompile(`\\"title\\":\\"([^\\]*)\\"`).FindAllStringSubmatch(body, -1) {
		titles = append(titles, m[1])
	}
	want := []string{"Effects run and duplicates absorbed", "Over the time range", "Outcomes retried or dead-lettered",
		"Dead-letter queues (messages)", "Oldest message age (seconds)", "Invocation errors and throttles", "Duration (ms)", "Alarms"}
	if fmt.Sprint(titles) != fmt.Sprint(want) {
		t.Errorf("widget titles %q, want %q", titles, want)
	}
	for _, metric := range []string{`\"Payments\",\"Duplicate\",\"Consumer\",\"Dashboard/Watched\"`, `\"AWS/SQS\",\"ApproximateNumberOfMessagesVisible\"`,
		`\"AWS/Lambda\",\"Throttles\"`, `\"Payments\",\"BatchDuration\"`,
		`\"Payments\",\"Expired\",\"Consumer\",\"Dashboard/Watched\"`, `\"Payments\",\"DeadLetteredUnstarted\",\"Consumer\",\"Dashboard/Watched\"`} {
		if !strings.Contains(body, metric) {
			t.Errorf("the dashboard has no metric %s", metric)
		}
	}
	rows := f.consumer.Widgets()
	for i, row := range rows {
		width := 0.0
		for _, w := range row {
			width += *w.Width()
		}
		if width != 24 {
			t.Errorf("row %d is %v wide, want 24", i, width)
		}
	}
	t.Logf("widgets: %q", titles)
}

func TestMetricOutcomeRefusesWhatIsNotAnOutcome(t *testing.T) {
	f := dashboard(t)
	msg, panicked := cdktest.Panics(func() { f.consumer.MetricOutcome(outcome.Outcome(99), nil) })
	if !panicked || !strings.Contains(msg, "MetricOutcome(99): not an outcome") {
		t.Errorf("panic %q", msg)
	}
}

func TestAGivenQueueIsConsumedWithItsDeadLetterQueue(t *testing.T) {
	f := ownQueue(t)
	queue, dlq := f.stack.Node().FindChild(jsii.String("Payments")).(awssqs.Queue), f.stack.Node().FindChild(jsii.String("PaymentsDLQ")).(awssqs.Queue)
	if got := *f.consumer.Queue().Node().Path(); got != *queue.Node().Path() {
		t.Errorf("Queue() is %s", got)
	}
	if got := *f.consumer.DeadLetterQueue().Node().Path(); got != *dlq.Node().Path() {
		t.Errorf("DeadLetterQueue() is %s", got)
	}
	count(t, f, "AWS::SQS::Queue", 3) // the app's two, the subscription's dead-letter queue
	has(t, f, "AWS::SNS::Subscription", map[string]any{"Endpoint": arn(id(f, queue))})
	has(t, f, "AWS::Lambda::EventSourceMapping", map[string]any{"EventSourceArn": arn(id(f, queue))})
	has(t, f, "AWS::CloudWatch::Alarm", map[string]any{
		"AlarmDescription": "Pay: messages the consumer failed to process 3 times are in the dead-letter queue.",
		"Dimensions":       []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{id(f, dlq), "QueueName"}}}},
	})
	cdktest.Must(t, func() {
		f.template.HasResource(jsii.String("AWS::SQS::Queue"), map[string]any{
			"Properties": map[string]any{"MessageRetentionPeriod": 1209600},
			"Metadata":   map[string]any{"cdk_nag": map[string]any{"rules_to_suppress": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{"id": "Serverless-SQSRedrivePolicy"})})}},
		})
	})
}

func TestTheConsumerIsGrantable(t *testing.T) {
	f := ownQueue(t)
	if got, want := f.consumer.GrantPrincipal(), f.consumer.Role().GrantPrincipal(); *got.(awsiam.IRole).RoleArn() != *want.(awsiam.IRole).RoleArn() {
		t.Errorf("GrantPrincipal() is not the role's principal")
	}
	has(t, f, "AWS::IAM::Policy", map[string]any{
		"Roles": []any{ref(id(f, f.consumer.Role()))},
		"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
			"Action":   assertions.Match_ArrayWith(&[]any{"dynamodb:GetItem", "dynamodb:Query"}),
			"Resource": arn(id(f, f.ledger)),
		})})},
	})
}

func TestAnImportedQueueIsTakenWithItsDeclarations(t *testing.T) {
	f := imported(t)
	count(t, f, "AWS::SQS::Queue", 1) // the subscription's dead-letter queue only
	has(t, f, "AWS::Lambda::EventSourceMapping", map[string]any{"EventSourceArn": "arn:aws:sqs:eu-west-1:123456789012:payments"})
	has(t, f, "AWS::SNS::Subscription", map[string]any{"Endpoint": "arn:aws:sqs:eu-west-1:123456789012:payments"})
	has(t, f, "AWS::CloudWatch::Alarm", map[string]any{
		"AlarmDescription": "Pay: messages the consumer failed to process MaxReceiveCount times are in the dead-letter queue.",
		"Dimensions":       []any{map[string]any{"Name": "QueueName", "Value": "payments-dlq"}},
	})
	// Without the queue's maxReceiveCount the handler cannot count the
	// records it dead-letters unstarted: the alarm on them says so.
	has(t, f, "AWS::CloudWatch::Alarm", map[string]any{
		"MetricName":       outcome.MetricDeadLetteredUnstarted,
		"AlarmDescription": assertions.Match_StringLikeRegexp(jsii.String(`maxReceiveCount is unknown .*this alarm cannot fire: declare MaxReceiveCount\.$`)),
	})
}

func TestQueuePropsOverrideTheDefaultsAndKeepTheRest(t *testing.T) {
	f := overrides(t)
	queue, dlq := id(f, f.consumer.Queue()), id(f, f.consumer.DeadLetterQueue())
	cdktest.Must(t, func() {
		f.template.HasResource(jsii.String("AWS::SQS::Queue"), map[string]any{"Properties": assertions.Match_ObjectEquals(&map[string]any{
			"MessageRetentionPeriod": 7 * 24 * 3600,
			"KmsMasterKeyId":         arn(id(f, f.key)),
			"VisibilityTimeout":      180,
			"MaximumMessageSize":     1048576,
			"RedrivePolicy":          map[string]any{"deadLetterTargetArn": arn(dlq), "maxReceiveCount": 5},
		})})
		f.template.HasResource(jsii.String("AWS::SQS::Queue"), map[string]any{"Properties": assertions.Match_ObjectEquals(&map[string]any{
			"MessageRetentionPeriod": 10 * 24 * 3600,
			"SqsManagedSseEnabled":   true,
			"MaximumMessageSize":     1048576,
		})})
	})
	for _, q := range []string{queue, dlq} { // TLS only, still
		has(t, f, "AWS::SQS::QueuePolicy", map[string]any{
			"Queues": []any{ref(q)},
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Effect": "Deny", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			})})},
		})
	}
}

func TestFunctionOptionsReachTheFunction(t *testing.T) {
	f := networked(t)
	role := f.stack.Node().FindChild(jsii.String("PayRole")).(awsiam.Role)
	if f.consumer.Node().TryFindChild(jsii.String(ids.Role)) != nil {
		t.Error("the consumer created a role beside the given one")
	}
	has(t, f, "AWS::Lambda::Function", map[string]any{
		"Architectures": []any{"x86_64"},
		"Role":          arn(id(f, role)),
		"Layers":        []any{"arn:aws:lambda:eu-west-1:123456789012:layer:otel-collector-amd64:1"},
		"VpcConfig": map[string]any{
			"SecurityGroupIds": []any{map[string]any{"Fn::GetAtt": []any{id(f, f.stack.Node().FindChild(jsii.String("SG")).(awsec2.SecurityGroup)), "GroupId"}}},
			"SubnetIds":        assertions.Match_AnyValue(),
		},
	})
	has(t, f, "AWS::IAM::Policy", map[string]any{
		"Roles": []any{ref(id(f, role))},
		"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{map[string]any{
			// CDK merges the statements on "*": the network interfaces' and X-Ray's.
			"Action": []any{"ec2:AssignPrivateIpAddresses", "ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface",
				"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:UnassignPrivateIpAddresses",
				"xray:PutTelemetryRecords", "xray:PutTraceSegments"},
			"Effect": "Allow", "Resource": "*",
		}})},
	})
	// One asset per architecture: the same handler on arm64 has another.
	key := func(f *fixture) string {
		var k string
		cdktest.Must(t, func() {
			for _, fn := range *f.template.FindResources(jsii.String("AWS::Lambda::Function"), nil) {
				k = (*fn)["Properties"].(map[string]any)["Code"].(map[string]any)["S3Key"].(string)
			}
		})
		return k
	}
	if x86, arm := key(f), key(defaults(t)); x86 == arm {
		t.Errorf("the x86_64 and arm64 functions share the asset %s", x86)
	}
}

// TestQueueAndFunctionRulesRefuse: the rules of byo.go: the queues, given or overridden, and the function's options.
func TestQueueAndFunctionRulesRefuse(t *testing.T) {
	failsWhen(t, []refusal{{
		name: "visibility timeout is below 6 x timeout",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Timeout = awscdk.Duration_Seconds(jsii.Number(30))
			p.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(60))
		},
		want: []string{`IdempotentConsumer "C"`, "VisibilityTimeout 1m is less than 6 × Timeout (30s) = 3m", "set VisibilityTimeout to at least 3m"},
	}, {
		name: "visibility timeout is above 12 hours",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.VisibilityTimeout = awscdk.Duration_Hours(jsii.Number(13))
		},
		want: []string{"VisibilityTimeout 13h is above the SQS maximum of 12h"},
	}, {
		name: "a queue and queue props",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Queue = appQueue(nil, 180)
			p.QueueProps = &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(7))}
			p.DeadLetterQueueProps = &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(7))}
		},
		want: []string{"Queue and QueueProps are both given", "leave QueueProps nil", "Queue and DeadLetterQueueProps are both given"},
	}, {
		name:   "a queue without a dead-letter queue",
		change: func(p *consumer.IdempotentConsumerProps) { p.Queue = appQueue(nil, -1) },
		want: []string{"Queue T/Q has no dead-letter queue", "give the queue a DeadLetterQueue",
			"Queue's visibility timeout 30s is less than 6 × Timeout (30s) = 3m", "set the queue's visibility timeout to at least 3m"},
	}, {
		name: "props that contradict the queue",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Queue = appQueue(jsii.Number(3), 300)
			p.VisibilityTimeout = awscdk.Duration_Minutes(jsii.Number(10))
			p.MaxReceiveCount = jsii.Number(5)
			p.DeadLetterQueue = awssqs.NewQueue(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Other"), nil)
		},
		want: []string{"VisibilityTimeout 10m differs from Queue's visibility timeout 5m", "MaxReceiveCount 5 differs from Queue's maxReceiveCount 3", "DeadLetterQueue is T/Other, but Queue's dead-letter queue is T/DLQ"},
	}, {
		name: "a FIFO queue under a standard topic",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Queue = awssqs.Queue_FromQueueArn(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Q"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:orders.fifo"))
			p.DeadLetterQueue = awssqs.Queue_FromQueueArn(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("D"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:orders-dlq"))
			p.VisibilityTimeout = awscdk.Duration_Minutes(jsii.Number(3))
		},
		want: []string{"Queue is a FIFO queue, but the topic is standard, so the consumer needs a standard queue", "give a standard queue"},
	}, {
		name: "a standard queue under a FIFO topic",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.FifoTopic = jsii.Bool(true)
			p.Queue = appQueue(jsii.Number(5), 180)
		},
		want: []string{"Queue is a standard queue, but the topic is FIFO, so the consumer needs a FIFO queue"},
	}, {
		name: "an imported queue without its declarations",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Queue = awssqs.Queue_FromQueueArn(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("Q"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:orders"))
		},
		want: []string{"Queue is imported, and the construct cannot read an imported queue's redrive policy at synth; declare its dead-letter queue with DeadLetterQueue",
			"cannot read an imported queue's visibility timeout at synth; declare it with VisibilityTimeout (at least 6 × Timeout = 3m)"},
	}, {
		name: "an imported queue whose declared visibility timeout is short",
		change: func(p *consumer.IdempotentConsumerProps) {
			stack := awscdk.NewStack(nil, jsii.String("T"), nil)
			p.Queue = awssqs.Queue_FromQueueArn(stack, jsii.String("Q"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:orders"))
			p.DeadLetterQueue = awssqs.Queue_FromQueueArn(stack, jsii.String("D"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:orders-dlq"))
			p.VisibilityTimeout = awscdk.Duration_Minutes(jsii.Number(1))
		},
		want: []string{"Queue's visibility timeout 1m is less than 6 × Timeout (30s) = 3m"},
	}, {
		name: "a FIFO dead-letter queue for a standard queue, with its props",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.DeadLetterQueue = awssqs.NewQueue(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("D"), &awssqs.QueueProps{Fifo: jsii.Bool(true)})
			p.DeadLetterQueueProps = &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(7))}
		},
		want: []string{"DeadLetterQueue and DeadLetterQueueProps are both given", "DeadLetterQueue is a FIFO queue, but the queue is standard", "give a standard dead-letter queue"},
	}, {
		name: "queue props the construct decides",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.EncryptionKey = awskms.NewKey(awscdk.NewStack(nil, jsii.String("T"), nil), jsii.String("K"), nil)
			p.QueueProps = &awssqs.QueueProps{
				VisibilityTimeout:         awscdk.Duration_Minutes(jsii.Number(10)),
				DeadLetterQueue:           &awssqs.DeadLetterQueue{Queue: appQueue(nil, -1), MaxReceiveCount: jsii.Number(3)},
				MaxMessageSizeBytes:       jsii.Number(1024),
				Fifo:                      jsii.Bool(true),
				EncryptionMasterKey:       p.EncryptionKey,
				ContentBasedDeduplication: jsii.Bool(true),
			}
			p.DeadLetterQueueProps = &awssqs.QueueProps{DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: appQueue(nil, -1), MaxReceiveCount: jsii.Number(3)}}
		},
		want: []string{"QueueProps.VisibilityTimeout is set", "set VisibilityTimeout instead",
			"QueueProps.DeadLetterQueue is set", "give the dead-letter queue as DeadLetterQueue and the count as MaxReceiveCount",
			"QueueProps.MaxMessageSizeBytes is set", "QueueProps.Fifo is true, but the topic is standard",
			"QueueProps.EncryptionMasterKey and EncryptionKey are both given", "QueueProps.ContentBasedDeduplication is set, but the queue receives the SNS envelope",
			"DeadLetterQueueProps.DeadLetterQueue is set, but a dead-letter queue has no dead-letter queue of its own"},
	}, {
		name: "security groups without a VPC, and an architecture the construct does not build",
		change: func(p *consumer.IdempotentConsumerProps) {
			stack := awscdk.NewStack(nil, jsii.String("T"), nil)
			vpc := awsec2.NewVpc(stack, jsii.String("V"), &awsec2.VpcProps{MaxAzs: jsii.Number(1), NatGateways: jsii.Number(0)})
			p.SecurityGroups = &[]awsec2.ISecurityGroup{awsec2.NewSecurityGroup(stack, jsii.String("SG"), &awsec2.SecurityGroupProps{Vpc: vpc})}
			p.Architecture = awslambda.Architecture_Custom(jsii.String("riscv64"), nil)
		},
		want: []string{"VpcSubnets or SecurityGroups is set without Vpc", "set Vpc too",
			"Architecture riscv64 is not one the construct builds for", "awslambda.Architecture_X86_64()"},
	}})
}
