package nag_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
)

func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// Golden is testdata/cdknag.json: rules, and the metadata cdk-nag's own
// NagSuppressions.addResourceSuppressions writes for them, written by
// internal/testkit/apptest's TestCDKNagWritesTheGoldenSuppressions (which imports
// cdk-nag; this package must not).
type Golden struct {
	Rules []nag.Rule `json:"rules"`
	// Earlier is the metadata of a resource that the app suppressed a rule
	// on before the construct.
	Earlier any `json:"earlier"`
	// Fresh is the metadata after the rules, added twice, on a resource
	// without suppressions; AfterEarlier on the resource with Earlier.
	Fresh        any `json:"fresh"`
	AfterEarlier any `json:"afterEarlier"`
}

// canonical is v as JSON with sorted keys.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(back)
	return string(b)
}

// TestSuppressWritesWhatCDKNagWrites: the metadata Suppress writes is the
// metadata cdk-nag writes for the same rules (the golden file), on a
// resource without suppressions and on one that has some already,
// including a reason cdk-nag stores base64-encoded and a granular rule, and
// a rule added twice is there once.
func TestSuppressWritesWhatCDKNagWrites(t *testing.T) {
	data, err := os.ReadFile("testdata/cdknag.json")
	if err != nil {
		t.Fatal(err)
	}
	var g Golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Rules) < 2 || g.Earlier == nil {
		t.Fatalf("golden file without rules: %s", data)
	}
	cdktest.Must(t, func() {
		stack := awscdk.NewStack(nil, jsii.String("S"), nil)
		for name, tc := range map[string]struct {
			earlier, want any
		}{"fresh": {nil, g.Fresh}, "after earlier": {g.Earlier, g.AfterEarlier}} {
			q := awssqs.NewQueue(stack, jsii.String(strings.ReplaceAll(name, " ", "")), nil)
			res := q.Node().DefaultChild().(awscdk.CfnResource)
			if tc.earlier != nil {
				res.AddMetadata(jsii.String(nag.MetadataKey), tc.earlier)
			}
			nag.Suppress(q, false, g.Rules...)
			nag.Suppress(q, false, g.Rules...)
			got := canonical(t, res.GetMetadata(jsii.String(nag.MetadataKey)))
			if want := canonical(t, tc.want); got != want {
				t.Errorf("%s:\n got %s\nwant %s", name, got, want)
			}
			if !strings.Contains(got, `"is_reason_encoded":true`) {
				t.Errorf("%s: the reason beyond Latin-1 is not encoded: %s", name, got)
			}
		}
	})
}

// TestCheckRefusesWhatCDKNagRefuses: a short reason or a finding in the id
// would make cdk-nag throw at synth; the constructs' own rules are checked
// when they are written.
func TestCheckRefusesWhatCDKNagRefuses(t *testing.T) {
	for _, r := range []nag.Rule{
		{ID: "AwsSolutions-IAM5", Reason: "short"},
		{ID: "AwsSolutions-IAM5[Resource::*]", Reason: "a finding belongs in applies_to"},
	} {
		if err := r.Check(); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	if err := (nag.Rule{ID: "AwsSolutions-IAM5", Reason: "long enough", AppliesTo: []string{"Resource::*"}}).Check(); err != nil {
		t.Error(err)
	}
}
