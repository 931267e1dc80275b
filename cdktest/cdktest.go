// Package cdktest is a test kit for Go CDK apps and constructs, such as the
// apps that use the IdempotentConsumer construct: it synthesizes a stack in a
// test with the feature flags of the module's cdk.json, turns jsii panics into
// test failures with a readable message, and compares a stack's template with
// a golden file (asset hashes masked; `go test -update` rewrites it).
//
// jsii is one Node.js process behind every CDK call: tests that use this
// package must not call t.Parallel, and must close jsii once, from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }
//
// Running the cdk-nag packs is package nagtest, so that an app that does
// not use cdk-nag does not import it through this kit.
package cdktest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/report"
	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
)

// ModuleRoot returns the directory holding go.mod, found from the working
// directory upwards (a test runs in its package's directory).
func ModuleRoot() (string, error) { return modroot.OfWorkingDirectory() }

// moduleContext returns the "context" of the cdk.json in the module's root
// (the folder of go.mod): the feature flags `cdk synth` uses, so that tests
// synthesize what the CLI would.
func moduleContext() (map[string]any, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	return ContextIn(root)
}

// ContextIn returns the "context" of the cdk.json in dir (the feature flags
// `cdk synth` uses), for a test whose CDK app is not in its own module, or
// that builds its app itself (NewApp reads the module root's).
func ContextIn(dir string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cdk.json"))
	if err != nil {
		return nil, fmt.Errorf("cdktest reads the feature flags of your app's cdk.json (its \"context\", as `cdk init` writes it): %w", err)
	}
	var cfg struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("cdk.json: %w", err)
	}
	if len(cfg.Context) == 0 {
		return nil, fmt.Errorf("%s has no \"context\": the feature flags that `cdk init` writes there are what cdk synth uses, and what tests must synthesize with", filepath.Join(dir, "cdk.json"))
	}
	return cfg.Context, nil
}

// NewApp returns an app with cdk.json's context that writes its cloud
// assembly under outdir. It fails when jsii would run on an unsupported
// Node.js (CheckNode says what to do).
func NewApp(outdir string) (awscdk.App, error) {
	if err := CheckNode(); err != nil {
		return nil, err
	}
	ctx, err := moduleContext()
	if err != nil {
		return nil, err
	}
	return awscdk.NewApp(&awscdk.AppProps{
		Context: &ctx,
		Outdir:  jsii.String(outdir),
	}), nil
}

// Must runs f and turns a panic (a failed assertion or any other jsii
// error) into a fatal test failure, so that one failure does not end the
// whole test binary.
func Must(t testing.TB, f func()) {
	t.Helper()
	if msg, panicked := Panics(f); panicked {
		t.Fatal(msg)
	}
}

// Panics runs f and reports whether it panicked, with the panic's message;
// a synthesis that failed validation has the findings of its validation
// report added to the message, one line each ("error /Shop/Orders/Resource:
// AwsSolutions-SQS4: …").
func Panics(f func()) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, panicked = report.Explain(fmt.Sprint(r)), true
		}
	}()
	f()
	return "", false
}

// Update, set by `go test -update`, makes Snapshot rewrite golden files
// instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite the golden templates of cdktest.Snapshot")

// Main runs the tests of a package that uses the CDK and closes jsii after
// them; it returns the exit code for os.Exit. When jsii would run on an
// unsupported Node.js, it runs no test, prints what to do (see CheckNode)
// and returns 2.
func Main(m *testing.M) int {
	if err := CheckNode(); err != nil {
		fmt.Fprintln(os.Stderr, "cdktest:", err)
		return 2
	}
	defer jsii.Close()
	return m.Run()
}

// Template synthesizes stack and returns its CloudFormation template, or
// fails t with the jsii error.
func Template(t testing.TB, stack awscdk.Stack) map[string]any {
	t.Helper()
	var tmpl map[string]any
	Must(t, func() { tmpl = *assertions.Template_FromStack(stack, nil).ToJSON() })
	return tmpl
}

// assetHash matches the content hashes of assets, which change with every
// change of a handler's code or of the CDK's own assets.
var assetHash = regexp.MustCompile(`[0-9a-f]{64}`)

// Snapshot compares template with the golden file (a path relative to the
// test's package, such as "testdata/MyStack.template.json"), after masking
// asset hashes; with -update it writes the file instead. A difference fails
// t with a unified diff (golden → synthesized, three lines of context, as
// diff -u shows it) and the command that rewrites the file.
func Snapshot(t testing.TB, template map[string]any, golden string) {
	t.Helper()
	got, err := json.MarshalIndent(template, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = assetHash.ReplaceAll(append(got, '\n'), []byte("ASSET_HASH"))
	if *Update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
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
		t.Errorf("template differs from %s (- golden, + synthesized); if the change is intended, run go test with -update\n%s",
			golden, unifiedDiff(golden, "synthesized", string(want), string(got)))
	}
}
