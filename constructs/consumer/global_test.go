package consumer_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// The table in two Regions (DESIGN.md, "Two Regions").

// mrsc is the GlobalTable of the tests: replicas in us-east-1 (which
// creates it) and us-east-2, the witness in us-west-2.
func mrsc() *core.GlobalTable {
	return &core.GlobalTable{Regions: jsii.Strings("us-east-1", "us-east-2"), WitnessRegion: jsii.String("us-west-2"), TableName: jsii.String("orders-idempotency")}
}

// regionStack is a stack of app in region, of one account.
func regionStack(app awscdk.App, id, region string) awscdk.Stack {
	return awscdk.NewStack(app, jsii.String(id), &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("111111111111"), Region: jsii.String(region)}})
}

// twoRegions synthesizes the consumer Charge, namespace "charge", on the
// MRSC table in the stacks of its two Regions, with entry as its handler,
// and returns both templates, or the panic's message.
func twoRegions(t *testing.T, name, entry string) (east1, east2 assertions.Template, msg string) {
	t.Helper()
	msg, _ = cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, name))
		if err != nil {
			panic(err)
		}
		stacks := []awscdk.Stack{regionStack(app, "East1", "us-east-1"), regionStack(app, "East2", "us-east-2")}
		for _, s := range stacks {
			consumer.NewIdempotentConsumer(s, jsii.String("Charge"), &consumer.IdempotentConsumerProps{
				Props: core.Props{Entry: jsii.String(entry), Namespace: jsii.String("charge"), GlobalTable: mrsc()},
			})
		}
		app.Synth(nil)
		east1, east2 = assertions.Template_FromStack(stacks[0], nil), assertions.Template_FromStack(stacks[1], nil)
	})
	return east1, east2, msg
}

// TestTheGlobalTableInEachRegion: the stack of the first Region creates the
// MRSC table (replica and witness, no TTL) and its sweeper; the stack of
// the other imports it by name, and its consumer's role is granted the
// records of its namespace on its own Region's replica; the two consumers
// share the namespace (one fact, deduplicated across Regions).
func TestTheGlobalTableInEachRegion(t *testing.T) {
	east1, east2, msg := twoRegions(t, "TwoRegions", handlerDir)
	if msg != "" {
		t.Fatal(msg)
	}
	cdktest.Must(t, func() {
		east1.ResourceCountIs(jsii.String("AWS::DynamoDB::GlobalTable"), jsii.Number(1))
		east1.HasResourceProperties(jsii.String("AWS::DynamoDB::GlobalTable"), map[string]any{
			"TableName":               "orders-idempotency",
			"MultiRegionConsistency":  "STRONG",
			"Replicas":                assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{"Region": "us-east-2"}), assertions.Match_ObjectLike(&map[string]any{"Region": "us-east-1"})}),
			"GlobalTableWitnesses":    []any{map[string]any{"Region": "us-west-2"}},
			"TimeToLiveSpecification": assertions.Match_Absent(),
		})
		east1.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(0))
		east2.ResourceCountIs(jsii.String("AWS::DynamoDB::GlobalTable"), jsii.Number(0))
		east2.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(0))
	})
	// The consumer of us-east-2: its records, on the us-east-2 replica.
	cdktest.Must(t, func() {
		east2.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(&map[string]any{
				"Action":    assertions.Match_ArrayWith(&[]any{"dynamodb:PutItem", "dynamodb:UpdateItem"}),
				"Resource":  "arn:aws:dynamodb:us-east-2:111111111111:table/orders-idempotency",
				"Condition": map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{"charge#*"}}, "Null": map[string]any{"dynamodb:LeadingKeys": "false"}},
			}),
		})}})
		east2.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{contract.TableVar: "orders-idempotency"})}})
	})
	// The sweeper: once, in the first Region.
	cdktest.Must(t, func() {
		east1.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Timeout":                      900,
			"ReservedConcurrentExecutions": 1,
			"Environment": map[string]any{"Variables": map[string]any{
				contract.TableVar: map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("ChargeGlobalTable"))}, contract.PartitionKeyVar: "pk", contract.TTLAttributeVar: "ttl",
			}},
		})
		east1.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{"ScheduleExpression": "rate(1 hour)", "State": "ENABLED"})
		east1.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
			map[string]any{
				"Action":   []any{"dynamodb:DeleteItem", "dynamodb:Scan"},
				"Effect":   "Allow",
				"Resource": map[string]any{"Fn::GetAtt": []any{assertions.Match_StringLikeRegexp(jsii.String("ChargeGlobalTable")), "Arn"}},
			},
		})}})
		east1.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": "Errors", "Threshold": 0, "Period": 3600})
		east2.ResourcePropertiesCountIs(jsii.String("AWS::Events::Rule"), map[string]any{"ScheduleExpression": "rate(1 hour)"}, jsii.Number(0))
	})
}

