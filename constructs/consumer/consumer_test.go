package consumer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/internal/consumertest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
)

// Directories TestMain prepares: a handler main package that builds, one
// that does not, and the root of every cloud assembly the tests write.
var (
	handlerDir string
	brokenDir  string
	libraryDir string
	outRoot    string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer jsii.Close()
	tmp, err := os.MkdirTemp("", "consumer-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// KEEP_TEST_OUT=1 keeps the cloud assemblies (templates) for a look
	// after a failure.
	if os.Getenv("KEEP_TEST_OUT") == "" {
		defer os.RemoveAll(tmp)
	}
	outRoot = filepath.Join(tmp, "out")
	h, err := consumertest.WriteHandlers(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	handlerDir, brokenDir, libraryDir = h.Handler, h.Broken, h.Library
	return m.Run()
}

// writeModule writes a module of its own in dir (consumertest.WriteModule).
var writeModule = consumertest.WriteModule

// fixture is one synthesized stack of package consumertest, shared by the
// tests that read it: every synth costs seconds of jsii time.
type fixture struct {
	stack    awscdk.Stack
	consumer consumer.IdempotentConsumer
	template assertions.Template
	// annotations are the stack's warnings and errors: the construct's own
	// (cdk-nag's packs run in internal/apptest, not here).
	annotations assertions.Annotations
	// the app's own resources, in the fixtures that have them
	topic, alarmTopic awssns.Topic
	shared, ledger    awsdynamodb.Table
	key               awskms.Key
	consumers         map[string]consumer.IdempotentConsumer
}

var fixtures = map[string]*fixture{}
var fixtureErrs = map[string]string{}

// load builds the named fixture of consumertest.Builds once per test binary.
func load(t *testing.T, name string) *fixture {
	t.Helper()
	if msg, failed := fixtureErrs[name]; failed {
		t.Fatalf("fixture %s: %s", name, msg)
	}
	if f, ok := fixtures[name]; ok {
		return f
	}
	build, ok := consumertest.Builds[name]
	if !ok {
		t.Fatalf("no fixture %s", name)
	}
	f := &fixture{}
	msg, panicked := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, name))
		if err != nil {
			panic(err)
		}
		b := &consumertest.Fixture{Stack: awscdk.NewStack(app, jsii.String(name), nil)}
		build(b, handlerDir)
		*f = fixture{stack: b.Stack, consumer: b.Consumer, topic: b.Topic, alarmTopic: b.AlarmTopic,
			shared: b.Shared, ledger: b.Ledger, key: b.Key, consumers: b.Consumers}
		f.template = assertions.Template_FromStack(f.stack, nil)
		f.annotations = assertions.Annotations_FromStack(f.stack)
	})
	if panicked {
		fixtureErrs[name] = msg
		t.Fatalf("fixture %s: %s", name, msg)
	}
	fixtures[name] = f
	return f
}

// The fixtures of package consumertest.
func defaults(t *testing.T) *fixture  { return load(t, "Defaults") }
func custom(t *testing.T) *fixture    { return load(t, "Custom") }
func keyed(t *testing.T) *fixture     { return load(t, "Keyed") }
func dashboard(t *testing.T) *fixture { return load(t, "Dashboard") }
func ownQueue(t *testing.T) *fixture  { return load(t, "OwnQueue") }
func imported(t *testing.T) *fixture  { return load(t, "Imported") }
func overrides(t *testing.T) *fixture { return load(t, "Overrides") }
func networked(t *testing.T) *fixture { return load(t, "Networked") }
func fifos(t *testing.T) *fixture     { return load(t, "Fifo") }

// ref and arn are the CloudFormation forms of a resource's Ref and Arn.
func ref(logicalID string) map[string]any { return map[string]any{"Ref": logicalID} }
func arn(logicalID string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{logicalID, "Arn"}}
}

// id returns the logical id of a construct's default resource.
func id(f *fixture, c interface{ Node() constructs.Node }) string {
	return *f.stack.GetLogicalId(c.Node().DefaultChild().(awscdk.CfnElement))
}

func has(t *testing.T, f *fixture, typ string, props map[string]any) {
	t.Helper()
	cdktest.Must(t, func() { f.template.HasResourceProperties(jsii.String(typ), props) })
}

func count(t *testing.T, f *fixture, typ string, n int) {
	t.Helper()
	cdktest.Must(t, func() { f.template.ResourceCountIs(jsii.String(typ), jsii.Number(float64(n))) })
}

func TestDefaultsCreateOneOfEach(t *testing.T) {
	f := defaults(t)
	for typ, n := range map[string]int{
		"AWS::SNS::Topic":                 1,
		"AWS::SNS::TopicPolicy":           1,
		"AWS::SNS::Subscription":          1,
		"AWS::SQS::Queue":                 3,
		"AWS::SQS::QueuePolicy":           3,
		"AWS::DynamoDB::Table":            1,
		"AWS::Logs::LogGroup":             1,
		"AWS::IAM::Role":                  1,
		"AWS::IAM::Policy":                1,
		"AWS::Lambda::Function":           1,
		"AWS::Lambda::EventSourceMapping": 1,
		"AWS::CloudWatch::Alarm":          8,
		"AWS::CloudWatch::Dashboard":      0,
		"AWS::KMS::Key":                   0,
	} {
		count(t, f, typ, n)
	}
}

