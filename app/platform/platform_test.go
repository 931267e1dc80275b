package platform_test

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/names"
	"github.com/idempotent-consumer/idempotent-consumer/app/platform"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// synthesized is the example stack, synthesized once per test binary (with
// both cdk-nag packs) and shared by the tests.
var synthesized struct {
	done     bool
	err      string
	platform *platform.OrdersPlatform
	template map[string]any
	tmpl     assertions.Template
	nag      assertions.Annotations
}

func load(t *testing.T) *platform.OrdersPlatform {
	t.Helper()
	s := &synthesized
	if !s.done {
		s.done = true
		out, err := os.MkdirTemp("", "platform-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(out)
		s.err, _ = cdktest.Panics(func() {
			app, err := cdktest.NewApp(out)
			if err != nil {
				panic(err)
			}
			s.platform = platform.NewOrdersPlatform(app, jsii.String("OrdersPlatform"), nil)
			nagtest.AddPacks(app)
			s.tmpl = assertions.Template_FromStack(s.platform.Stack, nil)
			s.template = *s.tmpl.ToJSON()
			s.nag = assertions.Annotations_FromStack(s.platform.Stack)
		})
	}
	if s.err != "" {
		t.Fatal(s.err)
	}
	return s.platform
}

// TestSnapshot compares the example stack with its golden template;
// `go test ./app/platform -run Snapshot -update` rewrites it.
func TestSnapshot(t *testing.T) {
	load(t)
	cdktest.Snapshot(t, synthesized.template, "testdata/OrdersPlatform.template.json")
}

func TestResources(t *testing.T) {
	load(t)
	counts := map[string]int{}
	for _, r := range synthesized.template["Resources"].(map[string]any) {
		counts[r.(map[string]any)["Type"].(string)]++
	}
	want := map[string]int{
		"AWS::SNS::Topic":                  1, // orders, shared by the three consumers
		"AWS::SNS::TopicPolicy":            1,
		"AWS::SNS::Subscription":           3,
		"AWS::Events::EventBus":            1, // the platform's bus
		"AWS::Events::Rule":                2, // ShipOrder's, the saga's
		"AWS::S3::Bucket":                  4, // uploads, and its access logs; NotifyCharge's failure bucket, and its access logs
		"AWS::S3::BucketPolicy":            4,
		"Custom::S3BucketNotifications":    1,  // ImportInvoice's notification on uploads
		"AWS::SQS::Queue":                  17, // queue and DLQ per consumer; a subscription DLQ per SNS consumer, the rule target's DLQ; the saga rule target's DLQ
		"AWS::SQS::QueuePolicy":            17,
		"AWS::DynamoDB::Table":             11,  // one per consumer and endpoint, CreditWallet's is Wallets; the orders table (the outbox); the saga's steps' (one, shared)
		"AWS::Logs::LogGroup":              17,  // the functions'; the orders API stage's access logs; CDK's bucket-notifications handler's (its retention); the saga's execution logs
		"AWS::IAM::Role":                   17,  // one per consumer, endpoint and step, CDK's bucket-notifications handler's; the state machine's, the saga rule's
		"AWS::IAM::Policy":                 17,  // the consumers', endpoints' and steps', the handler's on the uploads bucket; the state machine's, the saga rule's
		"AWS::Lambda::Function":            15,  // ten consumers and endpoints, five saga steps
		"AWS::Logs::MetricFilter":          25,  // five per step, on its log lines
		"AWS::StepFunctions::StateMachine": 1,   // the order saga
		"AWS::Lambda::EventSourceMapping":  7,   // six queues', the orders table stream's
		"AWS::CloudWatch::Alarm":           108, // ten per SNS consumer, nine per other, four of the rule, eight of the stream consumer, five for the webhook, four for the IAM route (no signature alarm), six per step
		"AWS::KMS::Key":                    1,   // the Stripe secret's
		"AWS::SecretsManager::Secret":      1,   // the Stripe webhook's signing secret
		"AWS::Lambda::Url":                 1,   // StripeHooks'
		"AWS::Lambda::Permission":          3,   // the URL's two (InvokeFunctionUrl and InvokeFunction), the route's
		"AWS::ApiGatewayV2::Api":           1,   // the orders API
		"AWS::ApiGatewayV2::Stage":         1,
		"AWS::ApiGatewayV2::Route":         1, // POST /orders
		"AWS::ApiGatewayV2::Integration":   1,
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		var lines []string
		for typ, n := range counts {
			lines = append(lines, fmt.Sprintf("%s: %d (want %d)", typ, n, want[typ]))
		}
		sort.Strings(lines)
		t.Errorf("resource counts:\n%s", strings.Join(lines, "\n"))
	}
}

func TestConsumersShareTheOrdersTopic(t *testing.T) {
	p := load(t)
	topic := p.Stack.GetLogicalId(p.Orders.Node().DefaultChild().(awscdk.CfnElement))
	cdktest.Must(t, func() {
		synthesized.tmpl.ResourcePropertiesCountIs(jsii.String("AWS::SNS::Subscription"), map[string]any{
			"Protocol": "sqs",
			"TopicArn": map[string]any{"Ref": *topic},
		}, jsii.Number(3))
	})
}

func TestWalletSharesTheWalletsTable(t *testing.T) {
	p := load(t)
	wallets := *p.Stack.GetLogicalId(p.Wallets.Node().DefaultChild().(awscdk.CfnElement))
	if got := *p.Wallet.Table().Node().Path(); got != *p.Wallets.Node().Path() {
		t.Errorf("CreditWallet table is %s, want Wallets", got)
	}
	cdktest.Must(t, func() {
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": map[string]any{
				contract.TableVar:         map[string]any{"Ref": wallets},
				contract.NamespaceVar:     "wallet",
				contract.ConsumerVar:      "OrdersPlatform/CreditWallet",
				contract.PayloadIgnoreVar: "placedAt",
			}},
		})
		synthesized.tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"DeletionPolicy": "Retain",
			"Properties": map[string]any{
				"KeySchema":                        []any{map[string]any{"AttributeName": "pk", "KeyType": "HASH"}},
				"TimeToLiveSpecification":          map[string]any{"AttributeName": "ttl", "Enabled": true},
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			},
		})
	})
	for _, c := range []struct{ name, namespace string }{{"ChargeOrder", "charge"}, {"SendReceipt", "receipt"}} {
		cdktest.Must(t, func() {
			synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
				"Environment": map[string]any{"Variables": map[string]any{
					contract.NamespaceVar:     c.namespace,
					contract.ConsumerVar:      "OrdersPlatform/" + c.name,
					contract.PayloadIgnoreVar: "placedAt",
				}},
			})
		})
	}
}

