package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	idtable "github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
)

// GrantTransactionalWrites lets grantee write items of table in the same
// TransactWriteItems as an idempotency record, as an effect that is itself
// a DynamoDB write does (sqsbatch.StartTx): PutItem, UpdateItem, DeleteItem
// and ConditionCheckItem on that table, and the use of its key if it has a
// customer-managed one. It is shaped like aws-cdk-lib's grants, the
// resource's grant to a grantee (table.GrantWriteData(grantee)); the
// grantee is usually the consumer itself, an awsiam.IGrantable:
//
//	consumer.GrantTransactionalWrites(wallets, credit)
//
// Granted to the consumer (an IdempotentConsumer as NewIdempotentConsumer
// returns it), the table is also declared on it, as TransactionalTables
// declares one: its name is passed to the handler, which refuses a
// transactional write to a table not declared, and a handler that makes
// transactional writes with no table declared is refused at synth. Granted
// to anything else (the consumer's Function or Role), it is a grant only.
//
// The consumer's own shared Table can be granted too: the records' grant
// covers only the items of the consumer's namespace (dynamodb:LeadingKeys),
// and this one lets the effect write the table's other items. On a table
// that is an idempotency table of the app (any consumer's Table), the grant
// excludes the records of every other namespace claimed on it in the app
// (ForAllValues:StringNotLike on dynamodb:LeadingKeys, computed at synth, so
// consumers added later count): the effect may write business items and
// its own records, never another consumer's. Granted to anything but the
// consumer, it excludes every namespace claimed on the table. Consumers of
// other apps that import the table are not known: on an imported table,
// synth warns (idempotent-consumer:transactionalTableImported).
func GrantTransactionalWrites(table awsdynamodb.ITable, grantee awsiam.IGrantable) awsiam.Grant {
	own := ""
	c, isConsumer := grantee.(*idempotentConsumer)
	if isConsumer {
		own = c.namespace
	}
	g := idtable.GrantTransactional(table, grantee, own)
	if isConsumer {
		c.tx.Declare(table, false)
	}
	return g
}

func (c *idempotentConsumer) GrantPrincipal() awsiam.IPrincipal { return c.role.GrantPrincipal() }

func (c *idempotentConsumer) GrantPublish(grantee awsiam.IGrantable) awsiam.Grant {
	if c.topic == nil {
		panic(fmt.Sprintf("IdempotentConsumer %s: GrantPublish: the consumer's source is not a topic; grant its producers what its source needs (GrantPutEvents for an EventBridge rule, GrantSendMessages for direct producers)", *c.Node().Path()))
	}
	if !c.ownTopic {
		// A given topic may be encrypted with a customer-managed key:
		// CDK grants that key too.
		return c.topic.GrantPublish(grantee)
	}
	// The topic the construct creates is under alias/aws/sns, whose key
	// policy already lets the account's principals use it through SNS; an
	// IAM grant on the key would only be a wildcard on key/*.
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings("sns:Publish"),
		ResourceArns: jsii.Strings(*c.topic.TopicArn()),
	})
}