func TestDefaultTopicIsEncryptedWithTheSNSManagedKeyAndTLSOnly(t *testing.T) {
	f := defaults(t)
	topic := id(f, f.consumer.Topic())
	has(t, f, "AWS::SNS::Topic", map[string]any{
		"KmsMasterKeyId": map[string]any{"Fn::Join": []any{"", []any{
			"arn:", ref("AWS::Partition"), ":kms:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":alias/aws/sns",
		}}},
	})
	has(t, f, "AWS::SNS::TopicPolicy", map[string]any{
		"Topics": []any{ref(topic)},
		"PolicyDocument": map[string]any{"Statement": []any{map[string]any{
			"Action":    "sns:Publish",
			"Effect":    "Deny",
			"Principal": "*",
			"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
		}}},
	})
}

func TestDefaultSubscriptionDeliversTheEnvelopeWithADeadLetterQueue(t *testing.T) {
	f := defaults(t)
	has(t, f, "AWS::SNS::Subscription", map[string]any{
		"Protocol":           "sqs",
		"TopicArn":           ref(id(f, f.consumer.Topic())),
		"Endpoint":           arn(id(f, f.consumer.Queue())),
		"RawMessageDelivery": false,
		"FilterPolicy":       assertions.Match_Absent(),
		"RedrivePolicy": map[string]any{
			"deadLetterTargetArn": arn(id(f, f.consumer.SubscriptionDeadLetterQueue())),
		},
	})
	// SNS may send into the subscription dead-letter queue, from this topic only.
	has(t, f, "AWS::SQS::QueuePolicy", map[string]any{
		"Queues": []any{ref(id(f, f.consumer.SubscriptionDeadLetterQueue()))},
		"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
			"Action":    "sqs:SendMessage",
			"Effect":    "Allow",
			"Principal": map[string]any{"Service": "sns.amazonaws.com"},
			"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": ref(id(f, f.consumer.Topic()))}},
		})})},
	})
}

func TestDefaultQueuesAreEncryptedTLSOnlyWithRedrive(t *testing.T) {
	f := defaults(t)
	queue, dlq, subDLQ := id(f, f.consumer.Queue()), id(f, f.consumer.DeadLetterQueue()), id(f, f.consumer.SubscriptionDeadLetterQueue())
	cdktest.Must(t, func() {
		f.template.HasResource(jsii.String("AWS::SQS::Queue"), map[string]any{
			"Properties": map[string]any{
				"SqsManagedSseEnabled": true,
				"KmsMasterKeyId":       assertions.Match_Absent(),
				"VisibilityTimeout":    180, // 6 × the default timeout of 30 s
				"RedrivePolicy": map[string]any{
					"deadLetterTargetArn": arn(dlq),
					"maxReceiveCount":     5,
				},
			},
		})
	})
	// Both dead-letter queues keep messages 14 days.
	cdktest.Must(t, func() {
		f.template.ResourcePropertiesCountIs(jsii.String("AWS::SQS::Queue"), assertions.Match_ObjectEquals(&map[string]any{
			"SqsManagedSseEnabled":   true,
			"MessageRetentionPeriod": 14 * 24 * 3600,
			"MaximumMessageSize":     1048576,
		}), jsii.Number(2))
	})
	for _, q := range []string{queue, dlq, subDLQ} {
		has(t, f, "AWS::SQS::QueuePolicy", map[string]any{
			"Queues": []any{ref(q)},
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Action":    "sqs:*",
				"Effect":    "Deny",
				"Principal": map[string]any{"AWS": "*"},
				"Resource":  arn(q),
				"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			})})},
		})
	}
	// SNS may send into the queue, from this topic only.
	has(t, f, "AWS::SQS::QueuePolicy", map[string]any{
		"Queues": []any{ref(queue)},
		"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
			"Action":    "sqs:SendMessage",
			"Principal": map[string]any{"Service": "sns.amazonaws.com"},
			"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": ref(id(f, f.consumer.Topic()))}},
		})})},
	})
}

func TestDefaultTableIsOnDemandWithTTLAndPITRAndIsRetained(t *testing.T) {
	f := defaults(t)
	cdktest.Must(t, func() {
		f.template.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"DeletionPolicy":      "Retain",
			"UpdateReplacePolicy": "Retain",
			"Properties": assertions.Match_ObjectEquals(&map[string]any{
				"AttributeDefinitions":             []any{map[string]any{"AttributeName": "pk", "AttributeType": "S"}},
				"KeySchema":                        []any{map[string]any{"AttributeName": "pk", "KeyType": "HASH"}},
				"BillingMode":                      "PAY_PER_REQUEST",
				"TimeToLiveSpecification":          map[string]any{"AttributeName": "ttl", "Enabled": true},
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
				// AWS-managed key: encryption on, no key of ours.
				"SSESpecification": map[string]any{"SSEEnabled": true},
			}),
		})
	})
}

