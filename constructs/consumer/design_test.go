package consumer_test

import (
	"fmt"
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

// str is a string key attribute.
func str(name string) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
}

// designs is a stack with a consumer on a shared table of each design:
// the app's single table (its own key names, a sort key, its own TTL), the
// peer's layout (the record key in the sort key), an imported table whose
// design the props declare, and a fixed partition value with a '$'.
func designs(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{consumers: map[string]consumer.IdempotentConsumer{}}
	msg, panicked := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "designs"))
		if err != nil {
			panic(err)
		}
		f.stack = awscdk.NewStack(app, jsii.String("Designs"), nil)
		add := func(id string, change func(p *consumer.IdempotentConsumerProps)) {
			p := validProps()
			change(p)
			f.consumers[id] = consumer.NewIdempotentConsumer(f.stack, jsii.String(id), p)
		}
		single := awsdynamodb.NewTableV2(f.stack, jsii.String("Single"), &awsdynamodb.TablePropsV2{
			PartitionKey: str("PK"), SortKey: str("SK"), TimeToLiveAttribute: jsii.String("expiresAt"),
		})
		peer := awsdynamodb.NewTable(f.stack, jsii.String("Peer"), &awsdynamodb.TableProps{
			PartitionKey: str("id"), SortKey: str("sk"), TimeToLiveAttribute: jsii.String("ttl"),
		})
		add("Reserve", func(p *consumer.IdempotentConsumerProps) { p.Table, p.Namespace = single, jsii.String("reserve") })
		add("Email", func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.TableKeyInSortKey = peer, jsii.String("email"), jsii.Bool(true)
		})
		add("Imported", func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = awsdynamodb.Table_FromTableName(f.stack, jsii.String("Legacy"), jsii.String("legacy")), jsii.String("imported")
			p.TablePartitionKey, p.TableSortKey, p.TableFixedKeyValue, p.TableTTLAttribute = jsii.String("PK"), jsii.String("SK"), jsii.String("IDEMPOTENCY"), jsii.String("expires")
		})
		add("Fixed", func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.TableKeyInSortKey, p.TableFixedKeyValue = peer, jsii.String("fixed"), jsii.Bool(true), jsii.String("shared$")
		})
		f.template = assertions.Template_FromStack(f.stack, nil)
		f.annotations = assertions.Annotations_FromStack(f.stack)
	})
	if panicked {
		t.Fatal(msg)
	}
	return f
}

// TestASharedTableOfTheAppsOwnDesign: each consumer's handler is told its
// table's design (read from a table of the app, declared for an imported
// one), its role is scoped as far as the design lets IAM scope it, and a
// consumer whose record key is in the sort key is warned of what IAM
// cannot scope.
func TestASharedTableOfTheAppsOwnDesign(t *testing.T) {
	f := designs(t)
	var template map[string]any
	cdktest.Must(t, func() { template = *f.template.ToJSON() })
	resources := template["Resources"].(map[string]any)
	for _, tc := range []struct {
		consumer  string
		env       map[string]string // the design's variables; absent ones are left out
		condition map[string]any
		warning   string
	}{
		{"Reserve", map[string]string{contract.PartitionKeyVar: "PK", contract.SortKeyVar: "SK", contract.FixedKeyValueVar: "reserve", contract.TTLAttributeVar: "expiresAt"},
			onlyNamespace("reserve"), ""},
		{"Email", map[string]string{contract.PartitionKeyVar: "id", contract.SortKeyVar: "sk", contract.RecordKeyInVar: "sort", contract.FixedKeyValueVar: "idempotency#email"},
			onlyPartition("idempotency#email"), `holds this consumer's records in its sort key "sk", under the partition value "idempotency#email"`},
		{"Imported", map[string]string{contract.PartitionKeyVar: "PK", contract.SortKeyVar: "SK", contract.FixedKeyValueVar: "IDEMPOTENCY", contract.TTLAttributeVar: "expires"},
			onlyNamespace("imported"), ""},
		{"Fixed", map[string]string{contract.PartitionKeyVar: "id", contract.SortKeyVar: "sk", contract.RecordKeyInVar: "sort", contract.FixedKeyValueVar: "shared$"},
			onlyPartition("shared${$}"), `a consumer of another namespace given the same partition value can overwrite or delete this consumer's records`},
	} {
		t.Run(tc.consumer, func(t *testing.T) {
			c := f.consumers[tc.consumer]
			fn := resources[id(f, c.Function())].(map[string]any)["Properties"].(map[string]any)
			vars := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
			for _, v := range []string{contract.PartitionKeyVar, contract.SortKeyVar, contract.RecordKeyInVar, contract.FixedKeyValueVar, contract.TTLAttributeVar} {
				want, wanted := tc.env[v]
				if got, ok := vars[v]; ok != wanted || ok && got != want {
					t.Errorf("%s=%v (set: %t), want %q (set: %t)", v, got, ok, want, wanted)
				}
			}
			has(t, f, "AWS::IAM::Policy", map[string]any{
				"Roles": []any{ref(id(f, c.Role()))},
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Action":    []any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
					"Condition": assertions.Match_ObjectEquals(&tc.condition),
					"Effect":    "Allow",
				})})},
			})
			var warnings []string
			cdktest.Must(t, func() {
				for _, m := range *f.annotations.FindWarning(jsii.String("/Designs/"+tc.consumer), assertions.Match_StringLikeRegexp(jsii.String(core.WarnTablePartitionScope))) {
					//lint:ignore SA1019 the assertions API returns this type; there is no other.
					warnings = append(warnings, fmt.Sprint(m.Entry.Data))
				}
			})
			switch {
			case tc.warning == "" && len(warnings) > 0:
				t.Errorf("warned %q, want no warning of the partition's scope", warnings)
			case tc.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning)):
				t.Errorf("warnings %q, want one saying %q", warnings, tc.warning)
			}
		})
	}
}

