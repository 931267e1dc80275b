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
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
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
	fixtures.OutRoot = outRoot
	h, err := consumertest.WriteHandlers(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	handlerDir, brokenDir, libraryDir = h.Handler, h.Broken, h.Library
	fixtures.Entry = handlerDir
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
	// (cdk-nag's packs run in internal/testkit/apptest, not here).
	annotations assertions.Annotations
	// the app's own resources, in the fixtures that have them
	topic, alarmTopic awssns.Topic
	shared, ledger    awsdynamodb.Table
	key               awskms.Key
	consumers         map[string]consumer.IdempotentConsumer
}

// fixtures are package consumertest's, each synthesized once.
var fixtures = &consumertest.Loader{}

// load returns the named fixture of consumertest.Builds, built once per
// test binary.
func load(t *testing.T, name string) *fixture {
	t.Helper()
	s := fixtures.Load(t, name)
	return &fixture{stack: s.Stack, consumer: s.Consumer, template: s.Template, annotations: s.Annotations,
		topic: s.Topic, alarmTopic: s.AlarmTopic, shared: s.Shared, ledger: s.Ledger, key: s.Key, consumers: s.Consumers}
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
		"AWS::CloudWatch::Alarm":          10,
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
			contract.MaxReceiveCountVar:  "5",
			contract.BackoffBaseVar:      "10m",
			contract.BackoffCapVar:       "1h",
			contract.BackoffFIFOCapVar:   "15m",
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
	// The handler's dimensions: the consumer and the stack's Region
	// (outcome.MetricDimensions).
	handlerDims := func(consumer string) []any {
		return []any{map[string]any{"Name": "Consumer", "Value": consumer}, map[string]any{"Name": "Region", "Value": map[string]any{"Ref": "AWS::Region"}}}
	}
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
		// The handler's own counts, in the namespace and with the dimensions
		// the construct writes into its environment.
		"payload mismatch": {"Namespace": "IdempotentConsumer", "MetricName": "Mismatch", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": handlerDims("Defaults/ChargeOrder"), "Period": 300},
		"lease lost": {"Namespace": "IdempotentConsumer", "MetricName": "LeaseLost", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": handlerDims("Defaults/ChargeOrder"), "Period": 300},
		"bad input": {"Namespace": "IdempotentConsumer", "MetricName": "BadInput", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": handlerDims("Defaults/ChargeOrder"), "Period": 300},
		"expired": {"Namespace": "IdempotentConsumer", "MetricName": "Expired", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": handlerDims("Defaults/ChargeOrder"), "Period": 300},
		"dead-lettered unstarted": {"Namespace": "IdempotentConsumer", "MetricName": "DeadLetteredUnstarted", "Statistic": "Sum", "Threshold": 0,
			"Dimensions": handlerDims("Defaults/ChargeOrder"), "Period": 300},
	} {
		t.Run(name, func(t *testing.T) {
			want["ComparisonOperator"] = "GreaterThanThreshold"
			want["EvaluationPeriods"] = 1
			want["TreatMissingData"] = "notBreaching"
			want["AlarmActions"] = assertions.Match_Absent()
			has(t, f, "AWS::CloudWatch::Alarm", want)
		})
	}
	cdktest.Must(t, func() {
		f.template.ResourcePropertiesCountIs(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"AlarmDescription": assertions.Match_StringLikeRegexp(jsii.String("maxReceiveCount is unknown")),
		}, jsii.Number(0))
	})
	if n := len(f.consumer.Alarms().All()); n != 10 {
		t.Errorf("Alarms().All() has %d alarms, want 10", n)
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
		"Defaults/ChargeOrder/ExpiredAlarm":                     *c.Alarms().Expired.Node().Path(),
		"Defaults/ChargeOrder/DeadLetteredUnstartedAlarm":       *c.Alarms().DeadLetteredUnstarted.Node().Path(),
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
			contract.MaxReceiveCountVar:  "5",
			contract.BackoffBaseVar:      "2m",
			contract.BackoffCapVar:       "10m",
			contract.BackoffFIFOCapVar:   "5m",
			contract.TxTablesVar:         ref(id(f, f.ledger)), // GrantTransactionalWrites(ledger, consumer) declares it
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
		}, jsii.Number(len(f.consumer.Alarms().All())))
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

// TestContractVariablesAreAllRefusedInEnvironment: every variable of the
// runtime contract (contract.Names, derived from contract.Fields) is the
// construct's own: in Environment it is refused with the prop to use.
func TestContractVariablesAreAllRefusedInEnvironment(t *testing.T) {
	for _, name := range contract.Names() {
		props := validProps()
		props.Environment = &map[string]*string{name: jsii.String("x")}
		if err := props.Validate(jsii.String("C")); err == nil || !strings.Contains(err.Error(), "Environment sets "+name) {
			t.Errorf("Environment with %s: err = %v, want it refused", name, err)
		}
	}
}

func validProps() *consumer.IdempotentConsumerProps {
	return &consumer.IdempotentConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}}
}

// refusal is one invalid use of the props: the change to valid props (and
// the construct id, "C" by default), and what the refusal must say.
type refusal struct {
	name   string
	id     string
	change func(p *consumer.IdempotentConsumerProps)
	want   []string
}

// failsWhen checks that each refusal fails construction with a message
// naming the value given and the fix. The cases live beside the tests of
// the file that owns their rule.
func failsWhen(t *testing.T, refusals []refusal) {
	t.Helper()
	for _, tc := range refusals {
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

// TestAnEventualGlobalTableNeedsASingleWritingRegion: the explicit choice
// accepts a global table in eventual consistency.
func TestAnEventualGlobalTableNeedsASingleWritingRegion(t *testing.T) {
	p := validProps()
	p.Table, p.Namespace, p.SingleWritingRegion = sharedTable("pk", jsii.Strings("eu-west-1")), jsii.String("refund"), jsii.Bool(true)
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
		p := &consumer.IdempotentConsumerProps{Props: core.Props{Entry: jsii.String(filepath.Base(handlerDir)), EntryRoot: jsii.String(filepath.Dir(handlerDir))}}
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