func TestDefaultFunctionIsGoOnArm64(t *testing.T) {
	f := defaults(t)
	has(t, f, "AWS::Lambda::Function", map[string]any{
		"Runtime":                      "provided.al2023",
		"Architectures":                []any{"arm64"},
		"Handler":                      "bootstrap",
		"MemorySize":                   256,
		"Timeout":                      30,
		"TracingConfig":                map[string]any{"Mode": "Active"},
		"ReservedConcurrentExecutions": assertions.Match_Absent(),
		"Role":                         arn(id(f, f.consumer.Role())),
		"LoggingConfig": map[string]any{
			"LogGroup":            ref(id(f, f.consumer.LogGroup())),
			"LogFormat":           "JSON",
			"ApplicationLogLevel": "INFO",
		},
		"Code": map[string]any{
			"S3Key": assertions.Match_StringLikeRegexp(jsii.String("^[0-9a-f]{64}\\.zip$")),
		},
	})
	has(t, f, "AWS::Logs::LogGroup", map[string]any{"RetentionInDays": 30})
}

func TestDefaultEnvironmentSetsTheWholeContract(t *testing.T) {
	f := defaults(t)
	has(t, f, "AWS::Lambda::Function", map[string]any{
		"Environment": map[string]any{"Variables": assertions.Match_ObjectEquals(&map[string]any{
			contract.VersionVar:          "1",
			contract.TableVar:            ref(id(f, f.consumer.Table())),
			contract.NamespaceVar:        "chargeorder",
			contract.TimeoutVar:          "30s",
			contract.BatchSizeVar:        "10",
			contract.WindowVar:           "24h",
			contract.TTLAfterWindowVar:   "24h",
			contract.LeaseMaxVar:         "30s",
			contract.FinishBudgetVar:     "2s",
			contract.CacheSizeVar:        "0",
			contract.BatchConcurrencyVar: "10",
			contract.MinRemainingVar:     "3s",
			contract.MaxMessageBytesVar:  "262144",
			contract.DeliveryVar:         "envelope",
			contract.FIFOVar:             "false",
			contract.ConsumerVar:         *f.consumer.Node().Path(),
			contract.MetricsNamespaceVar: "IdempotentConsumer",
		})},
	})
}

