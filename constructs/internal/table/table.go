package table

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
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
	return literal(namespace) + "#*"
}

// literal writes s for an IAM condition value: its '$' as ${$}, so that no
// part of it reads as a policy variable.
func literal(s string) string { return strings.ReplaceAll(s, "$", "${$}") }

// Conditions are the IAM conditions that scope the item actions on a table
// to the items of the consumer whose runtime settings are s, as far as the
// table's design lets IAM tell them apart: the request has a leading key at
// all (ForAllValues holds for an empty set, hence the Null condition), and
// every leading key of the request (dynamodb:LeadingKeys, the partition
// key's values) is
//   - one of the namespace's, "<namespace>#*" ("ForAllValues:StringLike"),
//     where the record key is the partition key (s.TableRecordKeyIn is
//     contract.KeyInPartition): the consumer's own records and no other;
//   - the partition value s.TableFixedKeyValue, exactly
//     ("ForAllValues:StringEquals"), where the record key is in the sort
//     key: IAM sees no sort key, so a consumer is scoped to its partition,
//     and consumers that share one can write each other's records.
func Conditions(s contract.Settings) map[string]any {
	match := map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{LeadingKeys(s.Namespace)}}}
	if s.TableRecordKeyIn == contract.KeyInSort {
		match = map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []any{literal(s.TableFixedKeyValue)}}}
	}
	match["Null"] = map[string]any{"dynamodb:LeadingKeys": "false"}
	return match
}

// GrantRecords lets grantee read and write the idempotency records of the
// consumer whose runtime settings are s in table, and no other item that
// the table's design lets IAM tell apart: the guard's item actions, under
// Conditions(s), and the use of the table's customer-managed key if it has
// one. The condition holds on a table of one consumer as on a shared one:
// it costs nothing, and with the scope of GrantTransactional, a consumer of
// the app can never write another's records.
func GrantRecords(table awsdynamodb.ITable, grantee awsiam.IGrantable, s contract.Settings) awsiam.Grant {
	g := table.Grant(grantee, itemActions...)
	statements := g.PrincipalStatements()
	if statements == nil || len(*statements) == 0 {
		// A grant on a resource policy only (a table of another account):
		// the condition would not apply; refuse rather than grant it all.
		panic(fmt.Sprintf("idempotency table %s: the grant to the consumer has no statement on its role to scope to the namespace %q", *table.Node().Path(), s.Namespace))
	}
	for _, st := range *statements {
		for k, v := range Conditions(s) {
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

// Keys is the key schema of a table, as the construct can read it.
type Keys struct {
	// Known: the app defines the table, so its key schema is read; an
	// imported table's is not (the other fields are empty).
	Known bool
	// Partition and Sort are the names of the partition and sort key
	// attributes (Sort empty without a sort key), PartitionType and
	// SortType their attribute types ("S", "N", "B").
	Partition, PartitionType, Sort, SortType string
}

// String writes the key schema as a message gives it: "[HASH PK (S),
// RANGE SK (S)]".
func (k Keys) String() string {
	parts := []string{fmt.Sprintf("HASH %s (%s)", k.Partition, k.PartitionType)}
	if k.Sort != "" {
		parts = append(parts, fmt.Sprintf("RANGE %s (%s)", k.Sort, k.SortType))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// KeysOf reads the key schema of a table the app defines (a Table or a
// TableV2); an imported table's is not Known.
func KeysOf(table awsdynamodb.ITable) Keys {
	var keys, attrs any
	switch l1 := table.Node().DefaultChild().(type) {
	case awsdynamodb.CfnTable:
		keys, attrs = l1.KeySchema(), l1.AttributeDefinitions()
	case awsdynamodb.CfnGlobalTable:
		keys, attrs = l1.KeySchema(), l1.AttributeDefinitions()
	default:
		return Keys{}
	}
	stack := awscdk.Stack_Of(table)
	types := map[string]string{}
	if list, ok := stack.Resolve(attrs).([]any); ok {
		for _, a := range list {
			if m, ok := a.(map[string]any); ok {
				types[fmt.Sprint(m["attributeName"])] = fmt.Sprint(m["attributeType"])
			}
		}
	}
	k := Keys{Known: true}
	if list, ok := stack.Resolve(keys).([]any); ok {
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				name := fmt.Sprint(m["attributeName"])
				switch m["keyType"] {
				case "HASH":
					k.Partition, k.PartitionType = name, types[name]
				case "RANGE":
					k.Sort, k.SortType = name, types[name]
				}
			}
		}
	}
	return k
}

// Problems checks a shared table, as far as the app defines it (an
// imported table cannot be read at synth): its keys must be strings, which
// the store writes (their names are the runtime contract's to check:
// contract.Settings.Problems), and it must not be a global table in
// eventual consistency unless singleWritingRegion says every record is
// written in one Region. A table in strong consistency (MRSC) is accepted;
// its own limits are the family's rules.
func Problems(table awsdynamodb.ITable, singleWritingRegion bool) []string {
	r := ReplicationOf(table)
	if !r.Known {
		return nil
	}
	var out []string
	if k := KeysOf(table); k.PartitionType != "S" || k.Sort != "" && k.SortType != "S" {
		out = append(out, fmt.Sprintf("Table's key schema is %s, but the store writes string keys (the record key \"<namespace>#<key>\", and a sort key's fixed value): give a table whose partition key, and sort key if it has one, are strings (awsdynamodb.AttributeType_STRING), or leave Table nil for a table of the construct's own",
			k))
	}
	if r.Global() && !r.Strong && !singleWritingRegion {
		out = append(out, EventualProblem(*table.Node().Path(), r.Regions))
	}
	return out
}

// EventualProblem is the refusal of a global table in multi-Region
// eventual consistency (MREC) as the idempotency table: why (the double
// effect) and the fix.
func EventualProblem(path string, regions []string) string {
	return fmt.Sprintf("Table %s is a global table in multi-Region eventual consistency (MREC) across %d Regions (%s): DynamoDB checks a conditional write against the local Region's copy only and settles concurrent writes by last writer wins, so two deliveries of one fact handled in two Regions can both reserve it before either write replicates, and its effect runs twice (and the fencing of complete and release does not hold across Regions); fix: make the table multi-Region strongly consistent (MultiRegionConsistency STRONG on its TableV2, or GlobalTable on the construct), or set SingleWritingRegion if every record of this construct is written in one Region (DESIGN.md, \"Two Regions\")",
		path, len(regions), strings.Join(regions, ", "))
}