func TestCDKNag(t *testing.T) {
	load(t)
	for _, pack := range []string{"AwsSolutions", "Serverless"} {
		var got nagtest.Findings
		cdktest.Must(t, func() { got = nagtest.FindingsOf(synthesized.nag, pack) })
		if len(got.Errors)+len(got.Warnings) > 0 {
			t.Errorf("%s: %d errors, %d warnings:\n%s", pack, len(got.Errors), len(got.Warnings),
				strings.Join(append(got.Errors, got.Warnings...), "\n"))
		}
	}
	counts := map[string]int{}
	for rule, reasons := range nagtest.Suppressions(synthesized.template) {
		counts[rule] = len(reasons)
	}
	t.Logf("suppressions (rule: resources): %v", counts)
}

// TestCDKNagOverTheTemplate: both packs over the example app's template
// read back as CloudFormation, where CDK's own helpers (the
// bucket-notifications handler, a plain CfnResource in the app, which the
// packs skip there) are checked too: no error and no warning unsuppressed,
// each suppression with its reason in the template.
func TestCDKNagOverTheTemplate(t *testing.T) {
	load(t)
	findings, err := nagtest.CheckTemplate(synthesized.template, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, pack := range []string{"AwsSolutions", "Serverless"} {
		got := findings[pack]
		t.Logf("%s over the template: %d errors, %d warnings", pack, len(got.Errors), len(got.Warnings))
		if len(got.Errors)+len(got.Warnings) > 0 {
			t.Errorf("%s: %d errors, %d warnings:\n%s", pack, len(got.Errors), len(got.Warnings), strings.Join(append(got.Errors, got.Warnings...), "\n"))
		}
	}
}

// TestEntriesResolveFromTheModuleRoot: the example's entries are relative
// to the module root, so the stack synthesizes from this package's folder
// (go test's working directory) as it does under cdk synth at the root.
func TestEntriesResolveFromTheModuleRoot(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := cdktest.ModuleRoot()
	if err != nil || wd == root {
		t.Fatalf("working directory %s, module root %s (%v): the test must run below the root", wd, root, err)
	}
	if p := load(t); p.Charge == nil || p.Receipt == nil || p.Wallet == nil { // load fails the test if the synth panicked
		t.Fatal("a consumer is missing")
	}
}

// TestEndpoints: Stripe's webhook is on a public function URL (the handler
// verifies the signature) with the secret's ARN, never its value, in the
// function's environment; the orders API is POST /orders behind IAM, its
// keys scoped to the caller.
func TestEndpoints(t *testing.T) {
	p := load(t)
	secret := *p.Stack.GetLogicalId(p.StripeSecret.Node().DefaultChild().(awscdk.CfnElement))
	cdktest.Must(t, func() {
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Url"), map[string]any{"AuthType": "NONE"})
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": map[string]any{
				contract.SourceVar:          "http",
				contract.WebhookProviderVar: "stripe",
				contract.WebhookSecretVar:   map[string]any{"Ref": secret},
				contract.ConsumerVar:        "OrdersPlatform/StripeHooks",
			}},
		})
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{
			"RouteKey": "POST " + platform.OrdersRoute, "AuthorizationType": "AWS_IAM",
		})
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": map[string]any{
				// No HTTP_CLIENT_ATTRIBUTE: the contract's default behind
				// IAM, "iam", goes unwritten.
				contract.SourceVar:   "http",
				contract.ConsumerVar: "OrdersPlatform/OrdersApi",
			}},
		})
	})
}