func TestDefaultRoleHasNoManagedPolicyAndOnlyItsOwnResources(t *testing.T) {
	f := defaults(t)
	has(t, f, "AWS::IAM::Role", map[string]any{
		"ManagedPolicyArns": assertions.Match_Absent(),
		"AssumeRolePolicyDocument": map[string]any{"Statement": []any{map[string]any{
			"Action":    "sts:AssumeRole",
			"Effect":    "Allow",
			"Principal": map[string]any{"Service": "lambda.amazonaws.com"},
		}}},
	})
	has(t, f, "AWS::IAM::Policy", map[string]any{
		"Roles": []any{ref(id(f, f.consumer.Role()))},
		"PolicyDocument": map[string]any{"Statement": []any{
			map[string]any{
				"Action":   []any{"logs:CreateLogStream", "logs:PutLogEvents"},
				"Effect":   "Allow",
				"Resource": arn(id(f, f.consumer.LogGroup())),
			},
			map[string]any{
				"Action":   []any{"xray:PutTelemetryRecords", "xray:PutTraceSegments"},
				"Effect":   "Allow",
				"Resource": "*",
			},
			map[string]any{
				"Action":    []any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
				"Condition": onlyNamespace("chargeorder"),
				"Effect":    "Allow",
				"Resource":  arn(id(f, f.consumer.Table())),
			},
			map[string]any{
				"Action":   []any{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"},
				"Effect":   "Allow",
				"Resource": arn(id(f, f.consumer.Queue())),
			},
		}},
	})
}

func TestDefaultEventSourceReportsBatchItemFailures(t *testing.T) {
	f := defaults(t)
	has(t, f, "AWS::Lambda::EventSourceMapping", map[string]any{
		"EventSourceArn":                 arn(id(f, f.consumer.Queue())),
		"FunctionName":                   ref(id(f, f.consumer.Function())),
		"BatchSize":                      10,
		"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
		"MaximumBatchingWindowInSeconds": assertions.Match_Absent(),
		"ScalingConfig":                  assertions.Match_Absent(),
	})
}

func TestDefaultAlarms(t *testing.T) {
	f := defaults(t)
	dim := func(name string, value any) []any { return []any{map[string]any{"Name": name, "Value": value}} }
	queueName := func(q interface{ Node() constructs.Node }) any {
		return map[string]any{"Fn::GetAtt": []any{id(f, q), "QueueName"}}
	}
	for name, want := range map[string]map[string]any{
		"dead-letter queue": {"Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible", "Statistic": "Maximum", "Threshold": 0,
			"Dimensions": dim("QueueName", queueName(f.consumer.DeadLetterQueue()))},
		"subscription dead-letter queue": {"Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible", "Statistic": "Maximum", "Threshold": 0,
			"Dimensions": dim("QueueName", queueName(f.consumer.SubscriptionDeadLetterQueue()))},
		"oldest message": {"Namespace": "AWS/SQS", "MetricName": "ApproximateAgeOfOldestMessage", "Statistic": "Maximum", "Threshold": 900,
			"Dimensions": dim("QueueName", queueName(f.consumer.Queue()))},
		"errors": {"Namespace": "AWS/Lambda", "MetricName": "Errors", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": dim("FunctionName", ref(id(f, f.consumer.Function())))},
		"throttles": {"Namespace": "AWS/Lambda", "MetricName": "Throttles", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": dim("FunctionName", ref(id(f, f.consumer.Function())))},
		// The handler's own counts, in the namespace and with the dimension
		// the construct writes into its environment.
		"payload mismatch": {"Namespace": "IdempotentConsumer", "MetricName": "Mismatch", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": dim("Consumer", "Defaults/ChargeOrder"), "Period": 300},
		"lease lost": {"Namespace": "IdempotentConsumer", "MetricName": "LeaseLost", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": dim("Consumer", "Defaults/ChargeOrder"), "Period": 300},
		"bad input": {"Namespace": "IdempotentConsumer", "MetricName": "BadInput", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": dim("Consumer", "Defaults/ChargeOrder"), "Period": 300},
	} {
		t.Run(name, func(t *testing.T) {
			want["ComparisonOperator"] = "GreaterThanThreshold"
			want["EvaluationPeriods"] = 1
			want["TreatMissingData"] = "notBreaching"
			want["AlarmActions"] = assertions.Match_Absent()
			has(t, f, "AWS::CloudWatch::Alarm", want)
		})
	}
	if n := len(f.consumer.Alarms().All()); n != 8 {
		t.Errorf("Alarms().All() has %d alarms, want 8", n)
	}
}

func TestConstructIDsAreStable(t *testing.T) {
	f := defaults(t)
	c := f.consumer
	for want, got := range map[string]string{
		"Defaults/ChargeOrder/Topic":                            *c.Topic().Node().Path(),
		"Defaults/ChargeOrder/Queue":                            *c.Queue().Node().Path(),
		"Defaults/ChargeOrder/DeadLetterQueue":                  *c.DeadLetterQueue().Node().Path(),
		"Defaults/ChargeOrder/SubscriptionDeadLetterQueue":      *c.SubscriptionDeadLetterQueue().Node().Path(),
		"Defaults/ChargeOrder/Table":                            *c.Table().Node().Path(),
		"Defaults/ChargeOrder/Function":                         *c.Function().Node().Path(),
		"Defaults/ChargeOrder/Role":                             *c.Role().Node().Path(),
		"Defaults/ChargeOrder/LogGroup":                         *c.LogGroup().Node().Path(),
		"Defaults/ChargeOrder/DeadLetterQueueAlarm":             *c.Alarms().DeadLetterQueue.Node().Path(),
		"Defaults/ChargeOrder/SubscriptionDeadLetterQueueAlarm": *c.Alarms().SubscriptionDeadLetterQueue.Node().Path(),
		"Defaults/ChargeOrder/OldestMessageAlarm":               *c.Alarms().OldestMessage.Node().Path(),
		"Defaults/ChargeOrder/ErrorsAlarm":                      *c.Alarms().Errors.Node().Path(),
		"Defaults/ChargeOrder/ThrottlesAlarm":                   *c.Alarms().Throttles.Node().Path(),
		"Defaults/ChargeOrder/PayloadMismatchAlarm":             *c.Alarms().PayloadMismatch.Node().Path(),
		"Defaults/ChargeOrder/LeaseLostAlarm":                   *c.Alarms().LeaseLost.Node().Path(),
		"Defaults/ChargeOrder/BadInputAlarm":                    *c.Alarms().BadInput.Node().Path(),
		"Dashboard/Watched/Dashboard":                           *dashboard(t).consumer.Dashboard().Node().Path(),
	} {
		if got != want {
			t.Errorf("construct path %s, want %s", got, want)
		}
	}
	if got := *c.Namespace(); got != "chargeorder" {
		t.Errorf("Namespace() = %q, want chargeorder", got)
	}
}

func TestCustomUsesTheGivenTopicAndSharedTable(t *testing.T) {
	f := custom(t)
	if got, want := *f.consumer.Topic().Node().Path(), *f.topic.Node().Path(); got != want {
		t.Errorf("Topic() is %s, want the given topic %s", got, want)
	}
	if got, want := *f.consumer.Table().Node().Path(), *f.shared.Node().Path(); got != want {
		t.Errorf("Table() is %s, want the given table %s", got, want)
	}
	count(t, f, "AWS::SNS::Topic", 2)      // Orders and Alarms, none of the consumer's
	count(t, f, "AWS::DynamoDB::Table", 2) // Shared and Ledger, none of the consumer's
	has(t, f, "AWS::SNS::Subscription", map[string]any{
		"TopicArn":           ref(id(f, f.topic)),
		"RawMessageDelivery": true,
		"FilterPolicy":       map[string]any{"type": []any{"order.placed"}},
	})
}

func TestCustomEncryptionKeyEncryptsTheQueuesAndLetsSNSDeliver(t *testing.T) {
	f := custom(t)
	key := id(f, f.key)
	cdktest.Must(t, func() {
		f.template.ResourcePropertiesCountIs(jsii.String("AWS::SQS::Queue"), map[string]any{
			"KmsMasterKeyId":       arn(key),
			"SqsManagedSseEnabled": assertions.Match_Absent(),
		}, jsii.Number(3))
	})
	has(t, f, "AWS::KMS::Key", map[string]any{
		"KeyPolicy": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
			"Action":    []any{"kms:Decrypt", "kms:GenerateDataKey"},
			"Effect":    "Allow",
			"Principal": map[string]any{"Service": "sns.amazonaws.com"},
			"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": ref(id(f, f.topic))}},
		})})},
	})
}

