// Package report reads the validation report that a failed synthesis
// writes, for package cdktest (which adds its findings to a panic's message)
// and package nagtest (which returns cdk-nag's findings from it).
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Violation is one entry of the validation report that a synthesis writes
// when it fails validation: an error annotation (a cdk-nag error, under the
// feature flag @aws-cdk/core:annotationsInValidationReport that `cdk init`
// sets), a warning beside it, or a policy validation plugin's finding.
type Violation struct {
	// Rule is the report's rule name, such as
	// "Annotation::error-annotation".
	Rule string
	// Severity is "error" or "warning" (a plugin may say more).
	Severity string
	// Message is the annotation or the rule's description, such as
	// "AwsSolutions-SQS4: The SQS queue does not require requests to use
	// SSL. …".
	Message string
	// Path is the construct path of the violating construct, such as
	// "Shop/Orders/Resource".
	Path string
}

// String is the violation as a failed test lists it.
func (v Violation) String() string { return fmt.Sprintf("%s /%s: %s", v.Severity, v.Path, v.Message) }

// reportPath finds the report's file in jsii's message of a failed
// synthesis: "ValidationFailed: Validation failed. A copy of this report can
// be found in: /…/validation-report.json".
var reportPath = regexp.MustCompile(`found in: (\S*validation-report\.json)`)

// Read reads the validation report that a failed synthesis names in its
// panic message msg (as cdktest.Panics returns it), and reports false when
// msg is no validation failure or the report cannot be read.
func Read(msg string) ([]Violation, bool) {
	m := reportPath.FindStringSubmatch(msg)
	if m == nil {
		return nil, false
	}
	data, err := os.ReadFile(m[1])
	if err != nil {
		return nil, false
	}
	var report struct {
		PluginReports []struct {
			Violations []struct {
				RuleName            string `json:"ruleName"`
				Description         string `json:"description"`
				Severity            string `json:"severity"`
				ViolatingConstructs []struct {
					ConstructPath string `json:"constructPath"`
				} `json:"violatingConstructs"`
			} `json:"violations"`
		} `json:"pluginReports"`
	}
	if json.Unmarshal(data, &report) != nil {
		return nil, false
	}
	var out []Violation
	for _, p := range report.PluginReports {
		for _, v := range p.Violations {
			for _, c := range v.ViolatingConstructs {
				out = append(out, Violation{Rule: v.RuleName, Severity: v.Severity, Message: strings.TrimSpace(v.Description), Path: c.ConstructPath})
			}
		}
	}
	return out, true
}

// Explain adds to a jsii panic message what a validation failure's report
// says, so that a failed test shows the findings and not only the report's
// file name.
func Explain(msg string) string {
	violations, ok := Read(msg)
	if !ok {
		return msg
	}
	var sb strings.Builder
	sb.WriteString(msg)
	for _, v := range violations {
		sb.WriteString("\n  ")
		sb.WriteString(v.String())
	}
	for _, v := range violations {
		if v.Rule == "Annotation::error-annotation" {
			sb.WriteString("\n(an error annotation, such as cdk-nag's, fails the synthesis under the feature flag " +
				"@aws-cdk/core:annotationsInValidationReport: snapshot an app without cdk-nag's packs, and read their findings " +
				"with nagtest.Check or nagtest.NoFindings in an app of their own)")
			break
		}
	}
	return sb.String()
}