// TestOrderSaga: the saga is a Standard state machine reserve-stock →
// charge → ship whose Catch sends each business failure to its
// compensations (a declined charge to release-stock; an undeliverable
// order to refund, then release-stock), each Task invoking its step's
// function by ARN with the Retry of the step's errors; each step's
// function carries the contract of its step; the rule on the bus starts
// it with the order.
func TestOrderSaga(t *testing.T) {
	p := load(t)
	var def map[string]any
	for _, r := range synthesized.template["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] != "AWS::StepFunctions::StateMachine" {
			continue
		}
		if r["Properties"].(map[string]any)["StateMachineType"] != "STANDARD" {
			t.Errorf("the saga is not a Standard workflow: %v", r["Properties"])
		}
		var b strings.Builder
		for _, part := range r["Properties"].(map[string]any)["DefinitionString"].(map[string]any)["Fn::Join"].([]any)[1].([]any) {
			if s, ok := part.(string); ok {
				b.WriteString(s)
			} else {
				b.WriteString("ARN")
			}
		}
		if err := json.Unmarshal([]byte(b.String()), &def); err != nil {
			t.Fatal(err)
		}
	}
	states, _ := def["States"].(map[string]any)
	next := func(name string) string { s, _ := states[name].(map[string]any)["Next"].(string); return s }
	catch := func(name string) string {
		c := states[name].(map[string]any)["Catch"].([]any)[0].(map[string]any)
		return fmt.Sprint(c["ErrorEquals"], "→", c["Next"])
	}
	if def["StartAt"] != "ReserveStock" || next("ReserveStock") != "Charge" || next("Charge") != "Ship" || next("Refund") != "ReleaseStock" {
		t.Errorf("the saga's order: %v", def)
	}
	for state, want := range map[string]string{"ReserveStock": "[" + names.OutOfStock + "]→Rejected", "Charge": "[" + names.PaymentDeclined + "]→ReleaseStock", "Ship": "[" + names.Undeliverable + "]→Refund"} {
		if got := catch(state); got != want {
			t.Errorf("%s catches %s, want %s", state, got, want)
		}
	}
	for _, name := range []string{"ReserveStock", "Charge", "Ship", "Refund", "ReleaseStock"} {
		s := states[name].(map[string]any)
		if s["Resource"] != "ARN" || !strings.Contains(fmt.Sprint(s["Retry"]), "Step.InProgress") {
			t.Errorf("%s: %v", name, s)
		}
	}
	for _, st := range []struct{ name, path string }{{names.Reserve, "SagaReserveStock"}, {names.Charge, "SagaCharge"}, {names.Ship, "SagaShip"}, {names.Refund, "SagaRefund"}, {names.Release, "SagaReleaseStock"}} {
		cdktest.Must(t, func() {
			synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
				"Environment": map[string]any{"Variables": map[string]any{
					contract.SourceVar: "step", contract.StepNameVar: st.name, contract.NamespaceVar: st.name,
					contract.ConsumerVar: "OrdersPlatform/" + st.path, contract.PayloadIgnoreVar: "placedAt,reservation,charge,shipment,refund,release,error",
				}},
			})
		})
	}
	cdktest.Must(t, func() {
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"EventPattern": map[string]any{"source": []any{"orders"}, "detail-type": []any{"OrderPlaced"}},
			"Targets":      []any{assertions.Match_ObjectLike(&map[string]any{"InputPath": "$.detail"})},
		})
	})
	if p.Saga.Charge.Table() != p.Saga.Reserve.Table() {
		t.Error("the steps do not share one table")
	}
}
