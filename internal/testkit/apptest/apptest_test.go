package apptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	defer jsii.Close()
	tmp, err := os.MkdirTemp("", "apptest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// KEEP_TEST_OUT=1 keeps the cloud assemblies (templates, cdk-nag
	// reports) for a look after a failure.
	if os.Getenv("KEEP_TEST_OUT") == "" {
		defer os.RemoveAll(tmp)
	}
	fixtures.OutRoot = filepath.Join(tmp, "out")
	h, err := consumertest.WriteHandlers(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fixtures.Entry = h.Handler
	return m.Run()
}

// fixture is one stack of package consumertest, synthesized with both
// cdk-nag packs.
type fixture struct {
	consumer consumer.IdempotentConsumer
	template assertions.Template
	nag      assertions.Annotations
}

// fixtures are package consumertest's, synthesized with both cdk-nag packs.
var fixtures = &consumertest.Loader{Prepare: func(app awscdk.App) { nagtest.AddPacks(app) }}

// load returns the named fixture, built once per test binary.
func load(t *testing.T, name string) *fixture {
	t.Helper()
	s := fixtures.Load(t, name)
	return &fixture{consumer: s.Consumer, template: s.Template, nag: s.Annotations}
}

func defaults(t *testing.T) *fixture  { return load(t, "Defaults") }
func custom(t *testing.T) *fixture    { return load(t, "Custom") }
func keyed(t *testing.T) *fixture     { return load(t, "Keyed") }
func dashboard(t *testing.T) *fixture { return load(t, "Dashboard") }
func ownQueue(t *testing.T) *fixture  { return load(t, "OwnQueue") }
func imported(t *testing.T) *fixture  { return load(t, "Imported") }
func overrides(t *testing.T) *fixture { return load(t, "Overrides") }
func networked(t *testing.T) *fixture { return load(t, "Networked") }
func fifos(t *testing.T) *fixture     { return load(t, "Fifo") }

// TestCDKNag checks both cdk-nag packs: nothing but what the construct
// suppresses with a reason, and, where the custom fixture turns tracing
// off, the one warning that says so.
func TestCDKNag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture func(*testing.T) *fixture
		want    map[string]int // pack → warnings
	}{
		{"defaults", defaults, nil},
		{"custom", custom, map[string]int{"Serverless": 1}},
		{"keyed", keyed, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fixture(t)
			for _, pack := range []string{"AwsSolutions", "Serverless"} {
				var got nagtest.Findings
				cdktest.Must(t, func() { got = nagtest.FindingsOf(f.nag, pack) })
				if len(got.Errors) > 0 {
					t.Errorf("%s errors:\n%s", pack, strings.Join(got.Errors, "\n"))
				}
				if len(got.Warnings) != tc.want[pack] {
					t.Errorf("%s warnings, want %d:\n%s", pack, tc.want[pack], strings.Join(got.Warnings, "\n"))
				}
				for _, w := range got.Warnings {
					if !strings.Contains(w, "Serverless-LambdaTracing") {
						t.Errorf("unexpected %s warning: %s", pack, w)
					}
				}
			}
		})
	}
}

func TestEverySuppressionCarriesAReason(t *testing.T) {
	f := defaults(t)
	var template map[string]any
	cdktest.Must(t, func() { template = *f.template.ToJSON() })
	got := nagtest.Suppressions(template)
	want := map[string]int{
		"AwsSolutions-SQS3":                              2, // the subscription dead-letter queue and its policy
		"AwsSolutions-IAM5":                              2, // X-Ray: the role and its default policy
		"Serverless-SQSRedrivePolicy":                    4, // both dead-letter queues and their policies
		"Serverless-LambdaDLQ":                           1,
		"Serverless-LambdaEventSourceMappingDestination": 1,
	}
	for rule, reasons := range got {
		if len(reasons) != want[rule] {
			t.Errorf("%s is suppressed on %d resources, want %d", rule, len(reasons), want[rule])
		}
		for _, r := range reasons {
			if len(r) < 60 {
				t.Errorf("%s: reason %q says too little", rule, r)
			}
		}
	}
	for rule := range want {
		if _, ok := got[rule]; !ok {
			t.Errorf("%s is not suppressed", rule)
		}
	}
}