// onlyPartition is the condition that scopes the item actions on the
// idempotency table to one partition value, exactly.
func onlyPartition(value string) map[string]any {
	return map[string]any{
		"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []any{value}},
		"Null":                      map[string]any{"dynamodb:LeadingKeys": "false"},
	}
}

// TestTableDesignRulesRefuse: a design the store cannot use, and props of
// a design that contradict the table or describe no table, are refused
// with the fix.
func TestTableDesignRulesRefuse(t *testing.T) {
	table := func(pk, sk *awsdynamodb.Attribute) awsdynamodb.ITable {
		stack := awscdk.NewStack(nil, jsii.String("Shared"), nil)
		return awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{PartitionKey: pk, SortKey: sk, TimeToLiveAttribute: jsii.String("ttl")})
	}
	failsWhen(t, []refusal{{
		name:   "a design's prop without a Table",
		change: func(p *consumer.IdempotentConsumerProps) { p.TableSortKey = jsii.String("SK") },
		want:   []string{"TableSortKey is set, but Table is not", `partition key "pk", no sort key, TTL on "ttl"`, "remove TableSortKey, or give the Table it describes"},
	}, {
		name: "a partition key that is not the table's",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.TablePartitionKey = table(str("PK"), nil), jsii.String("n"), jsii.String("pk")
		},
		want: []string{`TablePartitionKey is "pk", but the partition key of Table Shared/Table is "PK"`, "leave TablePartitionKey nil, or give \"PK\""},
	}, {
		name: "a sort key the table does not have",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.TableSortKey = table(str("pk"), nil), jsii.String("n"), jsii.String("SK")
		},
		want: []string{`TableSortKey is "SK", but the sort key of Table Shared/Table does not exist (the table has none)`},
	}, {
		name: "a numeric sort key",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = table(str("PK"), &awsdynamodb.Attribute{Name: jsii.String("SK"), Type: awsdynamodb.AttributeType_NUMBER}), jsii.String("n")
		},
		want: []string{"Table's key schema is [HASH PK (S), RANGE SK (N)], but the store writes string keys", "AttributeType_STRING"},
	}, {
		name: "a sort key named like a record's attribute",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = table(str("PK"), str("owner")), jsii.String("n")
		},
		want: []string{`TableSortKey "owner" is an attribute of the idempotency record`},
	}, {
		name: "the record key in the sort key of a table without one",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.TableKeyInSortKey = table(str("pk"), nil), jsii.String("n"), jsii.Bool(true)
		},
		want: []string{`TableRecordKeyIn is "sort" (TableKeyInSortKey), but TableSortKey is empty`},
	}, {
		name: "a fixed value without a sort key",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.TableFixedKeyValue = table(str("pk"), nil), jsii.String("n"), jsii.String("IDEMPOTENCY")
		},
		want: []string{`TableFixedKeyValue "IDEMPOTENCY" is given, but TableSortKey is empty`},
	}})
}

// A shop keeps its idempotency records in its own single table: partition
// key "PK", sort key "SK", TTL on "expiresAt". The construct reads that
// design from the table and passes it to the handler: ReserveStock's records
// are keyed PK "reserve#<key>", SK "reserve" (the namespace, the default
// TableFixedKeyValue), and its role is scoped to "reserve#*". EmailCustomer
// uses the peer's layout instead (TableKeyInSortKey): PK
// "idempotency#email", SK "email#<key>"; its role is scoped to that
// partition value, which a synth warning explains.
func ExampleIdempotentConsumerProps_singleTable() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Shop"), nil)
	single := awsdynamodb.NewTableV2(stack, jsii.String("Single"), &awsdynamodb.TablePropsV2{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("PK"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String("SK"), Type: awsdynamodb.AttributeType_STRING},
		TimeToLiveAttribute: jsii.String("expiresAt"),
	})
	reserve := consumer.NewIdempotentConsumer(stack, jsii.String("ReserveStock"), &consumer.IdempotentConsumerProps{
		Props: core.Props{Entry: jsii.String(handlerDir), Table: single, Namespace: jsii.String("reserve")},
	})
	email := consumer.NewIdempotentConsumer(stack, jsii.String("EmailCustomer"), &consumer.IdempotentConsumerProps{
		Props: core.Props{Entry: jsii.String(handlerDir), Table: single, Namespace: jsii.String("email"), TableKeyInSortKey: jsii.Bool(true)},
	})
	fmt.Println(*reserve.Namespace(), *email.Namespace(), "share", *reserve.Table().Node().Path())
	// Output:
	// reserve email share Shop/Single
}
