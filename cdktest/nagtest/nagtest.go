// Package nagtest runs cdk-nag's rule packs in the tests of a Go CDK app and
// reads their findings and suppressions; it is apart from package cdktest so
// that importing the kit does not pull cdk-nag into an app that does not
// use it.
package nagtest

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
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
// (assertions.Annotations_FromStack, which synthesizes once).
func FindingsOf(a assertions.Annotations, pack string) Findings {
	match := assertions.Match_StringLikeRegexp(jsii.String(pack + "-.*"))
	return Findings{
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