// TestAGlobalTableIsRefusedWhatMRSCLacks: the Regions MRSC allows, the
// table's name, and what MRSC does not support, each refused with its fix.
func TestAGlobalTableIsRefusedWhatMRSCLacks(t *testing.T) {
	global := func(regions []string, witness string) func(p *consumer.IdempotentConsumerProps) {
		return func(p *consumer.IdempotentConsumerProps) {
			p.GlobalTable = &core.GlobalTable{Regions: jsii.Strings(regions...), TableName: jsii.String("t")}
			if witness != "" {
				p.GlobalTable.WitnessRegion = jsii.String(witness)
			}
		}
	}
	appTable := func(props *awsdynamodb.TablePropsV2) awsdynamodb.TableV2 {
		stack := awscdk.NewStack(nil, jsii.String("Shared"), &awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String("us-east-1")}})
		props.PartitionKey = &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING}
		props.MultiRegionConsistency = awsdynamodb.MultiRegionConsistency_STRONG
		props.Replicas = &[]*awsdynamodb.ReplicaTableProps{{Region: jsii.String("us-east-2")}, {Region: jsii.String("us-west-2")}}
		return awsdynamodb.NewTableV2(stack, jsii.String("Table"), props)
	}
	failsWhen(t, []refusal{{
		name:   "two Regions and no witness",
		change: global([]string{"us-east-1", "us-east-2"}, ""),
		want:   []string{"the MRSC table spans 2 Regions (us-east-1, us-east-2), but DynamoDB deploys an MRSC global table in exactly 3: three replicas, or two and a witness; give GlobalTable.Regions three Regions, or two and a WitnessRegion"},
	}, {
		name:   "Regions of two sets",
		change: global([]string{"us-east-1", "eu-west-1"}, "us-west-2"),
		want:   []string{"the MRSC table's Regions (eu-west-1, us-east-1, us-west-2) span the Region sets EU and US, but an MRSC global table cannot span Region sets; give Regions of one set: US (us-east-1, us-east-2, us-west-2); EU (eu-west-1, eu-west-2, eu-west-3, eu-central-1); AP (ap-northeast-1, ap-northeast-2, ap-northeast-3)"},
	}, {
		name:   "a Region of no set",
		change: global([]string{"us-east-1", "us-east-2"}, "sa-east-1"),
		want:   []string{`Region "sa-east-1" is in no MRSC Region set, so DynamoDB cannot create the table there`},
	}, {
		name:   "a Region twice",
		change: global([]string{"us-east-1", "us-east-2"}, "us-east-2"),
		want:   []string{"the MRSC table names the Region us-east-2 twice"},
	}, {
		name: "no TableName for the table the construct creates",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.GlobalTable = &core.GlobalTable{Regions: jsii.Strings("us-east-1", "us-east-2", "us-west-2")}
		},
		want: []string{"GlobalTable.TableName is required without Table: the construct creates the table in the first of Regions, and the stacks of the other Regions import it by that name"},
	}, {
		name: "a table of the app declared",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.GlobalTable = appTable(&awsdynamodb.TablePropsV2{}), jsii.String("charge"), &core.GlobalTable{Regions: jsii.Strings("us-east-1", "us-east-2", "us-west-2")}
		},
		want: []string{"GlobalTable is set, but Table Shared/Table is defined in the app, and the construct reads its Regions and consistency; remove GlobalTable"},
	}, {
		name: "transactional tables",
		change: func(p *consumer.IdempotentConsumerProps) {
			global([]string{"us-east-1", "us-east-2", "us-west-2"}, "")(p)
			p.TransactionalTables = &[]awsdynamodb.ITable{awsdynamodb.Table_FromTableName(awscdk.NewStack(nil, jsii.String("B"), nil), jsii.String("Stock"), jsii.String("stock"))}
		},
		want: []string{"TransactionalTables is set, but the idempotency table is in multi-Region strong consistency (MRSC), which supports no transaction operations: every TransactWriteItems of the effect with its record would fail", "fix: run the effect without a transaction"},
	}, {
		name: "an MRSC table of the app with TTL",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = appTable(&awsdynamodb.TablePropsV2{TimeToLiveAttribute: jsii.String("ttl")}), jsii.String("charge")
		},
		want: []string{`Table Shared/Table has its TTL on "ttl", but DynamoDB does not support TTL on an MRSC global table, so the deployment fails; remove its TimeToLiveAttribute: the construct's sweeper deletes the records whose TTL attribute has passed`},
	}, {
		name: "an MRSC table of the app with a local secondary index",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = appTable(&awsdynamodb.TablePropsV2{
				SortKey:               &awsdynamodb.Attribute{Name: jsii.String("sk"), Type: awsdynamodb.AttributeType_STRING},
				LocalSecondaryIndexes: &[]*awsdynamodb.LocalSecondaryIndexProps{{IndexName: jsii.String("byDate"), SortKey: &awsdynamodb.Attribute{Name: jsii.String("date"), Type: awsdynamodb.AttributeType_STRING}}},
			}), jsii.String("charge")
		},
		want: []string{"Table Shared/Table has local secondary indexes (byDate), but DynamoDB does not support them on an MRSC global table, so the deployment fails; remove them"},
	}, {
		name: "an MRSC table of the app in other Regions than the three",
		change: func(p *consumer.IdempotentConsumerProps) {
			tb := appTable(&awsdynamodb.TablePropsV2{})
			tb.Node().DefaultChild().(awsdynamodb.CfnGlobalTable).SetGlobalTableWitnesses(&[]any{&awsdynamodb.CfnGlobalTable_GlobalTableWitnessProperty{Region: jsii.String("us-west-1")}})
			p.Table, p.Namespace = tb, jsii.String("charge")
		},
		want: []string{"the MRSC table spans 4 Regions"},
	}})
}