func TestEncryptionKeyLeavesTheCreatedTopicOnTheSNSManagedKey(t *testing.T) {
	f := keyed(t)
	has(t, f, "AWS::SNS::Topic", map[string]any{
		"KmsMasterKeyId": map[string]any{"Fn::Join": assertions.Match_ArrayWith(&[]any{
			assertions.Match_ArrayWith(&[]any{":alias/aws/sns"}),
		})},
	})
	cdktest.Must(t, func() {
		f.template.ResourcePropertiesCountIs(jsii.String("AWS::SQS::Queue"), map[string]any{
			"KmsMasterKeyId": arn(id(f, f.key)),
		}, jsii.Number(3))
	})
}

func TestRemovalPolicyAppliesToTheCreatedTable(t *testing.T) {
	f := keyed(t)
	cdktest.Must(t, func() {
		f.template.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"DeletionPolicy":      "Delete",
			"UpdateReplacePolicy": "Delete",
		})
	})
}

func TestGrantPublishAllowsPublishingToTheTopic(t *testing.T) {
	f := keyed(t)
	has(t, f, "AWS::IAM::Policy", map[string]any{
		"Roles": []any{ref(id(f, f.stack.Node().FindChild(jsii.String("Publisher")).(awsiam.Role)))},
		"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
			"Action":   "sns:Publish",
			"Effect":   "Allow",
			"Resource": ref(id(f, f.consumer.Topic())),
		})})},
	})
}

func TestCustomPropsReachTheResources(t *testing.T) {
	f := custom(t)
	has(t, f, "AWS::SQS::Queue", map[string]any{
		"VisibilityTimeout": 300,
		"RedrivePolicy":     map[string]any{"maxReceiveCount": 5},
	})
	has(t, f, "AWS::Lambda::Function", map[string]any{
		"MemorySize":                   512,
		"Timeout":                      45,
		"ReservedConcurrentExecutions": 5,
		"TracingConfig":                assertions.Match_Absent(),
		"Environment": map[string]any{"Variables": assertions.Match_ObjectEquals(&map[string]any{
			"WALLET_TABLE":               ref(id(f, f.shared)),
			contract.VersionVar:          "1",
			contract.TableVar:            ref(id(f, f.shared)),
			contract.NamespaceVar:        "wallet",
			contract.TimeoutVar:          "45s",
			contract.BatchSizeVar:        "100",
			contract.WindowVar:           "1h",
			contract.TTLAfterWindowVar:   "2h",
			contract.LeaseMaxVar:         "40s",
			contract.CacheSizeVar:        "100",
			contract.PayloadIgnoreVar:    "meta.sentAt,traceId",
			contract.BatchConcurrencyVar: "4",
			contract.FinishBudgetVar:     "1500ms",
			contract.MinRemainingVar:     "2500ms",
			contract.MaxMessageBytesVar:  "1048576",
			contract.DeliveryVar:         "raw",
			contract.FIFOVar:             "false",
			contract.ConsumerVar:         *f.consumer.Node().Path(),
			contract.MetricsNamespaceVar: "Wallets",
			contract.KeySecretVar: map[string]any{"Fn::Join": []any{"", []any{
				"{{resolve:secretsmanager:", ref(id(f, f.consumer.KeySecret())), ":SecretString:::}}",
			}}},
		})},
	})
	// The handler's secret: 64 letters and digits, at least the 32 bytes
	// it requires, kept with the stack.
	cdktest.Must(t, func() {
		f.template.HasResource(jsii.String("AWS::SecretsManager::Secret"), map[string]any{
			"Properties":     map[string]any{"GenerateSecretString": map[string]any{"PasswordLength": 64, "ExcludePunctuation": true, "IncludeSpace": false}},
			"DeletionPolicy": "Retain",
		})
	})
	if d := defaults(t); d.consumer.KeySecret() != nil {
		t.Error("a consumer without HashKeys has a key secret")
	}
	has(t, f, "AWS::Logs::LogGroup", map[string]any{"RetentionInDays": 7})
	has(t, f, "AWS::Lambda::EventSourceMapping", map[string]any{
		"BatchSize":                      100,
		"MaximumBatchingWindowInSeconds": 5,
		"ScalingConfig":                  map[string]any{"MaximumConcurrency": 5},
		"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
	})
	has(t, f, "AWS::CloudWatch::Alarm", map[string]any{
		"MetricName": "ApproximateAgeOfOldestMessage",
		"Threshold":  300,
	})
	cdktest.Must(t, func() {
		f.template.ResourcePropertiesCountIs(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"AlarmActions": []any{ref(id(f, f.alarmTopic))},
		}, jsii.Number(8))
	})
}

// onlyNamespace is the condition that scopes the item actions on the
// idempotency table to the records of namespace: every leading key is one
// of the namespace, and there is one.
func onlyNamespace(namespace string) map[string]any {
	return map[string]any{
		"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{namespace + "#*"}},
		"Null":                    map[string]any{"dynamodb:LeadingKeys": "false"},
	}
}

