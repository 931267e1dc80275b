package cdktest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/tbtest"
)

func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// TestSnapshot: -update writes the golden file with asset hashes masked; a
// new asset hash is no difference, a changed property is one, reported as
// a unified diff with context (it was "line 14:\n- …\n+ …", a line that
// says nothing when it is "},") and the command that rewrites the file.
func TestSnapshot(t *testing.T) {
	golden := filepath.Join(t.TempDir(), "testdata", "S.template.json")
	hash := func(c byte) string { return strings.Repeat(string(c), 64) }
	template := func(asset, topic string) map[string]any {
		return map[string]any{"Resources": map[string]any{
			"Fn":    map[string]any{"Properties": map[string]any{"Code": map[string]any{"S3Key": asset + ".zip"}}},
			"Topic": map[string]any{"Properties": map[string]any{"DisplayName": topic}},
		}}
	}
	*cdktest.Update = true
	cdktest.Snapshot(t, template(hash('a'), "orders"), golden)
	*cdktest.Update = false
	written, err := os.ReadFile(golden)
	if err != nil || strings.Contains(string(written), hash('a')) || !strings.Contains(string(written), "ASSET_HASH.zip") {
		t.Fatalf("golden file %s (%v): want the asset hash masked", written, err)
	}
	r := &tbtest.Recorder{TB: t}
	cdktest.Snapshot(r, template(hash('b'), "orders"), golden)
	if len(r.Failures) != 0 {
		t.Fatalf("a new asset hash made a difference: %v", r.Failures)
	}
	cdktest.Snapshot(r, template(hash('a'), "payments"), golden)
	want := `--- ` + golden + `
+++ synthesized
@@ -9,7 +9,7 @@
     },
     "Topic": {
       "Properties": {
-        "DisplayName": "orders"
+        "DisplayName": "payments"
       }
     }
   }
`
	if len(r.Failures) != 1 || !strings.HasSuffix(r.Failures[0], "\n"+want) || !strings.Contains(r.Failures[0], "-update") {
		t.Fatalf("a changed property: %v; want one failure with the unified diff\n%s\nand the -update flag", r.Failures, want)
	}
}

// TestTemplateAndPanics: Template synthesizes a stack; a jsii error becomes
// a message, not the end of the test binary.
func TestTemplateAndPanics(t *testing.T) {
	app, err := cdktest.NewApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stack := awscdk.NewStack(app, jsii.String("S"), nil)
	awssns.NewTopic(stack, jsii.String("Orders"), nil)
	resources := cdktest.Template(t, stack)["Resources"].(map[string]any)
	if len(resources) != 1 {
		t.Fatalf("resources %v, want the topic", resources)
	}
	msg, panicked := cdktest.Panics(func() { awssns.NewTopic(stack, jsii.String("Orders"), nil) })
	if !panicked || !strings.Contains(msg, "There is already a Construct with name 'Orders'") {
		t.Fatalf("panic %v %q; want jsii's message", panicked, msg)
	}
}

// Example synthesizes a stack as a test does (with the feature flags of
// the module's cdk.json), and turns a jsii error into a message instead of
// the end of the test binary. A whole snapshot and cdk-nag test of an app
// is in docs/testing.md (package cdktest/internal/shop runs it).
func Example() {
	outdir, err := os.MkdirTemp("", "cdktest-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(outdir)
	app, err := cdktest.NewApp(outdir)
	if err != nil {
		fmt.Println(err) // an unsupported Node.js, or no cdk.json
		return
	}
	stack := awscdk.NewStack(app, jsii.String("Shop"), nil)
	awssns.NewTopic(stack, jsii.String("Orders"), nil)
	var template map[string]any
	if msg, panicked := cdktest.Panics(func() { template = *assertions.Template_FromStack(stack, nil).ToJSON() }); panicked {
		fmt.Println(msg)
		return
	}
	for id, r := range template["Resources"].(map[string]any) {
		fmt.Println(id, r.(map[string]any)["Type"])
	}
	msg, _ := cdktest.Panics(func() { awssns.NewTopic(stack, jsii.String("Orders"), nil) })
	fmt.Println(strings.SplitN(msg, " in ", 2)[0])
	// Output:
	// OrdersA9B65338 AWS::SNS::Topic
	// There is already a Construct with name 'Orders'
}

// TestContextIn: a missing cdk.json, or one without context, is an error
// that says what the kit reads it for.
func TestContextIn(t *testing.T) {
	dir := t.TempDir()
	if _, err := cdktest.ContextIn(dir); err == nil || !strings.Contains(err.Error(), "feature flags of your app's cdk.json") {
		t.Errorf("no cdk.json: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cdk.json"), []byte(`{"app":"go run ."}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cdktest.ContextIn(dir); err == nil || !strings.Contains(err.Error(), `has no "context"`) {
		t.Errorf("cdk.json without context: %v", err)
	}
	root, err := cdktest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cdktest.ContextIn(root)
	if err != nil || ctx["@aws-cdk/core:annotationsInValidationReport"] != true {
		t.Errorf("the repository's cdk.json: %v, %v", ctx["@aws-cdk/core:annotationsInValidationReport"], err)
	}
}
