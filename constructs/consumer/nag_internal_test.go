package consumer

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// TestSuppressWritesWhatCDKNagWrites: the metadata the construct writes is
// the metadata cdk-nag's own NagSuppressions writes for the same rules, on
// a resource without suppressions and on one that has some already,
// including a reason cdk-nag stores base64-encoded and a granular rule.
func TestSuppressWritesWhatCDKNagWrites(t *testing.T) {
	rules := []nagRule{
		{id: "AwsSolutions-SQS3", reason: "A dead-letter queue has no dead-letter queue of its own."},
		{id: "AwsSolutions-IAM5", reason: "Visibility ≥ 6 × timeout: a reason beyond Latin-1.", appliesTo: []string{"Resource::*"}},
	}
	var nagRules []*cdknag.NagPackSuppression
	for _, r := range rules {
		s := &cdknag.NagPackSuppression{Id: jsii.String(r.id), Reason: jsii.String(r.reason)}
		if r.appliesTo != nil {
			applies := []any{}
			for _, a := range r.appliesTo {
				applies = append(applies, jsii.String(a))
			}
			s.AppliesTo = &applies
		}
		nagRules = append(nagRules, s)
	}
	earlier := &cdknag.NagPackSuppression{Id: jsii.String("Serverless-SQSRedrivePolicy"), Reason: jsii.String("Suppressed by the app before the construct.")}

	stack := awscdk.NewStack(nil, jsii.String("S"), nil)
	metadata := func(q awssqs.Queue) string {
		m := q.Node().DefaultChild().(awscdk.CfnResource).GetMetadata(jsii.String(nagMetadataKey))
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, withEarlier := range []bool{false, true} {
		byNag := awssqs.NewQueue(stack, jsii.String("ByNag"+map[bool]string{true: "Earlier"}[withEarlier]), nil)
		byUs := awssqs.NewQueue(stack, jsii.String("ByUs"+map[bool]string{true: "Earlier"}[withEarlier]), nil)
		if withEarlier {
			cdknag.NagSuppressions_AddResourceSuppressions(byNag, &[]*cdknag.NagPackSuppression{earlier}, nil)
			cdknag.NagSuppressions_AddResourceSuppressions(byUs, &[]*cdknag.NagPackSuppression{earlier}, nil)
		}
		cdknag.NagSuppressions_AddResourceSuppressions(byNag, &nagRules, nil)
		suppress(byUs, false, rules...)
		// Twice: a rule already there is not added again.
		cdknag.NagSuppressions_AddResourceSuppressions(byNag, &nagRules, nil)
		suppress(byUs, false, rules...)
		if got, want := metadata(byUs), metadata(byNag); got != want {
			t.Errorf("with earlier suppressions %t:\n got %s\nwant %s", withEarlier, got, want)
		}
		if !strings.Contains(metadata(byUs), `"is_reason_encoded":true`) {
			t.Errorf("the reason beyond Latin-1 is not encoded: %s", metadata(byUs))
		}
	}
}

// TestSuppressRefusesWhatCDKNagRefuses: a short reason or a finding in the
// id would make cdk-nag throw at synth; the construct's own rules are
// checked when they are written.
func TestSuppressRefusesWhatCDKNagRefuses(t *testing.T) {
	for _, r := range []nagRule{
		{id: "AwsSolutions-IAM5", reason: "short"},
		{id: "AwsSolutions-IAM5[Resource::*]", reason: "a finding belongs in applies_to"},
	} {
		if err := r.check(); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}

// TestTheConstructDoesNotImportCDKNag: the construct writes cdk-nag's
// metadata itself, so that cdk-nag stays out of the module graph of the
// apps that use it (the tests may use cdk-nag: they are not in an app's
// build).
func TestTheConstructDoesNotImportCDKNag(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps ../... lists %d packages; the test is not looking at the construct", len(deps))
	}
	for _, p := range deps {
		if strings.Contains(p, "cdk-nag") {
			t.Errorf("the construct's packages depend on %s", p)
		}
	}
}
