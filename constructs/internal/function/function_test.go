package function_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/function"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// TestTheBlocksMakeAConsumerWithoutAQueue: a consumer of another source (no
// queue here: an HTTP endpoint, say) is the table, the function and the
// alarms of the blocks, composed without the SQS consumer's code: the
// function has the contract's environment and the table's name, and its
// role reads and writes its namespace's records alone.
func TestTheBlocksMakeAConsumerWithoutAQueue(t *testing.T) {
	assets := t.TempDir()
	if err := os.WriteFile(filepath.Join(assets, "bootstrap"), []byte("not run"), 0o755); err != nil {
		t.Fatal(err)
	}
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(t.TempDir())
		if err != nil {
			panic(err)
		}
		stack := awscdk.NewStack(app, jsii.String("S"), nil)
		records := table.New(stack, "Table", awscdk.RemovalPolicy_DESTROY)
		runtime := contract.Defaults(10 * time.Second)
		runtime.Namespace, runtime.Consumer, runtime.Table = "checkout", "S/Checkout", "placeholder"
		f := function.New(stack, function.Config{
			IDs:          function.IDs{LogGroup: "LogGroup", Role: "Role", Function: "Function", KeySecret: "KeySecret"},
			Kind:         "idempotent endpoint",
			Name:         "Checkout",
			AssetDir:     assets,
			Architecture: awslambda.Architecture_ARM_64(),
			MemorySize:   256,
			Timeout:      runtime.Timeout,
			Tracing:      awslambda.Tracing_ACTIVE,
			LogLevel:     awslambda.ApplicationLogLevel_INFO,
			LogRetention: awslogs.RetentionDays_ONE_WEEK,
			Environment:  map[string]*string{"OWN": jsii.String("x")},
			Runtime:      runtime,
			Table:        records,
			Suppressions: []nag.Rule{{ID: "Serverless-LambdaDLQ", Reason: "Invoked synchronously by the endpoint, which answers the caller."}},
		})
		function.SuppressWildcards(f.Role, awslambda.Tracing_ACTIVE, nil)
		h := monitor.Handler{Namespace: runtime.MetricsNamespace, Consumer: runtime.Consumer, Function: f.Function, Timeout: runtime.Timeout}
		monitor.NewAlarm(stack, "ErrorsAlarm", "Checkout: invocations failed.", h.Errors(nil), 0, nil)

		tmpl := assertions.Template_FromStack(stack, nil)
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Description": "Idempotent endpoint Checkout",
			"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{
				"OWN":                 "x",
				contract.NamespaceVar: "checkout",
				contract.TableVar:     map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("^Table"))},
			})},
		})
		tmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Action": []any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
				"Condition": map[string]any{
					"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{"checkout#*"}},
					"Null":                    map[string]any{"dynamodb:LeadingKeys": "false"},
				},
			})})},
		})
		tmpl.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(0))
		tmpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(1))
	})
}

// TestTxTablesAreGrantedOnceAndNamed: the tables of Config.TxTables and of
// a later Declare are each granted the transactional writes once (not when
// the caller granted them) and named, in order, in TxTablesVar; the
// idempotency table itself, when declared, gets a statement beside the
// records' scoped one, which excludes the records of the table's other
// namespaces.
func TestTxTablesAreGrantedOnceAndNamed(t *testing.T) {
	assets := t.TempDir()
	if err := os.WriteFile(filepath.Join(assets, "bootstrap"), []byte("not run"), 0o755); err != nil {
		t.Fatal(err)
	}
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(t.TempDir())
		if err != nil {
			panic(err)
		}
		stack := awscdk.NewStack(app, jsii.String("S"), nil)
		records := table.New(stack, "Table", awscdk.RemovalPolicy_DESTROY)
		stock := table.New(stack, "Stock", awscdk.RemovalPolicy_DESTROY)
		ledger := table.New(stack, "Ledger", awscdk.RemovalPolicy_DESTROY)
		runtime := contract.Defaults(10 * time.Second)
		runtime.Namespace, runtime.Consumer, runtime.Table = "reserve", "S/Reserve", "placeholder"
		f := function.New(stack, function.Config{
			IDs:          function.IDs{LogGroup: "LogGroup", Role: "Role", Function: "Function", KeySecret: "KeySecret"},
			Kind:         "idempotent consumer",
			Name:         "Reserve",
			AssetDir:     assets,
			Architecture: awslambda.Architecture_ARM_64(),
			MemorySize:   256,
			Timeout:      runtime.Timeout,
			Tracing:      awslambda.Tracing_DISABLED,
			LogLevel:     awslambda.ApplicationLogLevel_INFO,
			LogRetention: awslogs.RetentionDays_ONE_WEEK,
			Runtime:      runtime,
			Table:        records,
			TxTables:     []awsdynamodb.ITable{records, stock},
		})
		table.GrantTransactional(ledger, f.Function, "reserve")
		f.TxTables.Declare(ledger, false)
		// The records' table is the idempotency table of two consumers
		// (claimed after the grant): the function's declared grant on it
		// keeps off the other's records.
		for _, ns := range []string{"reserve", "email"} {
			if err := table.ClaimNamespace(constructs.NewConstruct(stack, jsii.String("Claim-"+ns)), records, contract.Settings{Namespace: ns}, ""); err != nil {
				panic(err)
			}
		}
		f.TxTables.Declare(stock, true) // once each
		if n := f.TxTables.Len(); n != 3 {
			t.Errorf("%d tables declared, want 3", n)
		}

		lid := func(c awsdynamodb.Table) string {
			return *stack.GetLogicalId(c.Node().DefaultChild().(awscdk.CfnElement))
		}
		ref := func(c awsdynamodb.Table) map[string]any { return map[string]any{"Ref": lid(c)} }
		arn := func(c awsdynamodb.Table) map[string]any { return map[string]any{"Fn::GetAtt": []any{lid(c), "Arn"}} }
		tmpl := assertions.Template_FromStack(stack, nil)
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{
				contract.TxTablesVar: map[string]any{"Fn::Join": []any{",", []any{ref(records), ref(stock), ref(ledger)}}},
			})},
		})
		tx := []any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
		tmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
			"PolicyDocument": map[string]any{"Statement": []any{
				map[string]any{"Action": []any{"logs:CreateLogStream", "logs:PutLogEvents"}, "Effect": "Allow", "Resource": assertions.Match_AnyValue()},
				map[string]any{
					"Action":    []any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
					"Condition": assertions.Match_ObjectLike(&map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{"reserve#*"}}}),
					"Effect":    "Allow",
					"Resource":  arn(records),
				},
				map[string]any{
					"Action":    tx,
					"Condition": map[string]any{"ForAllValues:StringNotLike": map[string]any{"dynamodb:LeadingKeys": []any{"email#*"}}},
					"Effect":    "Allow",
					"Resource":  arn(records),
				},
				map[string]any{"Action": tx, "Effect": "Allow", "Resource": []any{arn(ledger), arn(stock)}}, // merged, in CDK's order
			}},
		})
	})
}
