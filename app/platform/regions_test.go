package platform_test

import (
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/app/platform"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
)

// regions is the platform in two Regions, synthesized once per test binary
// with both cdk-nag packs.
var regions struct {
	done      bool
	err       string
	stacks    map[string]awscdk.Stack
	templates map[string]assertions.Template
	// findings are each Region's cdk-nag findings, by pack.
	findings map[string]map[string]nagtest.Findings
}

func loadRegions(t *testing.T) {
	t.Helper()
	r := &regions
	if !r.done {
		r.done = true
		out, err := os.MkdirTemp("", "regions-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(out)
		r.err, _ = cdktest.Panics(func() {
			app, err := cdktest.NewApp(out)
			if err != nil {
				panic(err)
			}
			p := platform.NewRegions(app, "OrdersRegions", nil)
			nagtest.AddPacks(app)
			r.stacks = map[string]awscdk.Stack{platform.PrimaryRegion: p.Primary.Stack, platform.SecondaryRegion: p.Secondary.Stack}
			r.templates, r.findings = map[string]assertions.Template{}, map[string]map[string]nagtest.Findings{}
			for region, s := range r.stacks {
				r.templates[region] = assertions.Template_FromStack(s, nil)
				r.findings[region] = map[string]nagtest.Findings{}
				for _, pack := range []string{"AwsSolutions", "Serverless"} {
					r.findings[region][pack] = nagtest.FindingsOf(assertions.Annotations_FromStack(s), pack)
				}
			}
		})
	}
	if r.err != "" {
		t.Fatal(r.err)
	}
}

// TestRegionsSnapshot compares each Region's stack with its golden
// template; `go test ./app/platform -run RegionsSnapshot -update` rewrites
// them.
func TestRegionsSnapshot(t *testing.T) {
	loadRegions(t)
	for region, tpl := range regions.templates {
		cdktest.Snapshot(t, *tpl.ToJSON(), "testdata/OrdersRegions-"+region+".template.json")
	}
}

// TestRegionsCDKNag: both packs find nothing unsuppressed in either
// Region's stack, in the app and over the template read back.
func TestRegionsCDKNag(t *testing.T) {
	loadRegions(t)
	for region := range regions.stacks {
		for pack, got := range regions.findings[region] {
			if len(got.Errors)+len(got.Warnings) > 0 {
				t.Errorf("%s, %s: %d errors, %d warnings:\n%s", region, pack, len(got.Errors), len(got.Warnings), strings.Join(append(got.Errors, got.Warnings...), "\n"))
			}
		}
		findings, err := nagtest.CheckTemplate(*regions.templates[region].ToJSON(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for pack, got := range findings {
			t.Logf("%s, %s over the template: %d errors, %d warnings", region, pack, len(got.Errors), len(got.Warnings))
			if len(got.Errors)+len(got.Warnings) > 0 {
				t.Errorf("%s, %s over the template:\n%s", region, pack, strings.Join(append(got.Errors, got.Warnings...), "\n"))
			}
		}
	}
}

// TestRegionsShareOneStrongTable: the primary creates the MRSC table (a
// replica in each Region, the witness in a third) and the global endpoint
// with replication; ShipOrder runs in both Regions on the table, each on
// its own Region's replica.
func TestRegionsShareOneStrongTable(t *testing.T) {
	loadRegions(t)
	primary, secondary := regions.templates[platform.PrimaryRegion], regions.templates[platform.SecondaryRegion]
	cdktest.Must(t, func() {
		primary.HasResourceProperties(jsii.String("AWS::DynamoDB::GlobalTable"), map[string]any{
			"TableName": platform.ShipTableName, "MultiRegionConsistency": "STRONG",
			"Replicas":             assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{"Region": platform.SecondaryRegion}), assertions.Match_ObjectLike(&map[string]any{"Region": platform.PrimaryRegion})}),
			"GlobalTableWitnesses": []any{map[string]any{"Region": platform.WitnessRegion}},
		})
		secondary.ResourceCountIs(jsii.String("AWS::DynamoDB::GlobalTable"), jsii.Number(0))
		primary.HasResourceProperties(jsii.String("AWS::Events::Endpoint"), map[string]any{
			"ReplicationConfig": map[string]any{"State": "ENABLED"},
			"RoutingConfig":     map[string]any{"FailoverConfig": assertions.Match_ObjectLike(&map[string]any{"Secondary": map[string]any{"Route": platform.SecondaryRegion}})},
			"EventBuses":        assertions.Match_AnyValue(),
			"RoleArn":           assertions.Match_AnyValue(),
		})
		primary.ResourceCountIs(jsii.String("AWS::Route53::HealthCheck"), jsii.Number(1))
		for _, tpl := range []assertions.Template{primary, secondary} {
			tpl.HasResourceProperties(jsii.String("AWS::Events::EventBus"), map[string]any{"Name": platform.OrdersBusName})
			tpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{"EventPattern": map[string]any{"source": []any{"orders"}, "detail-type": []any{"OrderPlaced"}}})
		}
	})
}
