// Package stack builds the payments team's stack: a FIFO payments topic
// settled by one idempotent consumer, and the refunds queue the team already
// had, consumed by another in the team's VPC on x86_64. Both keep their
// idempotency records in one shared ledger table.
package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/contract"
)

// Payments is the stack and what a test or a larger app may reach.
type Payments struct {
	awscdk.Stack

	// Payments is the FIFO topic payments are published to, grouped by
	// merchant.
	Payments awssns.Topic
	// Refunds is the standard topic refunds are published to.
	Refunds awssns.Topic
	// RefundQueue is the team's queue of refunds, with RefundDLQ.
	RefundQueue, RefundDLQ awssqs.Queue
	// Ledger holds both consumers' idempotency records.
	Ledger awsdynamodb.Table
	// Balances holds the merchants' balances that Settle increments.
	Balances awsdynamodb.Table
	// Vpc is the team's network.
	Vpc awsec2.Vpc
	// Settle and Refund are the consumers.
	Settle, Refund consumer.IdempotentConsumer
}

// NewPayments builds the stack.
func NewPayments(scope constructs.Construct, id *string, props *awscdk.StackProps) *Payments {
	stack := awscdk.NewStack(scope, id, props)
	p := &Payments{Stack: stack}
	snsKey := awskms.Alias_FromAliasName(stack, jsii.String("SNSKey"), jsii.String("alias/aws/sns"))

	p.Payments = awssns.NewTopic(stack, jsii.String("PaymentsTopic"), &awssns.TopicProps{
		Fifo: jsii.Bool(true), ContentBasedDeduplication: jsii.Bool(true),
		MasterKey: snsKey, EnforceSSL: jsii.Bool(true),
	})
	p.Refunds = awssns.NewTopic(stack, jsii.String("RefundsTopic"), &awssns.TopicProps{MasterKey: snsKey, EnforceSSL: jsii.Bool(true)})

	table := func(id string) awsdynamodb.Table {
		return awsdynamodb.NewTable(stack, jsii.String(id), &awsdynamodb.TableProps{
			PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(contract.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
			BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
			TimeToLiveAttribute: jsii.String(contract.TTLAttribute),
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
				PointInTimeRecoveryEnabled: jsii.Bool(true),
			},
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		})
	}
	p.Ledger = table("Ledger")
	p.Balances = table("Balances")

	// The team's refunds queue, from before the construct: encrypted,
	// TLS only, with its dead-letter queue.
	p.RefundDLQ = awssqs.NewQueue(stack, jsii.String("RefundDLQ"), &awssqs.QueueProps{
		EnforceSSL: jsii.Bool(true), Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	p.RefundQueue = awssqs.NewQueue(stack, jsii.String("RefundQueue"), &awssqs.QueueProps{
		EnforceSSL: jsii.Bool(true), Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(6)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: p.RefundDLQ, MaxReceiveCount: jsii.Number(5)},
		// SQS's largest body: an SNS envelope can double a message.
		MaxMessageSizeBytes: jsii.Number(1048576),
	})

	// The team's VPC: private subnets without internet access; DynamoDB
	// through a gateway endpoint (the event source polls SQS from outside
	// the VPC; logs leave through Lambda).
	p.Vpc = awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
		MaxAzs:      jsii.Number(2),
		NatGateways: jsii.Number(0),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{{
			Name: jsii.String("private"), SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED,
		}},
		FlowLogs: &map[string]*awsec2.FlowLogOptions{"all": {}},
		GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
			"DynamoDB": {Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB()},
		},
	})

	// Relative entries resolve against this module's root.
	p.Settle = consumer.NewIdempotentConsumer(stack, jsii.String("Settle"), &consumer.IdempotentConsumerProps{
		Props: core.Props{Entry: jsii.String("cmd/settle"), Table: p.Ledger, Namespace: jsii.String("settle"), Environment: &map[string]*string{"BALANCES_TABLE": p.Balances.TableName()}, Dashboard: jsii.Bool(true)},
		Topic: p.Payments,
	})
	consumer.GrantTransactionalWrites(p.Balances, p.Settle)

	p.Refund = consumer.NewIdempotentConsumer(stack, jsii.String("Refund"), &consumer.IdempotentConsumerProps{
		Props: core.Props{Entry: jsii.String("cmd/refund"), Table: p.Ledger, Namespace: jsii.String("refund"), Timeout: awscdk.Duration_Minutes(jsii.Number(1)), Vpc: p.Vpc, VpcSubnets: &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED}, Architecture: awslambda.Architecture_X86_64(), Dashboard: jsii.Bool(true)},
		Topic: p.Refunds,
		Queue: p.RefundQueue,
	})
	return p
}
