package table

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore/schema"
)

// itemActions are the item-level DynamoDB actions the guard uses. They are
// also what TransactWriteItems checks, item by item.
var itemActions = []*string{
	jsii.String("dynamodb:GetItem"),
	jsii.String("dynamodb:PutItem"),
	jsii.String("dynamodb:UpdateItem"),
	jsii.String("dynamodb:DeleteItem"),
	jsii.String("dynamodb:ConditionCheckItem"),
}

// transactionalActions are what a transactional effect needs on an item of
// another table it writes in the same TransactWriteItems.
var transactionalActions = []*string{
	jsii.String("dynamodb:PutItem"),
	jsii.String("dynamodb:UpdateItem"),
	jsii.String("dynamodb:DeleteItem"),
	jsii.String("dynamodb:ConditionCheckItem"),
}

// keyActions are what reading and writing items of a table encrypted with a
// customer-managed key needs on the key: the actions of CDK's
// grantReadWriteData, spelled out without wildcards.
var keyActions = []*string{
	jsii.String("kms:Decrypt"),
	jsii.String("kms:DescribeKey"),
	jsii.String("kms:Encrypt"),
	jsii.String("kms:GenerateDataKey"),
	jsii.String("kms:GenerateDataKeyWithoutPlaintext"),
	jsii.String("kms:ReEncryptFrom"),
	jsii.String("kms:ReEncryptTo"),
}

// New creates a table of idempotency records in scope with the given id:
// on demand, the records' key and TTL attribute, point-in-time recovery,
// encrypted with the AWS-managed key, removed by removal.
func New(scope constructs.Construct, id string, removal awscdk.RemovalPolicy) awsdynamodb.Table {
	return awsdynamodb.NewTable(scope, jsii.String(id), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(schema.Key), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(schema.TTL),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:    awsdynamodb.TableEncryption_AWS_MANAGED,
		RemovalPolicy: removal,
	})
}

// LeadingKeys is the IAM StringLike pattern of every partition key of the
// namespace: "<namespace>#*". A namespace holds neither of the characters
// StringLike reads as wildcards ('*', '?': the runtime contract refuses
// them, at synth and at init), and its '$' is written as IAM's literal form
// ${$}, so that no namespace reads as a policy variable or widens the
// pattern.
func LeadingKeys(namespace string) string {
	return strings.ReplaceAll(namespace, "$", "${$}") + "#*"
}

// Conditions are the IAM conditions that scope the item actions on a table
// to the items of namespace: every leading key of the request is one of the
// namespace ("ForAllValues:StringLike" on dynamodb:LeadingKeys), and the
// request has a leading key at all (ForAllValues holds for an empty set,
// hence the Null condition).
func Conditions(namespace string) map[string]any {
	return map[string]any{
		"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{LeadingKeys(namespace)}},
		"Null":                    map[string]any{"dynamodb:LeadingKeys": "false"},
	}
}

// GrantRecords lets grantee read and write the idempotency records of
// namespace in table, and no other item: the guard's item actions, under
// Conditions(namespace), and the use of the table's customer-managed key if
// it has one. The condition holds on a table of one consumer as on a shared
// one: it costs nothing, and with the scope of GrantTransactional, a
// consumer of the app can never write another's records.
func GrantRecords(table awsdynamodb.ITable, grantee awsiam.IGrantable, namespace string) awsiam.Grant {
	g := table.Grant(grantee, itemActions...)
	statements := g.PrincipalStatements()
	if statements == nil || len(*statements) == 0 {
		// A grant on a resource policy only (a table of another account):
		// the condition would not apply; refuse rather than grant it all.
		panic(fmt.Sprintf("idempotency table %s: the grant to the consumer has no statement on its role to scope to the namespace %q", *table.Node().Path(), namespace))
	}
	for _, st := range *statements {
		for k, v := range Conditions(namespace) {
			st.AddCondition(jsii.String(k), v)
		}
	}
	if k := table.EncryptionKey(); k != nil {
		k.Grant(grantee, keyActions...)
	}
	return g
}

// GrantTransactional lets grantee write items of table in the same
// TransactWriteItems as an idempotency record: PutItem, UpdateItem,
// DeleteItem and ConditionCheckItem, and the use of its customer-managed
// key if it has one. On a table that is also an idempotency table of the
// app, the grant never covers the records of another namespace claimed on
// it than own, the grantee's ("" for none; claims made later count:
// scopeTransactional).
func GrantTransactional(table awsdynamodb.ITable, grantee awsiam.IGrantable, own string) awsiam.Grant {
	g := table.Grant(grantee, transactionalActions...)
	if statements := g.PrincipalStatements(); statements != nil && len(*statements) > 0 {
		owner, ok := grantee.(constructs.IConstruct)
		if !ok {
			owner = table
		}
		scopeTransactional(table, *statements, own, owner)
	}
	if k := table.EncryptionKey(); k != nil {
		k.Grant(grantee, keyActions...)
	}
	return g
}

// Problems checks a shared table, as far as the app defines it (an
// imported table cannot be read at synth): its key schema must be the
// records' (a string partition key schema.Key, no sort key), and it must not
// be replicated to other regions unless acceptSingleRegion says the user
// accepts the guarantee of one region.
func Problems(table awsdynamodb.ITable, acceptSingleRegion bool) []string {
	var keys, attrs any
	replicas := 1
	switch l1 := table.Node().DefaultChild().(type) {
	case awsdynamodb.CfnTable:
		keys, attrs = l1.KeySchema(), l1.AttributeDefinitions()
		for _, c := range *table.Node().Children() { // replicationRegions: a replica custom resource each
			if strings.HasPrefix(*c.Node().Id(), "Replica") {
				replicas++
			}
		}
	case awsdynamodb.CfnGlobalTable:
		keys, attrs = l1.KeySchema(), l1.AttributeDefinitions()
		if list, ok := awscdk.Stack_Of(table).Resolve(l1.Replicas()).([]any); ok {
			replicas = len(list)
		}
	default:
		return nil
	}
	var out []string
	stack := awscdk.Stack_Of(table)
	types := map[string]string{}
	if list, ok := stack.Resolve(attrs).([]any); ok {
		for _, a := range list {
			if m, ok := a.(map[string]any); ok {
				types[fmt.Sprint(m["attributeName"])] = fmt.Sprint(m["attributeType"])
			}
		}
	}
	var keySchema []string
	if list, ok := stack.Resolve(keys).([]any); ok {
		for _, k := range list {
			if m, ok := k.(map[string]any); ok {
				name := fmt.Sprint(m["attributeName"])
				keySchema = append(keySchema, fmt.Sprintf("%s %s (%s)", m["keyType"], name, types[name]))
			}
		}
	}
	if want := fmt.Sprintf("HASH %s (S)", schema.Key); len(keySchema) != 1 || keySchema[0] != want {
		out = append(out, fmt.Sprintf("Table's key schema is [%s], but idempotency records need a string partition key named %q and no sort key (the store writes items keyed %q); give a table with that schema, or leave Table nil for a table of the construct's own",
			strings.Join(keySchema, ", "), schema.Key, schema.Key))
	}
	if replicas > 1 && !acceptSingleRegion {
		out = append(out, fmt.Sprintf("Table is replicated to %d regions: a global table settles concurrent writes by last writer wins, so two deliveries handled in two regions could both reserve a fact and run its effect, and the fencing of complete and release does not hold across regions; give a table of one region, or set AcceptSingleRegionGuarantee if every delivery of a fact is handled in one region (DESIGN.md, \"What the construct refuses\")", replicas))
	}
	return out
}