func TestCustomRoleIsScopedToTheSharedTableTheLedgerAndTheKey(t *testing.T) {
	f := custom(t)
	statement := func(actions []any, resource any) map[string]any {
		return map[string]any{"Action": actions, "Effect": "Allow", "Resource": resource}
	}
	key := arn(id(f, f.key))
	has(t, f, "AWS::IAM::Policy", map[string]any{
		"Roles": []any{ref(id(f, f.consumer.Role()))},
		"PolicyDocument": map[string]any{"Statement": []map[string]any{
			statement([]any{"logs:CreateLogStream", "logs:PutLogEvents"}, arn(id(f, f.consumer.LogGroup()))),
			{
				"Action":    []any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
				"Condition": onlyNamespace("wallet"),
				"Effect":    "Allow",
				"Resource":  arn(id(f, f.shared)),
			},
			statement([]any{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}, arn(id(f, f.consumer.Queue()))),
			// The table's key and the queue's key are the same key here.
			statement([]any{"kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:ReEncryptFrom", "kms:ReEncryptTo"}, key),
			statement([]any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}, arn(id(f, f.ledger))),
		}},
	})
}

func TestCustomWithoutTracingNeedsNoSuppression(t *testing.T) {
	f := custom(t)
	cdktest.Must(t, func() {
		f.template.HasResource(jsii.String("AWS::IAM::Role"), map[string]any{"Metadata": assertions.Match_Absent()})
	})
}

func TestContractVariablesAreAllRefusedInEnvironment(t *testing.T) {
	for _, name := range consumer.ContractVariables() {
		props := validProps()
		props.Environment = &map[string]*string{name: jsii.String("x")}
		if err := props.Validate(jsii.String("C")); err == nil || !strings.Contains(err.Error(), "Environment sets "+name) {
			t.Errorf("Environment with %s: err = %v, want it refused", name, err)
		}
	}
}

func validProps() *consumer.IdempotentConsumerProps {
	return &consumer.IdempotentConsumerProps{Entry: jsii.String(handlerDir)}
}

// TestFailsWhen checks that each invalid prop fails construction with a
// message naming the value given and the fix.
func TestFailsWhen(t *testing.T) {
	for _, tc := range []struct {
		name   string
		id     string
		change func(p *consumer.IdempotentConsumerProps)
		want   []string
	}{{
		name: "visibility timeout is below 6 x timeout",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Timeout = awscdk.Duration_Seconds(jsii.Number(30))
			p.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(60))
		},
		want: []string{`IdempotentConsumer "C"`, "VisibilityTimeout 1m is less than 6 × Timeout (30s) = 3m", "set VisibilityTimeout to at least 3m"},
	}, {
		name:   "max concurrency is 1",
		change: func(p *consumer.IdempotentConsumerProps) { p.MaxConcurrency = jsii.Number(1) },
		want:   []string{"MaxConcurrency 1 is out of range", "from 2 to 1000"},
	}, {
		name:   "max concurrency is above 1000",
		change: func(p *consumer.IdempotentConsumerProps) { p.MaxConcurrency = jsii.Number(1001) },
		want:   []string{"MaxConcurrency 1001 is out of range", "from 2 to 1000"},
	}, {
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
		want:   []string{`Namespace is empty; give a short name`},
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
		name: "entry does not exist",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Entry = jsii.String(filepath.Join(outRoot, "no-such-dir"))
		},
		want: []string{"no-such-dir", "no such file or directory", "Entry must be the directory"},
	}, {
		name:   "entry does not build",
		change: func(p *consumer.IdempotentConsumerProps) { p.Entry = jsii.String(brokenDir) },
		want:   []string{"go build of " + brokenDir + " for linux/arm64 failed", "undefined: notDeclaredAnywhere"},
	}, {
		name:   "timeout is not whole seconds",
		change: func(p *consumer.IdempotentConsumerProps) { p.Timeout = awscdk.Duration_Millis(jsii.Number(1500)) },
		want:   []string{"Timeout 1500ms is out of range: Lambda takes whole seconds from 1s to 15m"},
	}, {
		name: "visibility timeout is above 12 hours",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.VisibilityTimeout = awscdk.Duration_Hours(jsii.Number(13))
		},
		want: []string{"VisibilityTimeout 13h is above the SQS maximum of 12h"},
	}, {
		name: "reserved concurrency is below max concurrency",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.ReservedConcurrentExecutions = jsii.Number(2)
			p.MaxConcurrency = jsii.Number(5)
		},
		want: []string{"ReservedConcurrentExecutions 2 is below MaxConcurrency 5", "give ReservedConcurrentExecutions at least 5"},
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
	}, {
		name:   "a thousand records at once",
		change: func(p *consumer.IdempotentConsumerProps) { p.BatchConcurrency = jsii.Number(1000) },
		want:   []string{"BatchConcurrency 1000 is out of range", "from 1 to 256"},
	}, {
		name: "durations are tokens",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Window = awscdk.Duration_Seconds(awscdk.Token_AsNumber(awscdk.Fn_ImportValue(jsii.String("WindowSeconds"))))
			p.BatchSize = awscdk.Token_AsNumber(awscdk.Fn_ImportValue(jsii.String("BatchSize")))
		},
		want: []string{"Window is a token that CDK resolves only at deployment", "give a concrete duration", "BatchSize is a token"},
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
		name:   "entry is not a main package",
		change: func(p *consumer.IdempotentConsumerProps) { p.Entry = jsii.String(libraryDir) },
		want:   []string{"entry " + libraryDir + " holds package orders, not a main package", "point Entry at the directory of the handler's package main"},
	}, {
		name:   "a shared table without a namespace",
		change: func(p *consumer.IdempotentConsumerProps) { p.Table = sharedTable("pk", nil) },
		want:   []string{"Table is given (shared-table mode), so Namespace is required"},
	}, {
		name: "a shared table keyed on id",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = sharedTable("id", nil), jsii.String("refund")
		},
		want: []string{`Table's key schema is [HASH id (S)], but idempotency records need a string partition key named "pk" and no sort key`},
	}, {
		name: "a replicated table",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = sharedTable("pk", jsii.Strings("eu-west-1")), jsii.String("refund")
		},
		want: []string{"Table is replicated to 2 regions", "last writer wins", "set AcceptSingleRegionGuarantee"},
	}, {
		name: "several props are wrong",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.MaxReceiveCount = jsii.Number(0)
			p.MemorySize = jsii.Number(64)
			p.CacheSize = jsii.Number(-1)
		},
		want: []string{"MaxReceiveCount 0 is out of range", "MemorySize 64 is out of range", "CacheSize -1 is out of range"},
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
	}} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.id
			if id == "" {
				id = "C"
			}
			props := validProps()
			tc.change(props)
			msg, panicked := cdktest.Panics(func() {
				app, err := cdktest.NewApp(filepath.Join(outRoot, "fails"))
				if err != nil {
					t.Fatal(err)
				}
				consumer.NewIdempotentConsumer(awscdk.NewStack(app, jsii.String("S"), nil), jsii.String(id), props)
			})
			if !panicked {
				t.Fatal("NewIdempotentConsumer did not fail")
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message does not contain %q:\n%s", w, msg)
				}
			}
		})
	}
}

