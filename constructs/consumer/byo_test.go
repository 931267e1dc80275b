package consumer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// dashboard is a consumer with its dashboard, in a namespace of its own.
func dashboard(t *testing.T) *fixture {
	return load(t, "Dashboard", func(f *fixture) {
		f.consumer = consumer.NewIdempotentConsumer(f.stack, jsii.String("Watched"), &consumer.IdempotentConsumerProps{
			Entry:            jsii.String(handlerDir),
			Dashboard:        jsii.Bool(true),
			MetricsNamespace: jsii.String("Payments"),
		})
	})
}

// ownQueue brings a queue of the app with its dead-letter queue.
func ownQueue(t *testing.T) *fixture {
	return load(t, "OwnQueue", func(f *fixture) {
		dlq := awssqs.NewQueue(f.stack, jsii.String("PaymentsDLQ"), &awssqs.QueueProps{
			EnforceSSL: jsii.Bool(true), Encryption: awssqs.QueueEncryption_SQS_MANAGED, RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		})
		queue := awssqs.NewQueue(f.stack, jsii.String("Payments"), &awssqs.QueueProps{
			EnforceSSL: jsii.Bool(true), Encryption: awssqs.QueueEncryption_SQS_MANAGED,
			VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(5)),
			DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(3)},
		})
		f.consumer = consumer.NewIdempotentConsumer(f.stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Entry: jsii.String(handlerDir),
			Queue: queue,
		})
		// The consumer is an IGrantable: aws-cdk-lib's grants take it.
		f.ledger = awsdynamodb.NewTable(f.stack, jsii.String("Ledger"), &awsdynamodb.TableProps{
			PartitionKey:                     &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
			BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)},
		})
		f.ledger.GrantReadData(f.consumer)
	})
}

