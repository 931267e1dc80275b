// Package nag writes cdk-nag suppressions as the resource metadata cdk-nag
// reads, without importing cdk-nag, for every construct of the family.
package nag

import (
	"encoding/base64"
	"fmt"
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The constructs write their cdk-nag suppressions as the resource metadata
// cdk-nag reads, without importing cdk-nag: an app that uses them
// does not get cdk-nag in its module graph, and one that runs cdk-nag's
// packs finds every suppression with its reason. The format is cdk-nag v2's
// (NagSuppressionHelper.toCfnFormat and addRulesToMetadata in
// lib/utils/nag-suppression-helper.ts, read in cdk-nag 2.38.2):
//
//	Metadata: {"cdk_nag": {"rules_to_suppress": [
//	    {"id": "AwsSolutions-IAM5", "reason": "…", "applies_to": ["Resource::*"]}]}}
//
// A reason holding any character above U+00FF is stored base64-encoded
// (UTF-8) with "is_reason_encoded": true; the rules already on a resource are
// kept, and a rule identical to one there is not added twice.

// MetadataKey is the metadata key cdk-nag reads suppressions from.
const MetadataKey = "cdk_nag"

// Rule is one cdk-nag suppression: the rule id, why it does not apply,
// and, for a granular rule, the findings it covers ("Resource::*").
type Rule struct {
	ID        string   `json:"id"`
	Reason    string   `json:"reason"`
	AppliesTo []string `json:"appliesTo,omitempty"`
}

// nagFindingInID is what cdk-nag refuses in a rule id: a finding, which
// belongs in applies_to.
var nagFindingInID = regexp.MustCompile(`\[.*\]`)

// Check returns what cdk-nag would refuse in the rule (it throws at
// synth): a reason under 10 characters, a finding in the id.
func (r Rule) Check() error {
	if len(r.Reason) < 10 {
		return fmt.Errorf("cdk-nag suppression %s: the reason %q is shorter than the 10 characters cdk-nag requires", r.ID, r.Reason)
	}
	if nagFindingInID.MatchString(r.ID) {
		return fmt.Errorf("cdk-nag suppression %s: the id holds a finding; give it in appliesTo", r.ID)
	}
	return nil
}

// cfn returns the rule as cdk-nag stores it in a template.
func (r Rule) cfn() map[string]any {
	out := map[string]any{"id": r.ID, "reason": r.Reason}
	if len(r.AppliesTo) > 0 {
		applies := make([]any, len(r.AppliesTo))
		for i, a := range r.AppliesTo {
			applies[i] = a
		}
		out["applies_to"] = applies
	}
	for _, c := range r.Reason {
		if c > 0xFF {
			out["reason"] = base64.StdEncoding.EncodeToString([]byte(r.Reason))
			out["is_reason_encoded"] = true
			break
		}
	}
	return out
}

// Suppress adds the rules to the cdk-nag metadata of scope's CloudFormation
// resource (its default child, or scope itself), and with children to those
// of every construct under scope, as cdk-nag's
// NagSuppressions.addResourceSuppressions does. Like it, it applies to the
// resources that exist when it is called.
func Suppress(scope constructs.IConstruct, children bool, rules ...Rule) {
	for _, r := range rules {
		if err := r.Check(); err != nil {
			panic(err) // the construct's own rules: a bug here, not the user's
		}
	}
	targets := []constructs.IConstruct{scope}
	if children {
		targets = *scope.Node().FindAll(constructs.ConstructOrder_PREORDER)
	}
	for _, t := range targets {
		var l1 constructs.IConstruct = t
		if d := t.Node().DefaultChild(); d != nil {
			l1 = d
		}
		if res, ok := l1.(awscdk.CfnResource); ok && *awscdk.CfnResource_IsCfnResource(l1) {
			res.AddMetadata(jsii.String(MetadataKey), merge(res.GetMetadata(jsii.String(MetadataKey)), rules))
		}
	}
}

// merge appends rules to the rules_to_suppress of existing (the
// resource's current cdk_nag metadata, which cdk-nag or this package wrote),
// leaving out a rule that is there already.
func merge(existing any, rules []Rule) map[string]any {
	var out []any
	seen := map[string]bool{}
	add := func(r any) {
		key := fmt.Sprintf("%v", r) // maps print with sorted keys
		if !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	if m, ok := existing.(map[string]any); ok {
		if list, ok := m["rules_to_suppress"].([]any); ok {
			for _, r := range list {
				add(r)
			}
		}
	}
	for _, r := range rules {
		add(r.cfn())
	}
	return map[string]any{"rules_to_suppress": out}
}