// TestMessageSizesAgree: every queue of the consumer takes the largest SQS
// body (set explicitly: a queue created before SQS raised its default keeps
// 256 KiB otherwise), so nothing the topic delivers is refused on the way;
// the topic the construct creates refuses at Publish what the handler would
// refuse.
func TestMessageSizesAgree(t *testing.T) {
	f := defaults(t)
	cdktest.Must(t, func() {
		f.template.ResourcePropertiesCountIs(jsii.String("AWS::SQS::Queue"), map[string]any{"MaximumMessageSize": 1048576}, jsii.Number(3))
	})
	has(t, f, "AWS::SNS::Topic", map[string]any{"MaximumMessageSize": 262144})
	// A given topic keeps its own size; the handler takes as much.
	c := custom(t)
	cdktest.Must(t, func() {
		c.template.ResourcePropertiesCountIs(jsii.String("AWS::SQS::Queue"), map[string]any{"MaximumMessageSize": 1048576}, jsii.Number(3))
	})
	has(t, c, "AWS::SNS::Topic", map[string]any{"MaximumMessageSize": 1048576})
}

// appQueue returns a queue of another stack, T/Q: with a dead-letter queue
// T/DLQ after maxReceive receives when maxReceive is set, and the visibility
// timeout in seconds unless it is negative.
func appQueue(maxReceive *float64, visibility float64) awssqs.Queue {
	stack := awscdk.NewStack(nil, jsii.String("T"), nil)
	props := &awssqs.QueueProps{}
	if visibility >= 0 {
		props.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(visibility))
	}
	if maxReceive != nil {
		props.DeadLetterQueue = &awssqs.DeadLetterQueue{Queue: awssqs.NewQueue(stack, jsii.String("DLQ"), nil), MaxReceiveCount: maxReceive}
	}
	return awssqs.NewQueue(stack, jsii.String("Q"), props)
}

// sharedTable returns a table of another stack, for a consumer in shared-table
// mode: a TableV2 with partition key pk and, when replicas is set, replicas
// in those regions.
func sharedTable(pk string, replicas *[]*string) awsdynamodb.ITable {
	stack := awscdk.NewStack(nil, jsii.String("Shared"), &awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String("us-east-1")}})
	props := &awsdynamodb.TablePropsV2{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(pk), Type: awsdynamodb.AttributeType_STRING}}
	if replicas != nil {
		var rs []*awsdynamodb.ReplicaTableProps
		for _, r := range *replicas {
			rs = append(rs, &awsdynamodb.ReplicaTableProps{Region: r})
		}
		props.Replicas = &rs
	}
	return awsdynamodb.NewTableV2(stack, jsii.String("Table"), props)
}

// TestAReplicatedTableNeedsTheSingleRegionGuarantee: the explicit choice
// accepts a replicated table.
func TestAReplicatedTableNeedsTheSingleRegionGuarantee(t *testing.T) {
	p := validProps()
	p.Table, p.Namespace, p.AcceptSingleRegionGuarantee = sharedTable("pk", jsii.Strings("eu-west-1")), jsii.String("refund"), jsii.Bool(true)
	if err := p.Validate(jsii.String("C")); err != nil {
		t.Fatal(err)
	}
}

