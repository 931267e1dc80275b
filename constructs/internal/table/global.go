package table

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

// Replication is what the construct knows of a table's Regions: read from a
// table the app defines (a TableV2's AWS::DynamoDB::GlobalTable, or a
// Table's replicationRegions), or declared for an imported one.
type Replication struct {
	// Known: read or declared; an imported table without a declaration is
	// not (the other fields are empty).
	Known bool
	// Regions are the Regions of the replicas, sorted; one for a table
	// that is not replicated.
	Regions []string
	// Witness is the witness Region of an MRSC table with two replicas.
	Witness string
	// Strong: the table is in multi-Region strong consistency (MRSC).
	Strong bool
	// LocalIndexes are the names of its local secondary indexes.
	LocalIndexes []string
}

// Global says the table is replicated to more than one Region.
func (r Replication) Global() bool { return len(r.Regions) > 1 }

// ReplicationOf reads the Regions and consistency of a table the app
// defines; an imported table's are not Known.
func ReplicationOf(t awsdynamodb.ITable) Replication {
	stack := awscdk.Stack_Of(t)
	switch l1 := t.Node().DefaultChild().(type) {
	case awsdynamodb.CfnGlobalTable:
		r := Replication{Known: true, Strong: l1.MultiRegionConsistency() != nil && *l1.MultiRegionConsistency() == "STRONG"}
		for _, m := range resolved(stack, l1.Replicas()) {
			r.Regions = append(r.Regions, fmt.Sprint(m["region"]))
		}
		for _, m := range resolved(stack, l1.GlobalTableWitnesses()) {
			r.Witness = fmt.Sprint(m["region"])
		}
		for _, m := range resolved(stack, l1.LocalSecondaryIndexes()) {
			r.LocalIndexes = append(r.LocalIndexes, fmt.Sprint(m["indexName"]))
		}
		sort.Strings(r.Regions)
		return r
	case awsdynamodb.CfnTable:
		r := Replication{Known: true, Regions: []string{*stack.Region()}}
		for _, c := range *t.Node().Children() { // replicationRegions: a replica custom resource each
			if strings.HasPrefix(*c.Node().Id(), "Replica") {
				r.Regions = append(r.Regions, strings.TrimPrefix(*c.Node().Id(), "Replica"))
			}
		}
		for _, m := range resolved(stack, l1.LocalSecondaryIndexes()) {
			r.LocalIndexes = append(r.LocalIndexes, fmt.Sprint(m["indexName"]))
		}
		return r
	}
	return Replication{}
}

// resolved resolves v, a list of objects of a table's L1 (nil: none).
func resolved(stack awscdk.Stack, v any) []map[string]any {
	if v == nil {
		return nil
	}
	list, _ := stack.Resolve(v).([]any)
	var out []map[string]any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// NewGlobal creates, in scope with the given id, the table of idempotency
// records as a global table in multi-Region strong consistency: named
// name, in the stack's Region, replicated to replicas, with the witness
// witness ("" for none); on demand, the records' key, point-in-time
// recovery on every replica, removed by removal. It has no TTL (MRSC has
// none: a sweeper deletes the expired records).
func NewGlobal(scope constructs.Construct, id, name string, replicas []string, witness string, removal awscdk.RemovalPolicy) awsdynamodb.TableV2 {
	var rs []*awsdynamodb.ReplicaTableProps
	pitr := &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)}
	for _, r := range replicas {
		rs = append(rs, &awsdynamodb.ReplicaTableProps{Region: jsii.String(r), PointInTimeRecoverySpecification: pitr})
	}
	props := &awsdynamodb.TablePropsV2{
		TableName:                        jsii.String(name),
		PartitionKey:                     &awsdynamodb.Attribute{Name: jsii.String(schema.Key), Type: awsdynamodb.AttributeType_STRING},
		Billing:                          awsdynamodb.Billing_OnDemand(nil),
		MultiRegionConsistency:           awsdynamodb.MultiRegionConsistency_STRONG,
		Replicas:                         &rs,
		PointInTimeRecoverySpecification: pitr,
		Encryption:                       awsdynamodb.TableEncryptionV2_AwsManagedKey(),
		RemovalPolicy:                    removal,
	}
	if witness != "" {
		props.WitnessRegion = jsii.String(witness)
	}
	return awsdynamodb.NewTableV2(scope, jsii.String(id), props)
}

// ImportGlobal imports, in scope with the given id, the replica of the
// global table name in scope's stack's Region: its ARN is the local
// replica's, so a grant on it is on that Region's replica alone.
func ImportGlobal(scope constructs.Construct, id, name string) awsdynamodb.ITable {
	return awsdynamodb.TableV2_FromTableName(scope, jsii.String(id), jsii.String(name))
}

// sweepActions are what the sweeper of an MRSC table needs: read every
// item (Scan) and delete an expired one (DeleteItem, conditional on its TTL
// attribute).
var sweepActions = []*string{jsii.String("dynamodb:Scan"), jsii.String("dynamodb:DeleteItem")}

// GrantSweep lets grantee sweep table: Scan and DeleteItem on the table
// (the local replica's ARN), with no dynamodb:LeadingKeys condition (a
// Scan has no leading key, and the sweeper deletes what DynamoDB's TTL
// would delete of the records on a table of one Region: the expired records
// of every namespace), and the use of its customer-managed key if it has
// one.
func GrantSweep(table awsdynamodb.ITable, grantee awsiam.IGrantable) awsiam.Grant {
	g := table.Grant(grantee, sweepActions...)
	if k := table.EncryptionKey(); k != nil {
		k.Grant(grantee, keyActions...)
	}
	return g
}
