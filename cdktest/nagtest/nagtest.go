// Package nagtest runs cdk-nag's rule packs in the tests of a Go CDK app and
// reads their findings and suppressions; it is apart from package cdktest so
// that importing the kit does not pull cdk-nag into an app that does not
// use it.
//
// A nag test builds the app in an app of its own (cdktest.NewApp), applies
// the packs and checks the stack:
//
//	nagtest.AddPacks(app)
//	nagtest.NoFindings(t, stack)
//
// cdk-nag reports its errors as error annotations, and under the feature
// flag @aws-cdk/core:annotationsInValidationReport (which `cdk init` sets)
// an error annotation fails the synthesis: Check reads such a failure's
// validation report and returns its findings like any other. For the same
// reason, snapshot a stack in an app without the packs.
package nagtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cloudformationinclude"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/report"
)

// AddPacks applies cdk-nag's AwsSolutions and Serverless packs to scope and
// everything under it; their findings become annotations at synth time.
func AddPacks(scope constructs.IConstruct) {
	awscdk.Aspects_Of(scope).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	awscdk.Aspects_Of(scope).Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
}

// Findings are the unsuppressed findings of one cdk-nag pack in a stack, as
// "path: message" lines.
type Findings struct {
	Errors, Warnings []string
}

// FindingsOf returns the findings of the rules whose ids start with pack
// ("AwsSolutions", "Serverless") in the annotations of a synthesized stack
// (assertions.Annotations_FromStack, which synthesizes once, and panics
// when a cdk-nag error fails the synthesis: Check reads that case too).
func FindingsOf(a assertions.Annotations, pack string) Findings {
	match := assertions.Match_StringLikeRegexp(jsii.String(pack + "-.*"))
	return Findings{
		Errors:   lines(a.FindError(jsii.String("*"), match)),
		Warnings: lines(a.FindWarning(jsii.String("*"), match)),
	}
}

// Check synthesizes the app of stack and returns, by pack name
// ("AwsSolutions", "Serverless"), the unsuppressed findings of every
// cdk-nag pack applied to the stack or to a scope above it (AddPacks). It
// does not panic: a synthesis that fails because of cdk-nag's errors (see
// the package documentation) yields the findings of its validation report,
// and any other jsii error is returned, as is a stack that no pack checks.
func Check(stack awscdk.Stack) (map[string]Findings, error) {
	var packs []string
	var path string // the stack's construct path, which its findings' paths start with
	if msg, panicked := cdktest.Panics(func() { packs, path = packsOf(stack), *stack.Node().Path() }); panicked {
		return nil, errors.New(msg)
	}
	if len(packs) == 0 {
		return nil, fmt.Errorf("no cdk-nag pack checks the stack %s: call nagtest.AddPacks(app) before the first synthesis", path)
	}
	var annotations assertions.Annotations
	msg, panicked := cdktest.Panics(func() { annotations = assertions.Annotations_FromStack(stack) })
	out := map[string]Findings{}
	if panicked {
		violations, ok := report.Read(msg)
		if !ok {
			return nil, fmt.Errorf("synthesize %s: %s", path, msg)
		}
		for _, pack := range packs {
			var f Findings
			for _, v := range violations {
				if !strings.HasPrefix(v.Message, pack+"-") || (v.Path != path && !strings.HasPrefix(v.Path, path+"/")) {
					continue
				}
				line := "/" + v.Path + ": " + v.Message
				if v.Severity == "error" {
					f.Errors = append(f.Errors, line)
				} else {
					f.Warnings = append(f.Warnings, line)
				}
			}
			out[pack] = f
		}
		return out, nil
	}
	for _, pack := range packs {
		var f Findings
		if msg, panicked := cdktest.Panics(func() { f = FindingsOf(annotations, pack) }); panicked {
			return nil, fmt.Errorf("read the %s findings of %s: %s", pack, path, msg)
		}
		out[pack] = f
	}
	return out, nil
}

// NoFindings fails t unless every cdk-nag pack applied to stack (AddPacks)
// finds nothing unsuppressed, listing each finding; a synthesis error fails
// t too. It is the whole nag test of an app.
func NoFindings(t testing.TB, stack awscdk.Stack) {
	t.Helper()
	findings, err := Check(stack)
	if err != nil {
		t.Fatal(err)
	}
	packs := make([]string, 0, len(findings))
	for pack := range findings {
		packs = append(packs, pack)
	}
	sort.Strings(packs)
	for _, pack := range packs {
		f := findings[pack]
		if n := len(f.Errors) + len(f.Warnings); n > 0 {
			t.Errorf("cdk-nag %s: %d errors, %d warnings (fix them, or suppress each with its reason: cdknag.NagSuppressions_AddResourceSuppressions):\n%s",
				pack, len(f.Errors), len(f.Warnings), strings.Join(append(append([]string(nil), f.Errors...), f.Warnings...), "\n"))
		}
	}
}

// packsOf returns the names of the cdk-nag packs applied to stack or to a
// scope above it.
func packsOf(stack awscdk.Stack) []string {
	var names []string
	for _, scope := range *stack.Node().Scopes() {
		for _, a := range *awscdk.Aspects_Of(scope).All() {
			if p, ok := a.(cdknag.NagPack); ok {
				names = append(names, *p.ReadPackName())
			}
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
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

// CheckTemplate returns the findings of both packs (AddPacks) over a
// synthesized template, read back as CloudFormation (a CfnInclude of it in
// an app of its own, whose cloud assembly goes to outdir): every resource
// is then an L1 of its type, so the rules apply to what CDK writes as a
// plain CfnResource too (CDK's own helpers, such as the bucket-notifications
// handler), which the packs skip in the app. The template's cdk_nag
// metadata, the suppressions with their reasons, applies as in the app.
func CheckTemplate(template map[string]any, outdir string) (map[string]Findings, error) {
	b, err := json.Marshal(withoutBootstrap(template))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outdir, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(outdir, "included.template.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return nil, err
	}
	var stack awscdk.Stack
	if msg, panicked := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outdir, "out"))
		if err != nil {
			panic(err)
		}
		stack = awscdk.NewStack(app, jsii.String("Included"), nil)
		cloudformationinclude.NewCfnInclude(stack, jsii.String("Template"), &cloudformationinclude.CfnIncludeProps{TemplateFile: jsii.String(file)})
		AddPacks(app)
	}); panicked {
		return nil, errors.New(msg)
	}
	return Check(stack)
}

// withoutBootstrap is template without the bootstrap version's parameter
// and rule, which the stack that includes it adds itself.
func withoutBootstrap(template map[string]any) map[string]any {
	out := maps.Clone(template)
	for section, name := range map[string]string{"Parameters": "BootstrapVersion", "Rules": "CheckBootstrapVersion"} {
		if m, ok := out[section].(map[string]any); ok {
			m = maps.Clone(m)
			delete(m, name)
			if out[section] = m; len(m) == 0 {
				delete(out, section)
			}
		}
	}
	return out
}
