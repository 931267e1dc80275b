package stack_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"

	"example.com/payments/stack"
)

func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// synthesized is the stack, synthesized once (with cdk-nag's packs).
var synthesized struct {
	done     bool
	err      string
	took     time.Duration
	payments *stack.Payments
	template map[string]any
	nag      assertions.Annotations
}

func load(t *testing.T) *stack.Payments {
	t.Helper()
	s := &synthesized
	if !s.done {
		s.done = true
		out := t.TempDir()
		start := time.Now()
		s.err, _ = cdktest.Panics(func() {
			app, err := cdktest.NewApp(out)
			if err != nil {
				panic(err)
			}
			s.payments = stack.NewPayments(app, jsii.String("Payments"), nil)
			nagtest.AddPacks(app)
			s.template = *assertions.Template_FromStack(s.payments.Stack, nil).ToJSON()
			s.nag = assertions.Annotations_FromStack(s.payments.Stack)
		})
		s.took = time.Since(start)
	}
	if s.err != "" {
		t.Fatal(s.err)
	}
	return s.payments
}

// TestSnapshot compares the stack with its golden template; `go test
// ./stack -run Snapshot -update` rewrites it.
func TestSnapshot(t *testing.T) {
	load(t)
	cdktest.Snapshot(t, synthesized.template, "testdata/Payments.template.json")
	t.Logf("synth (both handlers built, cdk-nag applied): %s", synthesized.took.Round(time.Millisecond))
}

func TestResources(t *testing.T) {
	load(t)
	counts := map[string]int{}
	for _, r := range synthesized.template["Resources"].(map[string]any) {
		counts[r.(map[string]any)["Type"].(string)]++
	}
	for typ, want := range map[string]int{
		"AWS::SNS::Topic":                 2,
		"AWS::SQS::Queue":                 6, // Settle's three FIFO queues; the team's two; Refund's subscription DLQ
		"AWS::DynamoDB::Table":            2, // Ledger (both consumers' records), Balances
		"AWS::Lambda::Function":           3, // and CDK's provider that empties the VPC's default security group
		"AWS::Lambda::EventSourceMapping": 2,
		"AWS::CloudWatch::Alarm":          20,
		"AWS::CloudWatch::Dashboard":      2,
	} {
		if counts[typ] != want {
			t.Errorf("%s: %d, want %d", typ, counts[typ], want)
		}
	}
	var lines []string
	for typ, n := range counts {
		lines = append(lines, fmt.Sprintf("%3d %s", n, typ))
	}
	sort.Strings(lines)
	t.Logf("resources:\n%s", strings.Join(lines, "\n"))
}

func TestTheConsumersAreWhatTheTeamAskedFor(t *testing.T) {
	p := load(t)
	fns := map[string]map[string]any{}
	for _, r := range synthesized.template["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" {
			continue
		}
		props := r["Properties"].(map[string]any)
		if env, ok := props["Environment"].(map[string]any); ok {
			vars := env["Variables"].(map[string]any)
			if ns, ok := vars["IDEMPOTENCY_NAMESPACE"].(string); ok {
				fns[ns] = props
			}
		}
	}
	if got := fmt.Sprint(fns["settle"]["Architectures"]); got != "[arm64]" {
		t.Errorf("settle runs on %s", got)
	}
	if env := fns["settle"]["Environment"].(map[string]any)["Variables"].(map[string]any); env["QUEUE_FIFO"] != "true" {
		t.Errorf("settle is not told it is FIFO: %v", env)
	}
	if got := fmt.Sprint(fns["refund"]["Architectures"]); got != "[x86_64]" {
		t.Errorf("refund runs on %s", got)
	}
	if fns["refund"]["VpcConfig"] == nil || fns["settle"]["VpcConfig"] != nil {
		t.Errorf("VpcConfig: refund %v, settle %v", fns["refund"]["VpcConfig"], fns["settle"]["VpcConfig"])
	}
	if *p.Refund.Queue().Node().Path() != *p.RefundQueue.Node().Path() || *p.Refund.DeadLetterQueue().Node().Path() != *p.RefundDLQ.Node().Path() {
		t.Error("Refund does not consume the team's queue")
	}
	if *p.Settle.Table().Node().Path() != *p.Ledger.Node().Path() || *p.Refund.Table().Node().Path() != *p.Ledger.Node().Path() {
		t.Error("the consumers do not share the ledger")
	}
}

// TestCDKNag: both packs, no finding; the suppressions are the construct's,
// each with its reason.
func TestCDKNag(t *testing.T) {
	load(t)
	for _, pack := range []string{"AwsSolutions", "Serverless"} {
		var got nagtest.Findings
		cdktest.Must(t, func() { got = nagtest.FindingsOf(synthesized.nag, pack) })
		t.Logf("%s: %d errors, %d warnings", pack, len(got.Errors), len(got.Warnings))
		if len(got.Errors)+len(got.Warnings) > 0 {
			t.Errorf("%s:\n%s", pack, strings.Join(append(got.Errors, got.Warnings...), "\n"))
		}
	}
	counts, total := map[string]int{}, 0
	for rule, reasons := range nagtest.Suppressions(synthesized.template) {
		counts[rule] = len(reasons)
		total += len(reasons)
	}
	t.Logf("suppressions: %d (rule: resources) %v", total, counts)
}
