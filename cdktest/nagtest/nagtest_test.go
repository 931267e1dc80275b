package nagtest_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/tbtest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
)

func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// queueStack is a stack with one queue that breaks three cdk-nag rules
// (AwsSolutions-SQS3 and -SQS4, Serverless-SQSRedrivePolicy, all errors),
// in an app with the repository's cdk.json, plus the context given.
func queueStack(t *testing.T, context map[string]any) (awscdk.Stack, awssqs.Queue) {
	t.Helper()
	root, err := cdktest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cdktest.ContextIn(root)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range context {
		ctx[k] = v
	}
	var stack awscdk.Stack
	var queue awssqs.Queue
	cdktest.Must(t, func() {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(t.TempDir())})
		stack = awscdk.NewStack(app, jsii.String("Shop"), nil)
		queue = awssqs.NewQueue(stack, jsii.String("Orders"), nil)
		nagtest.AddPacks(app)
	})
	return stack, queue
}

var wantErrors = map[string][]string{
	"AwsSolutions": {"/Shop/Orders/Resource: AwsSolutions-SQS3", "/Shop/Orders/Resource: AwsSolutions-SQS4"},
	"Serverless":   {"/Shop/Orders/Resource: Serverless-SQSRedrivePolicy"},
}

func checkFindings(t *testing.T, got map[string]nagtest.Findings) {
	t.Helper()
	if len(got) != len(wantErrors) {
		t.Errorf("packs %v, want AwsSolutions and Serverless", got)
	}
	for pack, want := range wantErrors {
		f := got[pack]
		var heads []string
		for _, e := range f.Errors {
			head, _, _ := strings.Cut(e, ": The ")
			heads = append(heads, head)
		}
		slices.Sort(heads)
		if !slices.Equal(heads, want) || len(f.Warnings) != 0 {
			t.Errorf("%s: errors %q warnings %q, want errors %q", pack, f.Errors, f.Warnings, want)
		}
	}
}

// TestCheckReportsErrorsThatFailTheSynthesis: under the flag
// @aws-cdk/core:annotationsInValidationReport (the repository's cdk.json,
// as `cdk init` writes it) cdk-nag's errors fail the synthesis, and
// assertions.Annotations_FromStack panics ("ValidationFailed: Validation
// failed. A copy of this report can be found in: …"); Check returns the
// findings instead.
func TestCheckReportsErrorsThatFailTheSynthesis(t *testing.T) {
	stack, _ := queueStack(t, nil)
	msg, panicked := cdktest.Panics(func() { assertions.Annotations_FromStack(stack) })
	if !panicked || !strings.Contains(msg, "Validation failed") || !strings.Contains(msg, "AwsSolutions-SQS4") {
		t.Fatalf("Annotations_FromStack: panicked=%v %q; want the validation failure, explained with its findings", panicked, msg)
	}
	got, err := nagtest.Check(stack)
	if err != nil {
		t.Fatal(err)
	}
	checkFindings(t, got)

	r := &tbtest.Recorder{TB: t}
	nagtest.NoFindings(r, stack)
	if len(r.Failures) != 2 || !strings.Contains(r.Failures[0], "AwsSolutions: 2 errors, 0 warnings") || !strings.Contains(r.Failures[0], "AwsSolutions-SQS4: The SQS queue") ||
		!strings.Contains(r.Failures[1], "Serverless: 1 errors") {
		t.Errorf("NoFindings reported %q; want one failure per pack, each finding listed", r.Failures)
	}
}

// TestCheckReadsAnnotations: without the flag the synthesis succeeds and the
// findings are the stack's annotations: the same ones.
func TestCheckReadsAnnotations(t *testing.T) {
	stack, _ := queueStack(t, map[string]any{"@aws-cdk/core:annotationsInValidationReport": false})
	got, err := nagtest.Check(stack)
	if err != nil {
		t.Fatal(err)
	}
	checkFindings(t, got)
}

// TestCheckSuppressedAndUnchecked: a suppressed finding is none; a stack
// that no pack checks is an error, not a pass.
func TestCheckSuppressedAndUnchecked(t *testing.T) {
	stack, queue := queueStack(t, nil)
	cdktest.Must(t, func() {
		var rules []*cdknag.NagPackSuppression
		for _, id := range []string{"AwsSolutions-SQS3", "AwsSolutions-SQS4", "Serverless-SQSRedrivePolicy"} {
			rules = append(rules, &cdknag.NagPackSuppression{Id: jsii.String(id), Reason: jsii.String("a test of the suppressions")})
		}
		cdknag.NagSuppressions_AddResourceSuppressions(queue, &rules, nil)
	})
	r := &tbtest.Recorder{TB: t}
	nagtest.NoFindings(r, stack)
	if len(r.Failures) != 0 {
		t.Errorf("suppressed findings reported: %q", r.Failures)
	}

	var bare awscdk.Stack
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(t.TempDir())
		if err != nil {
			panic(err)
		}
		bare = awscdk.NewStack(app, jsii.String("Bare"), nil)
		awssqs.NewQueue(bare, jsii.String("Orders"), nil)
	})
	if _, err := nagtest.Check(bare); err == nil || !strings.Contains(err.Error(), "nagtest.AddPacks") {
		t.Errorf("a stack without packs: %v, want an error that names AddPacks", err)
	}
}

// TestCheckTemplateChecksWhatTheAppSkips: a Lambda function written as a
// plain CfnResource (as CDK writes its own helpers) is skipped by the packs
// in the app, and found over the template read back; its cdk_nag metadata
// suppresses, with its reason, as in the app.
func TestCheckTemplateChecksWhatTheAppSkips(t *testing.T) {
	fn := func(metadata map[string]any) map[string]any {
		r := map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{
			"Runtime": "python3.9", "Handler": "index.handler", "Role": "arn:aws:iam::123456789012:role/r",
			"Code": map[string]any{"ZipFile": "def handler(e, c): pass"}}}
		if metadata != nil {
			r["Metadata"] = metadata
		}
		return r
	}
	findings, err := nagtest.CheckTemplate(map[string]any{"Resources": map[string]any{"Helper": fn(nil)},
		"Parameters": map[string]any{"BootstrapVersion": map[string]any{"Type": "String"}}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := findings["AwsSolutions"].Errors; len(got) != 1 || !strings.Contains(got[0], "AwsSolutions-L1") {
		t.Errorf("AwsSolutions errors %q, want the runtime's (L1)", got)
	}
	if got := findings["Serverless"]; len(got.Errors)+len(got.Warnings) == 0 {
		t.Error("no Serverless finding on a function without memory, tracing or DLQ")
	}
	suppressed, err := nagtest.CheckTemplate(map[string]any{"Resources": map[string]any{"Helper": fn(map[string]any{"cdk_nag": map[string]any{
		"rules_to_suppress": []any{map[string]any{"id": "AwsSolutions-L1", "reason": "CDK's own code on the runtime CDK chooses."}}}})}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := suppressed["AwsSolutions"].Errors; len(got) != 0 {
		t.Errorf("suppressed, still %q", got)
	}
}