// imported brings an imported queue, with the declarations it needs.
func imported(t *testing.T) *fixture {
	return load(t, "Imported", func(f *fixture) {
		f.consumer = consumer.NewIdempotentConsumer(f.stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Entry:             jsii.String(handlerDir),
			Queue:             awssqs.Queue_FromQueueArn(f.stack, jsii.String("Payments"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:payments")),
			DeadLetterQueue:   awssqs.Queue_FromQueueArn(f.stack, jsii.String("PaymentsDLQ"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:payments-dlq")),
			VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(3)),
		})
	})
}

// overrides overrides the defaults of the queues the construct creates.
func overrides(t *testing.T) *fixture {
	return load(t, "Overrides", func(f *fixture) {
		f.key = awskms.NewKey(f.stack, jsii.String("Key"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
		f.consumer = consumer.NewIdempotentConsumer(f.stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Entry: jsii.String(handlerDir),
			QueueProps: &awssqs.QueueProps{
				RetentionPeriod:     awscdk.Duration_Days(jsii.Number(7)),
				EncryptionMasterKey: f.key,
				Encryption:          awssqs.QueueEncryption_KMS,
			},
			DeadLetterQueueProps: &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(10))},
		})
	})
}

// networked runs the function in a VPC on x86_64, with its security group,
// a layer and a role of the app.
func networked(t *testing.T) *fixture {
	return load(t, "Networked", func(f *fixture) {
		vpc := awsec2.NewVpc(f.stack, jsii.String("Vpc"), &awsec2.VpcProps{
			MaxAzs: jsii.Number(2), NatGateways: jsii.Number(0),
			SubnetConfiguration: &[]*awsec2.SubnetConfiguration{{Name: jsii.String("app"), SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED}},
			FlowLogs:            &map[string]*awsec2.FlowLogOptions{"all": {}},
		})
		sg := awsec2.NewSecurityGroup(f.stack, jsii.String("SG"), &awsec2.SecurityGroupProps{Vpc: vpc, Description: jsii.String("payments")})
		role := awsiam.NewRole(f.stack, jsii.String("PayRole"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
		f.consumer = consumer.NewIdempotentConsumer(f.stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Entry:          jsii.String(handlerDir),
			Vpc:            vpc,
			VpcSubnets:     &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED},
			SecurityGroups: &[]awsec2.ISecurityGroup{sg},
			Layers: &[]awslambda.ILayerVersion{awslambda.LayerVersion_FromLayerVersionArn(f.stack, jsii.String("Otel"),
				jsii.String("arn:aws:lambda:eu-west-1:123456789012:layer:otel-collector-amd64:1"))},
			Role:         role,
			Architecture: awslambda.Architecture_X86_64(),
		})
	})
}

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
		`\"AWS/Lambda\",\"Throttles\"`, `\"Payments\",\"BatchDuration\"`} {
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

// TestMetricsAreTheHandlersOwn: the handler, configured by the environment
// the construct synthesized, writes the metrics MetricOutcome reads: the
// same namespace, dimension and names, for every outcome.
func TestMetricsAreTheHandlersOwn(t *testing.T) {
	f := dashboard(t)
	env := map[string]string{}
	cdktest.Must(t, func() {
		for _, fn := range *f.template.FindResources(jsii.String("AWS::Lambda::Function"), nil) {
			vars := (*fn)["Properties"].(map[string]any)["Environment"].(map[string]any)["Variables"].(map[string]any)
			for k, v := range vars {
				if s, ok := v.(string); ok {
					env[k] = s
				}
			}
		}
	})
	env[contract.TableVar] = "idempotency" // a Ref in the template
	var emf bytes.Buffer
	h, err := handler.New(func(o struct{ ID string }) (string, error) { return o.ID, nil },
		func(context.Context, struct{ ID string }, idempotency.Reservation) (string, error) { return "", nil },
		handler.WithGetenv(func(k string) string { return env[k] }), handler.WithStore(storetest.NewMemoryStore()), handler.WithMetrics(&emf))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := func(id string) string {
		m, _ := json.Marshal(map[string]string{"Type": "Notification", "MessageId": "m", "TopicArn": "arn:aws:sns:eu-west-1:1:t", "Message": `{"ID":"` + id + `"}`})
		return string(m)
	}
	if _, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "1", Body: body("a")}, {MessageId: "2", Body: "not json"}}}); err != nil {
		t.Fatal(err)
	}
	var line struct {
		AWS struct {
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name string }
			}
		} `json:"_aws"`
		Values map[string]any `json:"-"`
	}
	if err := json.Unmarshal(emf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, emf.String())
	}
	var values map[string]any
	_ = json.Unmarshal(emf.Bytes(), &values)
	cw := line.AWS.CloudWatchMetrics[0]
	names := map[string]bool{}
	for _, m := range cw.Metrics {
		names[m.Name] = true
	}
	metrics := map[string]awscdkMetric{}
	for _, o := range sqsbatch.Outcomes() {
		metrics[o.String()] = f.consumer.MetricOutcome(o, nil)
	}
	metrics["batch duration"] = f.consumer.MetricBatchDuration(nil)
	for what, m := range metrics {
		if *m.Namespace() != cw.Namespace {
			t.Errorf("%s: namespace %s, the handler writes %s", what, *m.Namespace(), cw.Namespace)
		}
		if !names[*m.MetricName()] {
			t.Errorf("%s: metric %s, the handler writes %v", what, *m.MetricName(), names)
		}
		dims := *m.Dimensions()
		if len(dims) != 1 || len(cw.Dimensions) != 1 || len(cw.Dimensions[0]) != 1 {
			t.Fatalf("%s: dimensions %v, the handler writes %v", what, dims, cw.Dimensions)
		}
		dim := cw.Dimensions[0][0]
		if got := dims[dim]; fmt.Sprint(deref(got)) != fmt.Sprint(values[dim]) {
			t.Errorf("%s: dimension %s = %v, the handler writes %v", what, dim, dims[dim], values[dim])
		}
	}
	if values["Processed"] != 1.0 || values["BadInput"] != 1.0 {
		t.Errorf("counts %v, want one processed and one bad input", values)
	}
}

// deref returns what a *string points to, and any other value as it is.
func deref(v any) any {
	if p, ok := v.(*string); ok && p != nil {
		return *p
	}
	return v
}

// awscdkMetric is what the test reads of a CloudWatch metric.
type awscdkMetric interface {
	Namespace() *string
	MetricName() *string
	Dimensions() *map[string]any
}

func TestMetricOutcomeRefusesWhatIsNotAnOutcome(t *testing.T) {
	f := dashboard(t)
	msg, panicked := cdktest.Panics(func() { f.consumer.MetricOutcome(sqsbatch.Outcome(99), nil) })
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
	if f.consumer.Node().TryFindChild(jsii.String(consumer.IDRole)) != nil {
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

// TestBringYourOwnPassesCDKNag: what the construct adds beside the user's
// resources passes both packs (the user's own resources are the user's).
func TestBringYourOwnPassesCDKNag(t *testing.T) {
	for name, fixture := range map[string]func(*testing.T) *fixture{
		"dashboard": dashboard, "own queue": ownQueue, "imported": imported, "overrides": overrides, "networked": networked,
	} {
		t.Run(name, func(t *testing.T) {
			f := fixture(t)
			for _, pack := range []string{"AwsSolutions", "Serverless"} {
				var got nagtest.Findings
				cdktest.Must(t, func() { got = nagtest.FindingsOf(f.nag, pack) })
				all := append(got.Errors, got.Warnings...)
				sort.Strings(all)
				if len(all) > 0 {
					t.Errorf("%s: %d errors, %d warnings:\n%s", pack, len(got.Errors), len(got.Warnings), strings.Join(all, "\n"))
				}
			}
		})
	}
}
