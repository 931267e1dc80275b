// Package cdktest holds what the CDK tests of this module share: an app with
// the feature flags of cdk.json, a guard that turns a jsii panic into a test
// failure, and the cdk-nag packs with a summary of their findings.
//
// jsii is a single Node.js process behind every call: tests that use this
// package must not call t.Parallel, and must call jsii.Close once, from
// TestMain.
package cdktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// ModuleRoot returns the directory holding go.mod, found from the working
// directory upwards (a test runs in its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Context returns the "context" of the module's cdk.json: the feature flags
// `cdk synth` uses, so that tests synthesize what the CLI would.
func Context() (map[string]any, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "cdk.json"))
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("cdk.json: %w", err)
	}
	if len(cfg.Context) == 0 {
		return nil, errors.New("cdk.json has no context")
	}
	return cfg.Context, nil
}

// NewApp returns an app with cdk.json's context that writes its cloud
// assembly under outdir.
func NewApp(outdir string) (awscdk.App, error) {
	ctx, err := Context()
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

// Panics runs f and reports whether it panicked, with the panic's message.
func Panics(f func()) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, panicked = fmt.Sprint(r), true
		}
	}()
	f()
	return "", false
}

// AddNagPacks applies cdk-nag's AwsSolutions and Serverless packs to scope
// and everything under it; their findings become annotations at synth time.
func AddNagPacks(scope constructs.IConstruct) {
	awscdk.Aspects_Of(scope).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	awscdk.Aspects_Of(scope).Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
}

// NagFindings are the unsuppressed findings of one cdk-nag pack in a stack,
// as "path: message" lines.
type NagFindings struct {
	Errors, Warnings []string
}

// Findings returns the findings of the rules whose ids start with pack
// ("AwsSolutions", "Serverless") in the annotations of a synthesized stack
// (assertions.Annotations_FromStack, which synthesizes once).
func Findings(a assertions.Annotations, pack string) NagFindings {
	match := assertions.Match_StringLikeRegexp(jsii.String(pack + "-.*"))
	return NagFindings{
		Errors:   lines(a.FindError(jsii.String("*"), match)),
		Warnings: lines(a.FindWarning(jsii.String("*"), match)),
	}
}

// Suppressions returns the cdk-nag suppressions in a synthesized template,
// as rule id → reasons, one per resource that carries it.
func Suppressions(template map[string]any) map[string][]string {
	out := map[string][]string{}
	resources, _ := template["Resources"].(map[string]any)
	for _, r := range resources {
		meta, _ := r.(map[string]any)["Metadata"].(map[string]any)
		nag, _ := meta["cdk_nag"].(map[string]any)
		rules, _ := nag["rules_to_suppress"].([]any)
		for _, rule := range rules {
			rule, _ := rule.(map[string]any)
			id, _ := rule["id"].(string)
			reason, _ := rule["reason"].(string)
			out[id] = append(out[id], reason)
		}
	}
	return out
}

// lines formats the messages Annotations.Find* return. Their Go type,
// cxapi.SynthesisMessage, is deprecated in favour of a type aws-cdk-go does
// not ship, and the assertions API still returns it.
//
//lint:ignore SA1019 the assertions API returns this type; there is no other.
func lines(msgs *[]*cxapi.SynthesisMessage) []string {
	var out []string
	for _, m := range *msgs {
		//lint:ignore SA1019 as above.
		out = append(out, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
	}
	return out
}