// TestTwoConsumersCannotShareANamespaceOnATable: within one app, a second
// consumer with the namespace of another on the same table is refused,
// whether the table is the app's or imported twice by name; another
// namespace, or another table, is fine.
func TestTwoConsumersCannotShareANamespaceOnATable(t *testing.T) {
	msg, _ := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "namespaces"))
		if err != nil {
			t.Fatal(err)
		}
		one, two := awscdk.NewStack(app, jsii.String("One"), nil), awscdk.NewStack(app, jsii.String("Two"), nil)
		table := awsdynamodb.NewTable(one, jsii.String("Shared"), &awsdynamodb.TableProps{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING}})
		consumer := func(stack awscdk.Stack, id string, table awsdynamodb.ITable, namespace string) {
			p := validProps()
			p.Table, p.Namespace = table, jsii.String(namespace)
			consumer.NewIdempotentConsumer(stack, jsii.String(id), p)
		}
		consumer(one, "Refund", table, "refund")
		consumer(two, "Refund", table, "refund-two")                                                                    // another namespace
		consumer(two, "Audit", awsdynamodb.Table_FromTableName(two, jsii.String("I1"), jsii.String("audit")), "refund") // another table
		consumer(one, "Audit", awsdynamodb.Table_FromTableName(one, jsii.String("I2"), jsii.String("audit")), "audit")
		consumer(two, "AuditAgain", awsdynamodb.Table_FromTableName(two, jsii.String("I3"), jsii.String("audit")), "audit")
	})
	if want := `IdempotentConsumer "AuditAgain": Namespace "audit" on the table Two/I3 is the namespace of the consumer One/Audit already`; !strings.Contains(msg, want) {
		t.Fatalf("panic %q; want %q", msg, want)
	}
	msg, _ = cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "namespaces2"))
		if err != nil {
			t.Fatal(err)
		}
		one, two := awscdk.NewStack(app, jsii.String("One"), nil), awscdk.NewStack(app, jsii.String("Two"), nil)
		table := awsdynamodb.NewTable(one, jsii.String("Shared"), &awsdynamodb.TableProps{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING}})
		for _, stack := range []awscdk.Stack{one, two} {
			p := validProps()
			p.Table, p.Namespace = table, jsii.String("refund")
			consumer.NewIdempotentConsumer(stack, jsii.String("Refund"), p)
		}
	})
	if want := `IdempotentConsumer "Refund": Namespace "refund" on the table One/Shared is the namespace of the consumer One/Refund already`; !strings.Contains(msg, want) {
		t.Fatalf("panic %q; want %q", msg, want)
	}
}

// TestEntryRootResolvesARelativeEntry: a relative Entry is found under
// EntryRoot, wherever the process runs.
func TestEntryRootResolvesARelativeEntry(t *testing.T) {
	msg, panicked := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "entryroot"))
		if err != nil {
			t.Fatal(err)
		}
		p := &consumer.IdempotentConsumerProps{Entry: jsii.String(filepath.Base(handlerDir)), EntryRoot: jsii.String(filepath.Dir(handlerDir))}
		consumer.NewIdempotentConsumer(awscdk.NewStack(app, jsii.String("S"), nil), jsii.String("C"), p)
	})
	if panicked {
		t.Fatal(msg)
	}
}

// TestLogLevelReachesTheFunction: the LogLevel prop is the function's
// application log level.
func TestLogLevelReachesTheFunction(t *testing.T) {
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "loglevel"))
		if err != nil {
			t.Fatal(err)
		}
		stack := awscdk.NewStack(app, jsii.String("S"), nil)
		p := validProps()
		p.LogLevel = awslambda.ApplicationLogLevel_WARN
		consumer.NewIdempotentConsumer(stack, jsii.String("C"), p)
		assertions.Template_FromStack(stack, nil).HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"LoggingConfig": assertions.Match_ObjectLike(&map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": "WARN"}),
		})
	})
}

// TestTwoAppsMayUseOneNamespaceEach: a namespace is claimed per app, so
// that two apps of one process (a snapshot test and a nag test in one test
// binary, each with its own cdktest.NewApp) may each give a consumer the
// same namespace on their own table of the same path; within each app the
// claim still holds.
func TestTwoAppsMayUseOneNamespaceEach(t *testing.T) {
	for i, name := range []string{"app-one", "app-two"} {
		msg, panicked := cdktest.Panics(func() {
			app, err := cdktest.NewApp(filepath.Join(outRoot, name))
			if err != nil {
				panic(err)
			}
			stack := awscdk.NewStack(app, jsii.String("Shop"), nil)
			table := awsdynamodb.NewTable(stack, jsii.String("Idempotency"), &awsdynamodb.TableProps{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING}})
			p := validProps()
			p.Table, p.Namespace = table, jsii.String("reserve")
			consumer.NewIdempotentConsumer(stack, jsii.String("ReserveStock"), p)
			p = validProps()
			p.Table, p.Namespace = table, jsii.String("reserve")
			consumer.NewIdempotentConsumer(stack, jsii.String("EmailCustomer"), p)
		})
		want := `IdempotentConsumer "EmailCustomer": Namespace "reserve" on the table Shop/Idempotency is the namespace of the consumer Shop/ReserveStock already`
		if !panicked || !strings.Contains(msg, want) {
			t.Errorf("app %d: panic %q; want %q", i+1, msg, want)
		}
	}
}
