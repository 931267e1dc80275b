package consumer

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
)

// familyKind is the queue consumer, to the family's core.
var familyKind = family.Kind{
	Name:        "IdempotentConsumer",
	Noun:        "idempotent consumer",
	FunctionID:  ids.Function,
	Timeout:     family.DefaultTimeout,
	ReservedWhy: ", or leave it nil for none",
	InvokedBy:   "The function is only invoked synchronously, by the SQS event-source mapping; a message it fails MaxReceiveCount times moves to the queue's dead-letter queue by the queue's redrive policy.",
	TxGrant:     "consumer.GrantTransactionalWrites",
}

// addTable creates the table of idempotency records unless one is given.
func (c *idempotentConsumer) addTable(s *settings) {
	c.table = s.Table
	if c.table == nil {
		// Claimed like a shared table (which NewIdempotentConsumer claims
		// first, to refuse a namespace taken), so that a transactional grant
		// on it to another grantee keeps off this consumer's records.
		c.table = s.NewTable(c)
	}
}

// addFunction creates the function, its log group and role, its
// environment (the runtime contract, and the key secret with HashKeys), its
// rights on the table, and the tables of TransactionalTables, granted and
// named to the handler.
func (c *idempotentConsumer) addFunction(s *settings, assetDir string) {
	f := s.NewFunction(c, assetDir, c.table)
	c.function, c.role, c.logGroup, c.keySecret, c.tx = f.Function, f.Role, f.LogGroup, f.KeySecret, f.TxTables
}

// addEventSource connects the queue to the function, with partial batch
// responses: ReceiveMessage, DeleteMessage, ChangeMessageVisibility and
// GetQueueAttributes on the queue (and kms:Decrypt on its key).
func (c *idempotentConsumer) addEventSource(s *settings) {
	c.function.AddEventSource(awslambdaeventsources.NewSqsEventSource(c.queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(s.batchSize),
		MaxBatchingWindow:       s.batchingWindow,
		MaxConcurrency:          s.maxConcurrency,
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	// The event-source mapping is the child of the function that
	// AddEventSource just created.
	for _, child := range *c.function.Node().Children() {
		if esm, ok := child.(awslambda.EventSourceMapping); ok {
			nag.Suppress(esm, true,
				nag.Rule{ID: "Serverless-LambdaEventSourceMappingDestination", Reason: "An on-failure destination only applies to stream and Kafka event sources; for SQS the queue's redrive policy moves failed messages to the dead-letter queue."})
		}
	}
}