// TestAGlobalTableRunsInItsReplicasRegions: a stack in the witness's
// Region, or in no Region at synth, cannot tell its local replica.
func TestAGlobalTableRunsInItsReplicasRegions(t *testing.T) {
	for _, tc := range []struct {
		name, region string
		want         string
	}{
		{"the witness", "us-west-2", "the stack's Region us-west-2 is its witness, which serves no request (us-east-1, us-east-2): the function runs on the replica of its Region; deploy this stack in one of us-east-1, us-east-2"},
		{"another Region", "eu-west-1", "the stack's Region eu-west-1 is not one of its replicas' Regions"},
		{"no Region", "", "the idempotency table is an MRSC global table, but the stack S has no concrete Region, so the construct cannot tell which replica is local; give the stack its Region (awscdk.StackProps.Env)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, _ := cdktest.Panics(func() {
				app, err := cdktest.NewApp(filepath.Join(outRoot, "fails"))
				if err != nil {
					panic(err)
				}
				var env *awscdk.Environment
				if tc.region != "" {
					env = &awscdk.Environment{Region: jsii.String(tc.region)}
				}
				p := validProps()
				p.GlobalTable = mrsc()
				consumer.NewIdempotentConsumer(awscdk.NewStack(app, jsii.String("S"), &awscdk.StackProps{Env: env}), jsii.String("C"), p)
			})
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message does not contain %q:\n%s", tc.want, msg)
			}
		})
	}
}

// TestATransactionalHandlerIsRefusedOnAGlobalTable: the handler's
// bootstrap links a transactional effect, which MRSC cannot run.
func TestATransactionalHandlerIsRefusedOnAGlobalTable(t *testing.T) {
	_, _, msg := twoRegions(t, "TwoRegionsTx", txHandlerDir(t, "eventbridge"))
	want := `IdempotentConsumer "Charge": the handler makes transactional writes (its bootstrap links the library's transactional effect, which the StartTx, FromEnvTx and NewTx of sqsbatch, eventbridge, kinesis and dynamodbstream call), but the idempotency table is in multi-Region strong consistency (MRSC), which supports no transaction operations`
	if !strings.Contains(msg, want) {
		t.Errorf("message does not contain %q:\n%s", want, msg)
	}
}

// TestOneNamespacePerRegionOnAGlobalTable: the consumers of two Regions
// share their namespace on the MRSC table (TestTheGlobalTableInEachRegion),
// but two consumers of one Region may not.
func TestOneNamespacePerRegionOnAGlobalTable(t *testing.T) {
	msg, _ := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "fails"))
		if err != nil {
			panic(err)
		}
		stack := regionStack(app, "East2", "us-east-2")
		for _, id := range []string{"Charge", "Refund"} {
			consumer.NewIdempotentConsumer(stack, jsii.String(id), &consumer.IdempotentConsumerProps{
				Props: core.Props{Entry: jsii.String(handlerDir), Namespace: jsii.String("charge"),
					Table: awsdynamodb.TableV2_FromTableName(stack, jsii.String(id+"Table"), jsii.String("orders-idempotency")), GlobalTable: &core.GlobalTable{Regions: mrsc().Regions, WitnessRegion: mrsc().WitnessRegion}},
			})
		}
	})
	want := `Namespace "charge" on the table East2/RefundTable is the namespace of the consumer East2/Charge already`
	if !strings.Contains(msg, want) {
		t.Errorf("message does not contain %q:\n%s", want, msg)
	}
}
