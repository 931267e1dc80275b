package table_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// stackOf is a stack of a new app.
func stackOf(t *testing.T) awscdk.Stack {
	app, err := cdktest.NewApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return awscdk.NewStack(app, jsii.String("S"), nil)
}

// consumerIn is a construct that stands for a consumer.
func consumerIn(stack awscdk.Stack, id string) constructs.Construct {
	return constructs.NewConstruct(stack, jsii.String(id))
}

// TestATableIsOneTableByItsName: a table the app creates with a literal
// TableName and an import of that name are one table, in either order of
// the claims, so one namespace on both is refused; a table without a
// literal name is known by its construct.
func TestATableIsOneTableByItsName(t *testing.T) {
	created := func(stack awscdk.Stack, name *string) awsdynamodb.ITable {
		return awsdynamodb.NewTable(stack, jsii.String("Created"), &awsdynamodb.TableProps{
			TableName:    name,
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(schema.Key), Type: awsdynamodb.AttributeType_STRING},
		})
	}
	imported := func(stack awscdk.Stack, _ *string) awsdynamodb.ITable {
		return awsdynamodb.Table_FromTableName(stack, jsii.String("Imported"), jsii.String("Shared"))
	}
	for name, order := range map[string][2]func(awscdk.Stack, *string) awsdynamodb.ITable{
		"created, then imported": {created, imported},
		"imported, then created": {imported, created},
	} {
		t.Run(name, func(t *testing.T) {
			cdktest.Must(t, func() {
				stack := stackOf(t)
				first, second := order[0](stack, jsii.String("Shared")), order[1](stack, jsii.String("Shared"))
				if err := table.ClaimNamespace(consumerIn(stack, "One"), first, contract.Settings{Namespace: "orders"}, ""); err != nil {
					t.Fatal(err)
				}
				err := table.ClaimNamespace(consumerIn(stack, "Two"), second, contract.Settings{Namespace: "orders"}, "")
				if err == nil || !strings.Contains(err.Error(), `Namespace "orders" on the table S/`) || !strings.Contains(err.Error(), "consumer S/One already") {
					t.Fatalf("second claim: %v; want the refusal naming S/One", err)
				}
			})
		})
	}
	t.Run("no literal name", func(t *testing.T) {
		cdktest.Must(t, func() {
			stack := stackOf(t)
			a, b := created(stack, nil), imported(stack, nil)
			if table.Key(a) == table.Key(b) || !strings.HasPrefix(table.Key(a), "construct ") {
				t.Errorf("keys %q and %q; want the created table known by its construct", table.Key(a), table.Key(b))
			}
			if err := table.ClaimNamespace(consumerIn(stack, "One"), a, contract.Settings{Namespace: "orders"}, ""); err != nil {
				t.Fatal(err)
			}
			if err := table.ClaimNamespace(consumerIn(stack, "Two"), b, contract.Settings{Namespace: "orders"}, ""); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// statementsOn are the statements of the stack's policies whose resource
// is arn (a template value, compared as JSON).
func statementsOn(t *testing.T, stack awscdk.Stack, arn any) []map[string]any {
	want, _ := json.Marshal(arn)
	var out []map[string]any
	for _, r := range *assertions.Template_FromStack(stack, nil).FindResources(jsii.String("AWS::IAM::Policy"), nil) {
		doc := (*r)["Properties"].(map[string]any)["PolicyDocument"].(map[string]any)
		for _, st := range doc["Statement"].([]any) {
			m := st.(map[string]any)
			if got, _ := json.Marshal(m["Resource"]); string(got) == string(want) {
				out = append(out, m)
			}
		}
	}
	return out
}

// TestTransactionalGrantsKeepOffOtherConsumersRecords: a transactional
// grant on an idempotency table of the app excludes the records of every
// other namespace claimed on it (ForAllValues:StringNotLike on
// dynamodb:LeadingKeys), claims made after the grant included, and not the
// grantee's own; granted to a grantee without a namespace, it excludes
// every one; on a business table (no claim) it has no condition; on an
// imported idempotency table, synth warns that consumers of other apps are
// not known.
func TestTransactionalGrantsKeepOffOtherConsumersRecords(t *testing.T) {
	cdktest.Must(t, func() {
		stack := stackOf(t)
		shared := table.New(stack, "Shared", awscdk.RemovalPolicy_DESTROY)
		business := table.New(stack, "Business", awscdk.RemovalPolicy_DESTROY)
		imported := awsdynamodb.Table_FromTableName(stack, jsii.String("Imported"), jsii.String("Elsewhere"))
		role := func(id string) awsiam.Role {
			return awsiam.NewRole(stack, jsii.String(id), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
		}
		wallet, admin, other := role("Wallet"), role("Admin"), role("Other")
		if err := table.ClaimNamespace(consumerIn(stack, "WalletConsumer"), shared, contract.Settings{Namespace: "wallet"}, ""); err != nil {
			t.Fatal(err)
		}
		table.GrantTransactional(shared, wallet, "wallet")
		table.GrantTransactional(shared, admin, "")
		table.GrantTransactional(business, wallet, "wallet")
		table.GrantTransactional(imported, other, "x")
		// Claimed after the grants: they count.
		for _, ns := range []string{"charge", "a$"} {
			if err := table.ClaimNamespace(consumerIn(stack, "Consumer-"+ns), shared, contract.Settings{Namespace: ns}, ""); err != nil {
				t.Fatal(err)
			}
		}
		if err := table.ClaimNamespace(consumerIn(stack, "ImportedConsumer"), imported, contract.Settings{Namespace: "x"}, ""); err != nil {
			t.Fatal(err)
		}

		arn := func(tb awsdynamodb.Table) any {
			return map[string]any{"Fn::GetAtt": []any{*stack.GetLogicalId(tb.Node().DefaultChild().(awscdk.CfnElement)), "Arn"}}
		}
		conditionOf := func(sts []map[string]any) map[string]any {
			if len(sts) != 1 {
				t.Fatalf("%d statements, want 1: %v", len(sts), sts)
			}
			c, _ := sts[0]["Condition"].(map[string]any)
			return c
		}
		sharedConds := map[string]bool{}
		for _, st := range statementsOn(t, stack, arn(shared)) {
			b, _ := json.Marshal(st["Condition"])
			sharedConds[string(b)] = true
		}
		for _, want := range []string{
			`{"ForAllValues:StringNotLike":{"dynamodb:LeadingKeys":["a${$}#*","charge#*"]}}`,            // the wallet's
			`{"ForAllValues:StringNotLike":{"dynamodb:LeadingKeys":["a${$}#*","charge#*","wallet#*"]}}`, // the admin's
		} {
			if !sharedConds[want] {
				t.Errorf("no statement on the shared table with the condition %s; have %v", want, sharedConds)
			}
		}
		if len(sharedConds) != 2 {
			t.Errorf("statements on the shared table with conditions %v; want exactly the two", sharedConds)
		}
		if c := conditionOf(statementsOn(t, stack, arn(business))); c != nil {
			t.Errorf("the business table's grant has the condition %v; want none", c)
		}
		importedArn := map[string]any{"Fn::Join": []any{"", []any{"arn:", map[string]any{"Ref": "AWS::Partition"}, ":dynamodb:", map[string]any{"Ref": "AWS::Region"}, ":", map[string]any{"Ref": "AWS::AccountId"}, ":table/Elsewhere"}}}
		if c := conditionOf(statementsOn(t, stack, importedArn)); c != nil {
			t.Errorf("the imported table's grant, whose one claim is the grantee's, has the condition %v; want none", c)
		}
		var warnings []string
		for _, m := range *assertions.Annotations_FromStack(stack).FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("transactionalTableImported"))) {
			//lint:ignore SA1019 the assertions API returns this type; there is no other (see cdktest.Findings).
			warnings = append(warnings, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
		}
		if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "/S/Other: ") || !strings.Contains(warnings[0], "the table S/Imported") {
			t.Errorf("warnings %q; want one, on S/Other, naming S/Imported", warnings)
		}
	})
}

// TestTransactionalGrantsKeepOffOtherPartitions: on a table whose records
// live in the sort key under a fixed partition value per consumer
// (contract.KeyInSort), a transactional grant excludes the other
// consumers' partition values, written literally (a '*' in one is no
// wildcard), not their namespaces' "<namespace>#*", which such a table
// never holds.
func TestTransactionalGrantsKeepOffOtherPartitions(t *testing.T) {
	cdktest.Must(t, func() {
		stack := stackOf(t)
		shared := table.New(stack, "Shared", awscdk.RemovalPolicy_DESTROY)
		wallet := awsiam.NewRole(stack, jsii.String("Wallet"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
		table.GrantTransactional(shared, wallet, "wallet")
		for ns, fixed := range map[string]string{"wallet": "idempotency#wallet", "charge": "idempotency#charge", "odd": "idem*odd"} {
			s := contract.Settings{Namespace: ns, TableRecordKeyIn: contract.KeyInSort, TableFixedKeyValue: fixed}
			if err := table.ClaimNamespace(consumerIn(stack, "Consumer-"+ns), shared, s, ""); err != nil {
				t.Fatal(err)
			}
		}
		arn := map[string]any{"Fn::GetAtt": []any{*stack.GetLogicalId(shared.Node().DefaultChild().(awscdk.CfnElement)), "Arn"}}
		sts := statementsOn(t, stack, arn)
		if len(sts) != 1 {
			t.Fatalf("%d statements, want 1: %v", len(sts), sts)
		}
		got, _ := json.Marshal(sts[0]["Condition"])
		if want := `{"ForAllValues:StringNotLike":{"dynamodb:LeadingKeys":["idempotency#charge","idem${*}odd"]}}`; string(got) != want {
			t.Errorf("condition %s, want %s", got, want)
		}
	})
}

// TestTransactionalGrantsInAStageAreScoped: a grant in a stack of a Stage
// of the app is scoped when the stage alone is synthesized (as
// assertions.Template_FromStack does), which visits none of the app's own
// aspects.
func TestTransactionalGrantsInAStageAreScoped(t *testing.T) {
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		stack := awscdk.NewStack(awscdk.NewStage(app, jsii.String("Prod"), nil), jsii.String("S"), nil)
		shared := table.New(stack, "Shared", awscdk.RemovalPolicy_DESTROY)
		role := awsiam.NewRole(stack, jsii.String("Wallet"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
		table.GrantTransactional(shared, role, "wallet")
		for _, ns := range []string{"wallet", "charge"} {
			if err := table.ClaimNamespace(consumerIn(stack, "Consumer-"+ns), shared, contract.Settings{Namespace: ns}, ""); err != nil {
				t.Fatal(err)
			}
		}
		sts := statementsOn(t, stack, map[string]any{"Fn::GetAtt": []any{*stack.GetLogicalId(shared.Node().DefaultChild().(awscdk.CfnElement)), "Arn"}})
		if got, _ := json.Marshal(sts); len(sts) != 1 || !strings.Contains(string(got), `"Condition":{"ForAllValues:StringNotLike":{"dynamodb:LeadingKeys":["charge#*"]}}`) {
			t.Errorf("statements on the shared table %s; want one, kept off charge's records", got)
		}
	})
}