// TestMetricsAreTheHandlersOwn: the handler, configured by the environment
// the construct synthesized (and the Region Lambda gives it), writes the
// metrics MetricOutcome reads: the same namespace, dimensions (the consumer
// and the Region) and names, for every outcome.
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
	env["AWS_REGION"] = "eu-west-1"        // Lambda's, the function's Region
	var emf bytes.Buffer
	h, err := sqsbatch.FromEnv(func(o struct{ ID string }) (string, error) { return o.ID, nil },
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
	for _, o := range outcome.Outcomes() {
		metrics[o.String()] = f.consumer.MetricOutcome(o, nil)
	}
	metrics["batch duration"] = f.consumer.MetricBatchDuration(nil)
	metrics["dead-lettered unstarted"] = f.consumer.MetricDeadLetteredUnstarted(nil)
	for what, m := range metrics {
		if *m.Namespace() != cw.Namespace {
			t.Errorf("%s: namespace %s, the handler writes %s", what, *m.Namespace(), cw.Namespace)
		}
		if !names[*m.MetricName()] {
			t.Errorf("%s: metric %s, the handler writes %v", what, *m.MetricName(), names)
		}
		dims := *m.Dimensions()
		if len(dims) != 2 || len(cw.Dimensions) != 1 || len(cw.Dimensions[0]) != 2 {
			t.Fatalf("%s: dimensions %v, the handler writes %v", what, dims, cw.Dimensions)
		}
		for _, dim := range cw.Dimensions[0] {
			got := fmt.Sprint(deref(dims[dim]))
			if dim == outcome.RegionDimension {
				// The stack's Region: in a stack of no explicit Region a
				// token, AWS::Region, which is the function's AWS_REGION.
				cdktest.Must(t, func() { got = fmt.Sprint(awscdk.Stack_Of(f.consumer.Function()).Resolve(dims[dim])) })
				if got == "map[Ref:AWS::Region]" {
					got = env["AWS_REGION"]
				}
			}
			if got != fmt.Sprint(values[dim]) {
				t.Errorf("%s: dimension %s = %v, the handler writes %v", what, dim, got, values[dim])
			}
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

// TestFifoConsumersPassCDKNag: FIFO queues and topics need no suppression
// beyond a standard consumer's.
func TestFifoConsumersPassCDKNag(t *testing.T) {
	f := fifos(t)
	for _, pack := range []string{"AwsSolutions", "Serverless"} {
		var got nagtest.Findings
		cdktest.Must(t, func() { got = nagtest.FindingsOf(f.nag, pack) })
		if len(got.Errors)+len(got.Warnings) > 0 {
			t.Errorf("%s:\n%s", pack, strings.Join(append(got.Errors, got.Warnings...), "\n"))
		}
	}
}

// TestCDKNagWritesTheGoldenSuppressions writes, with cdk-nag's own
// NagSuppressions, the metadata of constructs/internal/nag's golden file
// (-update rewrites it): that package's test checks that its Suppress
// writes the same, without importing cdk-nag.
func TestCDKNagWritesTheGoldenSuppressions(t *testing.T) {
	const golden = "../../../constructs/internal/nag/testdata/cdknag.json"
	type rule struct {
		ID        string   `json:"id"`
		Reason    string   `json:"reason"`
		AppliesTo []string `json:"appliesTo,omitempty"`
	}
	rules := []rule{
		{ID: "AwsSolutions-SQS3", Reason: "A dead-letter queue has no dead-letter queue of its own."},
		{ID: "AwsSolutions-IAM5", Reason: "Visibility ≥ 6 × timeout: a reason beyond Latin-1.", AppliesTo: []string{"Resource::*"}},
	}
	var nagRules []*cdknag.NagPackSuppression
	for _, r := range rules {
		s := &cdknag.NagPackSuppression{Id: jsii.String(r.ID), Reason: jsii.String(r.Reason)}
		if r.AppliesTo != nil {
			applies := []any{}
			for _, a := range r.AppliesTo {
				applies = append(applies, jsii.String(a))
			}
			s.AppliesTo = &applies
		}
		nagRules = append(nagRules, s)
	}
	earlier := &cdknag.NagPackSuppression{Id: jsii.String("Serverless-SQSRedrivePolicy"), Reason: jsii.String("Suppressed by the app before the construct.")}
	out := map[string]any{"rules": rules}
	cdktest.Must(t, func() {
		stack := awscdk.NewStack(nil, jsii.String("S"), nil)
		metadata := func(q awssqs.Queue) any {
			return q.Node().DefaultChild().(awscdk.CfnResource).GetMetadata(jsii.String("cdk_nag"))
		}
		fresh := awssqs.NewQueue(stack, jsii.String("Fresh"), nil)
		cdknag.NagSuppressions_AddResourceSuppressions(fresh, &nagRules, nil)
		cdknag.NagSuppressions_AddResourceSuppressions(fresh, &nagRules, nil)
		out["fresh"] = metadata(fresh)
		suppressed := awssqs.NewQueue(stack, jsii.String("Suppressed"), nil)
		cdknag.NagSuppressions_AddResourceSuppressions(suppressed, &[]*cdknag.NagPackSuppression{earlier}, nil)
		out["earlier"] = metadata(suppressed)
		cdknag.NagSuppressions_AddResourceSuppressions(suppressed, &nagRules, nil)
		cdknag.NagSuppressions_AddResourceSuppressions(suppressed, &nagRules, nil)
		out["afterEarlier"] = metadata(suppressed)
	})
	got, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *cdktest.Update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("cdk-nag writes other metadata than %s; run go test ./internal/apptest -run TestCDKNagWritesTheGoldenSuppressions -update, then go test ./constructs/internal/nag, and change package nag until it passes:\n%s", golden, got)
	}
}
